"""`OfflineChatModel`: a deterministic, explainable chat model that needs no key. Typed tasks
(`memoir.llm.providers`) run their offline implementation on the request, never on a prompt; a
plain chat call is answered as conversation, and no structured output is given for a prompt.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict, Field

from memoir.embeddings import Embedder, get_local_embedder
from memoir.llm.offline_writer import reply_to_messages

__all__ = ["NO_STRUCTURED_OUTPUT", "OfflineChatModel"]

NO_STRUCTURED_OUTPUT = (
    "OfflineChatModel answers typed requests only: ask through memoir.llm.providers.ask, "
    "which runs the task's offline implementation on the request (no prompt is parsed)"
)


class OfflineChatModel(BaseChatModel):
    """Deterministic rules + embeddings behind the chat-model interface."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    embedder: Any = Field(default=None, exclude=True, description="An Embedder; default local.")
    embedder_factory: Any = Field(default=None, exclude=True, description="Builds the embedder.")

    @property
    def _llm_type(self) -> str:
        return "memoir-offline"

    def get_embedder(self) -> Embedder:
        """The embedder given at construction, else built by the factory, else the local model."""
        if self.embedder is None:
            self.embedder = (self.embedder_factory or get_local_embedder)()
        return cast(Embedder, self.embedder)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = reply_to_messages(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def with_structured_output(
        self, schema: dict[str, Any] | type, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """Refused with the reason: structured answers come from typed requests."""
        raise NotImplementedError(NO_STRUCTURED_OUTPUT)

"""`OfflineChatModel`: a deterministic, explainable chat model that needs no key.

It parses the same rendered prompts that `ChatOpenAI` reads (formats in `memoir.llm.prompts`):

- `invoke(messages)` answers the last human message as conversation (the reply writer itself
  takes a typed request: `memoir.responder`);
- `with_structured_output(schema)` returns a Runnable that produces an instance of `schema`,
  dispatching on the schema's name. Triage, the preference updater and the memory engine's
  calls take typed requests instead (`memoir.triage`, `memoir.preference_update`,
  `memoir.memory.llm_calls`).

Other modules may teach it more schemas with `register_offline_skill`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

from memoir.embeddings import Embedder, get_local_embedder
from memoir.llm.offline_writer import reply_to_messages

__all__ = ["OfflineChatModel", "OfflineSkill", "offline_skills", "register_offline_skill"]

OfflineSkill = Callable[[list[BaseMessage], "OfflineChatModel"], BaseModel]

_SKILLS: dict[str, OfflineSkill] = {}


def register_offline_skill(schema_name: str, skill: OfflineSkill) -> None:
    """Teach the offline model to produce `schema_name` (the pydantic class name)."""
    _SKILLS[schema_name] = skill


def offline_skills() -> list[str]:
    """The schema names the offline model can produce."""
    return sorted(_SKILLS)


class OfflineChatModel(BaseChatModel):
    """Deterministic rules + embeddings behind the chat-model interface."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    embedder: Any = Field(default=None, exclude=True, description="An Embedder; default local.")

    @property
    def _llm_type(self) -> str:
        return "memoir-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {}

    def get_embedder(self) -> Embedder:
        """The embedder given at construction, else the bundled local model."""
        if self.embedder is None:
            self.embedder = get_local_embedder()
        embedder: Embedder = self.embedder
        return embedder

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = reply_to_messages(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def structured_output(self, messages: list[BaseMessage], schema: type[BaseModel]) -> BaseModel:
        """Run the skill for `schema` on `messages` directly."""
        skill = _SKILLS.get(schema.__name__)
        if skill is None:
            raise NotImplementedError(
                f"OfflineChatModel has no skill for {schema.__name__}; known: {offline_skills()}. "
                "Register one with memoir.llm.offline.register_offline_skill."
            )
        result = skill(messages, self)
        if not isinstance(result, schema):
            result = schema.model_validate(result.model_dump())
        return result

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """A Runnable producing an instance of `schema` (a pydantic class) from messages."""
        kwargs.pop("method", None)
        kwargs.pop("strict", None)
        if kwargs:
            raise ValueError(f"unsupported arguments {sorted(kwargs)}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError("OfflineChatModel.with_structured_output needs a pydantic class")
        model_cls: type[BaseModel] = schema

        def run(model_input: LanguageModelInput) -> dict[str, Any] | BaseModel:
            messages = self._convert_input(model_input).to_messages()
            parsed = self.structured_output(messages, model_cls)
            if include_raw:
                raw = AIMessage(content=json.dumps(parsed.model_dump(mode="json")))
                return {"raw": raw, "parsed": parsed, "parsing_error": None}
            return parsed

        async def arun(model_input: LanguageModelInput) -> dict[str, Any] | BaseModel:
            # Embedding (and the first model load) is CPU work: keep it off the event loop.
            return await asyncio.to_thread(run, model_input)

        return RunnableLambda(run, afunc=arun, name=f"offline_{model_cls.__name__}")

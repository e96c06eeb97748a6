"""Chat models: `offline` (deterministic, no key) or `openai` (any OpenAI-compatible endpoint).

llm = get_chat_model(settings)
decision = await structured(llm, TriageDecision).ainvoke(messages)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, SecretStr

from memoir.llm.offline import OfflineChatModel
from memoir.llm.scripted import ScriptedCall, ScriptedChatModel, ScriptExhausted

if TYPE_CHECKING:
    from memoir.settings import Settings

__all__ = [
    "LLMConfigError",
    "OfflineChatModel",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedChatModel",
    "get_chat_model",
    "structured",
]

T = TypeVar("T", bound=BaseModel)


class LLMConfigError(ValueError):
    """The chat model cannot be built from the settings (e.g. openai without a key)."""


def get_chat_model(settings: Settings) -> BaseChatModel:
    """The chat model `settings.llm_provider` names: ChatOpenAI (temperature 0) or offline."""
    if settings.llm_provider == "openai":
        if not settings.openai_api_key:
            raise LLMConfigError(
                "MEMOIR_LLM_PROVIDER=openai needs OPENAI_API_KEY. Set it (any non-empty value "
                "for a local OpenAI-compatible server given by OPENAI_BASE_URL), or use "
                "MEMOIR_LLM_PROVIDER=offline, which needs no key."
            )
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=settings.llm_model,
            api_key=SecretStr(settings.openai_api_key),
            base_url=settings.openai_base_url,
            temperature=0,
        )
    if settings.llm_provider == "offline":
        from memoir.embeddings import get_embedder

        # Built on first use: the offline model may never need one.
        return OfflineChatModel(embedder_factory=lambda: get_embedder(settings))
    raise LLMConfigError(f"unknown MEMOIR_LLM_PROVIDER {settings.llm_provider!r}")


def _free_form(node: Any) -> bool:
    """Whether a JSON schema (node) has a free-form object, which OpenAI's strict mode refuses."""
    if isinstance(node, list):
        return any(_free_form(v) for v in node)
    if not isinstance(node, dict):
        return False
    extra = node.get("additionalProperties") not in (None, False)
    return (node.get("type") == "object" and extra) or any(_free_form(v) for v in node.values())


def structured(llm: BaseChatModel, schema: type[T]) -> Runnable[LanguageModelInput, T]:
    """`llm` answering with instances of `schema`. OpenAI's strict mode refuses free-form objects
    (`PlanStep.args: dict[str, Any]`): such a schema is sent non-strict and validated here."""
    from langchain_openai import ChatOpenAI

    if not isinstance(llm, ChatOpenAI):
        return cast(Runnable[LanguageModelInput, T], llm.with_structured_output(schema))
    json_schema = schema.model_json_schema()
    if not _free_form(json_schema):
        answer = llm.with_structured_output(schema, method="json_schema")
        return cast(Runnable[LanguageModelInput, T], answer)
    loose = {
        "name": schema.__name__,
        "description": (schema.__doc__ or schema.__name__).strip(),
        "schema": json_schema,
        "strict": False,
    }
    raw = llm.with_structured_output(loose, method="json_schema")
    validate = RunnableLambda(schema.model_validate, name=f"validate_{schema.__name__}")
    return cast(Runnable[LanguageModelInput, T], raw | validate)

"""`ScriptedChatModel`: a chat model for tests that answers from a script and records every call.

    llm = ScriptedChatModel(responses={"Plan": [Plan(...), {"intent": "x"}]}, replies=["Done!"])

Structured calls consume `responses[schema name]` in order (instances, dicts validated into the
schema, exceptions raised, or callables given the messages); plain calls consume `replies`.
When a script runs out, the call goes to an `OfflineChatModel` (`on_exhausted="fallback"`, the
default: typed providers then answer offline, a plain call is answered as conversation) or raises
`ScriptExhausted` (`on_exhausted="raise"`). `calls` lists what the model saw.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from memoir.llm.offline import NO_STRUCTURED_OUTPUT, OfflineChatModel
from memoir.text import message_text

__all__ = ["ScriptExhausted", "ScriptedCall", "ScriptedChatModel"]


_RAN_OUT = object()  # a script's end, where the call falls back to the offline model


class ScriptExhausted(RuntimeError):
    """A scripted model was called more often than its script allows."""


@dataclass(frozen=True)
class ScriptedCall:
    """One call: the schema's name (None for a plain reply) and the messages the model saw."""

    schema: str | None
    messages: list[BaseMessage]

    @property
    def text(self) -> str:
        """All message texts joined, handy for `in` assertions."""
        return "\n\n".join(message_text(m) for m in self.messages)

    def __contains__(self, fragment: object) -> bool:
        """`"feed the cat" in call`: whether any message contains the text."""
        return isinstance(fragment, str) and fragment in self.text


class ScriptedChatModel(BaseChatModel):
    """Answers from a script, records every call, falls back to the offline model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: dict[str, list[Any]] = Field(default_factory=dict)
    replies: list[str] = Field(default_factory=list)
    on_exhausted: Literal["fallback", "raise"] = "fallback"
    fallback: Any = Field(default_factory=OfflineChatModel, exclude=True)

    _calls: list[ScriptedCall] = PrivateAttr(default_factory=list)
    _positions: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @field_validator("responses", mode="before")
    @classmethod
    def _schema_names(cls, value: Any) -> Any:
        """Accept schema classes as keys too."""
        if isinstance(value, dict):
            return {k.__name__ if isinstance(k, type) else k: list(v) for k, v in value.items()}
        return value

    @property
    def _llm_type(self) -> str:
        return "memoir-scripted"

    def script(self, schema: str | type, *responses: Any) -> ScriptedChatModel:
        """Append answers for `schema` (a name or a class); returns self for chaining."""
        name = schema.__name__ if isinstance(schema, type) else schema
        with self._lock:
            self.responses.setdefault(name, []).extend(responses)
        return self

    def reply(self, *texts: str) -> ScriptedChatModel:
        """Append plain replies; returns self for chaining."""
        with self._lock:
            self.replies.extend(texts)
        return self

    def schemas_called(self) -> list[str]:
        """The schema name of every structured call so far, in order."""
        return [c.schema for c in self._calls if c.schema is not None]

    @property
    def calls(self) -> list[ScriptedCall]:
        """Every call so far, in order."""
        return list(self._calls)

    def calls_for(self, schema: str | type | None) -> list[ScriptedCall]:
        """The calls for one schema (a name or a class; None for plain replies)."""
        name = schema.__name__ if isinstance(schema, type) else schema
        return [c for c in self._calls if c.schema == name]

    def remaining(self, schema: str | type | None = None) -> int:
        """How many scripted answers are left for `schema` (None: plain replies)."""
        name = schema.__name__ if isinstance(schema, type) else schema
        key = name or ""
        script = self.replies if name is None else self.responses.get(key, [])
        return len(script) - self._positions.get(key, 0)

    def fallback_model(self) -> OfflineChatModel:
        """The offline model that answers once a script has run out."""
        return cast(OfflineChatModel, self.fallback)

    def _next(self, schema: str | None, script: list[Any], messages: list[BaseMessage]) -> Any:
        """The call recorded; its next item (an exception raised, a callable called) or _RAN_OUT."""
        self.record(schema, messages)
        with self._lock:
            position = self._positions.get(schema or "", 0)
            if position < len(script):
                self._positions[schema or ""] = position + 1
        if position >= len(script) and self.on_exhausted == "raise":
            what = f"{schema} response" if schema else "reply"
            raise ScriptExhausted(f"no scripted {what} left (after {len(script)})")
        item = script[position] if position < len(script) else _RAN_OUT
        if isinstance(item, BaseException):
            raise item
        return item(messages) if callable(item) and not isinstance(item, type) else item

    def record(self, schema: str | None, messages: list[BaseMessage]) -> None:
        """Record a call (typed providers record the prompt they answered offline)."""
        with self._lock:
            self._calls.append(ScriptedCall(schema, list(messages)))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if (item := self._next(None, self.replies, messages)) is _RAN_OUT:
            return self.fallback_model()._generate(messages, stop=stop, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(item)))])

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """A Runnable answering with the next scripted item for `schema` (options ignored)."""
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError("ScriptedChatModel.with_structured_output needs a pydantic class")
        model_cls: type[BaseModel] = schema
        name = model_cls.__name__

        def run(model_input: LanguageModelInput) -> dict[str, Any] | BaseModel:
            messages = self._convert_input(model_input).to_messages()
            item = self._next(name, self.responses.get(name, []), messages)
            if item is _RAN_OUT:
                raise NotImplementedError(
                    f"no scripted {name} response left; {NO_STRUCTURED_OUTPUT}"
                )
            if isinstance(item, model_cls):
                return item
            return model_cls.model_validate(
                item.model_dump() if isinstance(item, BaseModel) else item
            )

        return RunnableLambda(run, name=f"scripted_{name}")

"""A span per model call (`gen_ai.*` attributes), around `memoir.llm.providers.ask` / `write`.

    @llm_span("chat")
    async def ask(llm, schema, request, *, render, offline): ...

The span names the task (the answer's schema, or `reply`), the provider and the model; token
usage comes from the chat model's LangChain callbacks when it reports any (a LangChain configure
hook adds `_UsageHandler` to every model run inside the span). Prompts and answers are recorded
only when `MEMOIR_OTEL_CAPTURE_CONTENT` is on.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from pydantic import BaseModel

from memoir.telemetry.metrics import INSTRUMENTS
from memoir.telemetry.options import OPTIONS, TRACER_NAME

P = ParamSpec("P")
R = TypeVar("R")

_tracer = trace.get_tracer(TRACER_NAME)


class _UsageHandler(BaseCallbackHandler):
    """Adds a model run's token usage and response model to the span it runs under."""

    def __init__(self, span: Span, system: str) -> None:
        self.span = span
        self.system = system
        self.input_tokens = 0
        self.output_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
                if usage:
                    self.input_tokens += int(usage.get("input_tokens", 0))
                    self.output_tokens += int(usage.get("output_tokens", 0))
        model = (response.llm_output or {}).get("model_name")
        if model:
            self.span.set_attribute("gen_ai.response.model", str(model))
        if self.input_tokens or self.output_tokens:
            self.span.set_attribute("gen_ai.usage.input_tokens", self.input_tokens)
            self.span.set_attribute("gen_ai.usage.output_tokens", self.output_tokens)


_usage_handler: ContextVar[_UsageHandler | None] = ContextVar("memoir_llm_usage", default=None)
register_configure_hook(_usage_handler, inheritable=True)


def provider_name(llm: BaseChatModel) -> str:
    """`gen_ai.provider.name`: openai for OpenAI-compatible endpoints, else Memoir's own."""
    kind = llm._llm_type
    if "openai" in kind:
        return "openai"
    return kind.replace("-", ".")  # memoir.offline, memoir.scripted


def model_name(llm: BaseChatModel) -> str:
    """The requested model's name (the provider's kind for Memoir's own models)."""
    for attribute in ("model_name", "model"):
        value = getattr(llm, attribute, None)
        if isinstance(value, str) and value:
            return value
    return llm._llm_type


def llm_span(
    operation: str,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorate `ask(llm, schema, request, ...)` or `write(llm, request, ...)` with a span."""

    def decorate(call: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(call)
        async def traced(*args: P.args, **kwargs: P.kwargs) -> R:
            llm, task, request = _call_parts(args)
            system = provider_name(llm)
            attributes = {
                "gen_ai.operation.name": operation,
                "gen_ai.provider.name": system,
                "gen_ai.system": system,
                "gen_ai.request.model": model_name(llm),
                "memoir.llm.task": task,
            }
            name = f"{operation} {attributes['gen_ai.request.model']} {task}"
            with _tracer.start_as_current_span(
                name, kind=SpanKind.CLIENT, attributes=attributes
            ) as span:
                if OPTIONS.capture_content and span.is_recording():
                    _record_input(span, kwargs.get("render"), request)
                handler = _UsageHandler(span, system)
                token = _usage_handler.set(handler)
                try:
                    answer = await call(*args, **kwargs)
                except Exception as error:
                    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
                    raise
                finally:
                    _usage_handler.reset(token)
                    _count_tokens(handler, attributes)
                if OPTIONS.capture_content and span.is_recording():
                    span.set_attribute("gen_ai.output.messages", _output_json(answer))
                return answer

        return traced

    return decorate


def _call_parts(args: tuple[Any, ...]) -> tuple[BaseChatModel, str, Any]:
    """(llm, task name, request) of `ask(llm, schema, request)` or `write(llm, request)`."""
    llm = args[0]
    if len(args) >= 3 and isinstance(args[1], type):
        return llm, args[1].__name__, args[2]
    return llm, "reply", args[1] if len(args) > 1 else None


def _record_input(span: Span, render: Any, request: Any) -> None:
    """The rendered prompt as `gen_ai.input.messages` (role + content, JSON)."""
    try:
        messages: list[BaseMessage] = render(request) if callable(render) else []
    except Exception:  # the call itself will raise it; the span only records
        return
    rendered = [{"role": m.type, "content": m.content} for m in messages]
    span.set_attribute("gen_ai.input.messages", json.dumps(rendered, ensure_ascii=False))


def _output_json(answer: Any) -> str:
    if isinstance(answer, BaseModel):
        return answer.model_dump_json()
    return json.dumps([{"role": "assistant", "content": str(answer)}], ensure_ascii=False)


def _count_tokens(handler: _UsageHandler, attributes: dict[str, str]) -> None:
    """LLM tokens by kind (input/output), provider and model, when the model reported any."""
    labels = {
        "gen_ai.provider.name": attributes["gen_ai.provider.name"],
        "gen_ai.request.model": attributes["gen_ai.request.model"],
    }
    if handler.input_tokens:
        INSTRUMENTS.llm_tokens.add(handler.input_tokens, {**labels, "gen_ai.token.type": "input"})
    if handler.output_tokens:
        INSTRUMENTS.llm_tokens.add(handler.output_tokens, {**labels, "gen_ai.token.type": "output"})

"""Spans for tool calls and memory decisions, with their counters.

with tool_call(request) as call:          # activities/steps.py: execute_step
    call.done(await tools.execute(request))

with memory_decision("semantic") as decision:   # memoir/memory/engine.py
    result = await memory_hotpath(...)
    decision.record(result.action, [o.action for o in result.outcomes])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from memoir.models import ExecuteRequest, ExecutionResult
from memoir.telemetry.metrics import INSTRUMENTS
from memoir.telemetry.options import TRACER_NAME

_tracer = trace.get_tracer(TRACER_NAME)


@dataclass
class ToolCall:
    """The span of one executed step; `done` records its outcome."""

    span: Span
    capability: str

    def done(self, result: ExecutionResult) -> None:
        self.span.set_attribute("memoir.tool.success", result.success)
        if result.error:
            self.span.set_attribute("memoir.tool.error", result.error[:300])
            self.span.set_status(Status(StatusCode.ERROR, result.error[:300]))
        outcome = "success" if result.success else "failure"
        INSTRUMENTS.tool_calls.add(1, {"gen_ai.tool.name": self.capability, "outcome": outcome})


@contextmanager
def tool_call(request: ExecuteRequest) -> Iterator[ToolCall]:
    """`execute_tool {capability}`: the step, its idempotency key and its outcome."""
    capability = request.step.capability
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": capability,
        "memoir.tool.step_id": request.step.id,
        "memoir.tool.idempotency_key": request.idempotency_key,
        "memoir.turn_id": request.turn_id,
    }
    with _tracer.start_as_current_span(
        f"execute_tool {capability}", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        yield ToolCall(span, capability)


@dataclass
class MemoryDecision:
    """The span of one memory stage's decision; `record` sets and counts it."""

    span: Span
    kind: str

    def record(self, action: str, actions: Sequence[str] = (), reason: str = "") -> None:
        """The stage's action and each candidate's (create / update / merge / skip)."""
        self.span.set_attribute("memoir.memory.action", action)
        if reason:
            self.span.set_attribute("memoir.memory.reason", reason[:300])
        self.span.set_attribute("memoir.memory.candidates", len(actions))
        for each in actions or [action]:
            INSTRUMENTS.memory_decisions.add(1, {"memoir.memory.kind": self.kind, "action": each})


@contextmanager
def memory_decision(kind: str) -> Iterator[MemoryDecision]:
    """`memory.decide {kind}` (semantic, episodic): what the memory engine decided."""
    with _tracer.start_as_current_span(
        f"memory.decide {kind}", attributes={"memoir.memory.kind": kind}
    ) as span:
        yield MemoryDecision(span, kind)

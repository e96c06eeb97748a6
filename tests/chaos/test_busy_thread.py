"""A message sent while its thread's workflow task is failed (a worker too busy to finish it in
time: the load test's 503s) is sent again, a few times; other errors are not retried."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.service import RPCError, RPCStatusCode

from memoir.models import IncomingMessage, RouteResult, RouteStatus
from memoir.settings import Settings
from temporal import ingest

TASK_FAILED = "Unable to perform workflow execution update due to Workflow Task in failed state."
MESSAGE = IncomingMessage(user_id="u", thread_id="t", message_id="m", text="Hi")


class RefusingClient:
    """Refuses the first `refusals` updates with `status`, then routes the message."""

    def __init__(self, refusals: int, status: RPCStatusCode, text: str = TASK_FAILED) -> None:
        self.refusals, self.status, self.text, self.calls = refusals, status, text, 0

    async def execute_update_with_start_workflow(self, *args: Any, **kwargs: Any) -> RouteResult:
        self.calls += 1
        if self.calls <= self.refusals:
            raise RPCError(self.text, self.status, b"")
        return RouteResult(turn_id="turn:u:t:m", status=RouteStatus.STARTED)


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest, "TASK_FAILED_PAUSES", (0.0, 0.0, 0.0))


async def test_a_message_is_sent_again_while_its_thread_task_is_failed() -> None:
    client = RefusingClient(2, RPCStatusCode.FAILED_PRECONDITION)
    routed = await ingest.submit_message(client, Settings(), MESSAGE)  # type: ignore[arg-type]
    assert routed.turn_id == "turn:u:t:m" and client.calls == 3


async def test_a_thread_task_failed_for_longer_than_the_pauses_is_an_error() -> None:
    client = RefusingClient(10, RPCStatusCode.FAILED_PRECONDITION)
    with pytest.raises(RPCError):
        await ingest.submit_message(client, Settings(), MESSAGE)  # type: ignore[arg-type]
    assert client.calls == 4


async def test_other_refusals_are_not_sent_again() -> None:
    client = RefusingClient(1, RPCStatusCode.FAILED_PRECONDITION, "namespace not found")
    with pytest.raises(RPCError):
        await ingest.submit_message(client, Settings(), MESSAGE)  # type: ignore[arg-type]
    assert client.calls == 1

"""Test support: stub workflows under the real names and handlers, and helpers to drive them.

The stubs let the API tests exercise update-with-start, queries and signals without the real
worker; they are not the real ThreadWorkflow / AgentTurnWorkflow.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from memoir.models import (
    ActionRequest,
    ExpectedInput,
    HitlAnswer,
    HitlConfig,
    HitlKind,
    HitlRequest,
    IncomingMessage,
    RouteResult,
    RouteStatus,
    ThreadInput,
    ThreadState,
    TurnResult,
    TurnStatus,
    TurnView,
    UserProfile,
)
from memoir.models import search_attributes as sa
from memoir.models.names import (
    THREAD_STATE_QUERY,
    THREAD_SUBMIT_UPDATE,
    THREAD_WORKFLOW,
    TURN_ANSWER_SIGNAL,
    TURN_PENDING_QUERY,
    TURN_VIEW_QUERY,
    TURN_WORKFLOW,
    turn_workflow_id,
)

TASK_QUEUE = "memoir-api-tests"
NOBODY_POLLS = "memoir-api-tests-no-worker"  # no worker polls it: queries time out


@workflow.defn(name=THREAD_WORKFLOW)
class StubThreadWorkflow:
    """Queues every new message as a turn id and never starts it."""

    @workflow.init
    def __init__(self, thread: ThreadInput) -> None:
        self.thread = thread
        self.messages: list[IncomingMessage] = []

    @workflow.run
    async def run(self, thread: ThreadInput) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.update(name=THREAD_SUBMIT_UPDATE)
    def submit(self, message: IncomingMessage) -> RouteResult:
        turn_id = turn_workflow_id(message.user_id, message.thread_id, message.message_id)
        if any(m.message_id == message.message_id for m in self.messages):
            return RouteResult(turn_id=turn_id, status=RouteStatus.DUPLICATE)
        self.messages.append(message)
        return RouteResult(turn_id=turn_id, status=RouteStatus.STARTED)

    @workflow.query(name=THREAD_STATE_QUERY)
    def state(self) -> ThreadState:
        queued = [turn_workflow_id(m.user_id, m.thread_id, m.message_id) for m in self.messages]
        return ThreadState(
            running_turn_id=None,
            pending_hitl_id=None,
            queued_turn_ids=queued,
            seen_count=len(queued),
        )

    @workflow.query(name="input")
    def input(self) -> ThreadInput:
        return self.thread

    @workflow.query(name="messages")
    def received(self) -> list[IncomingMessage]:
        return self.messages


class StubTurnSpec(BaseModel):
    """What the stub turn should do: return `result` at once, or wait on `pending`."""

    pending: HitlRequest | None = None
    result: TurnResult | None = None


@workflow.defn(name=TURN_WORKFLOW)
class StubTurnWorkflow:
    """Waits on its pending request until an answer arrives, or returns its result at once."""

    @workflow.init
    def __init__(self, spec: StubTurnSpec) -> None:
        self.spec = spec
        self.pending = spec.pending
        self.answers: list[HitlAnswer] = []

    @workflow.run
    async def run(self, spec: StubTurnSpec) -> TurnResult:
        turn_id = workflow.info().workflow_id
        if spec.pending is None:
            return spec.result or TurnResult(turn_id=turn_id, status=TurnStatus.COMPLETED)
        await workflow.wait_condition(lambda: bool(self.answers))
        self.pending = None
        return TurnResult(turn_id=turn_id, status=TurnStatus.COMPLETED, reply="answered")

    @workflow.signal(name=TURN_ANSWER_SIGNAL)
    def answer(self, answer: HitlAnswer) -> None:
        self.answers.append(answer)

    @workflow.query(name=TURN_PENDING_QUERY)
    def pending_request(self) -> HitlRequest | None:
        return self.pending

    @workflow.query(name=TURN_VIEW_QUERY)
    def view(self) -> TurnView:
        status = TurnStatus.AWAITING_HUMAN if self.pending else TurnStatus.RUNNING
        return TurnView(
            turn_id=workflow.info().workflow_id,
            status=status,
            stage="hitl" if self.pending else "plan",
            pending=self.pending,
        )

    @workflow.query(name="answers")
    def received(self) -> list[HitlAnswer]:
        return self.answers


@dataclass
class ApiUser:
    """A user of their own for one test, with the Authorization header of their token."""

    profile: UserProfile
    token: str

    @property
    def user_id(self) -> str:
        return self.profile.user_id

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def new_turn_id(user_id: str, thread_id: str = "t1") -> str:
    """A turn id of this user with a message id no other test uses."""
    return turn_workflow_id(user_id, thread_id, f"m-{uuid.uuid4().hex[:12]}")


def hitl_request(
    turn_id: str,
    *,
    n: int = 1,
    config: HitlConfig | None = None,
    expected_input: ExpectedInput = ExpectedInput.HUMAN_RESPONSE,
    expires_in: timedelta = timedelta(minutes=5),
) -> HitlRequest:
    """An approval request of the turn, as the turn workflow would hold it."""
    _, user_id, thread_id, _ = turn_id.split(":")
    now = datetime.now(UTC)
    return HitlRequest(
        hitl_id=f"{turn_id}:hitl{n}",
        turn_id=turn_id,
        thread_id=thread_id,
        user_id=user_id,
        kind=HitlKind.APPROVAL,
        action_request=ActionRequest(action="email.send", args={"to": "bob@example.com"}),
        config=config or HitlConfig(allow_accept=True, allow_edit=True),
        description="**Subject**: hello",
        question="Send this email?",
        expected_input=expected_input,
        created_at=now,
        expires_at=now + expires_in,
    )


async def start_turn(
    client: Client,
    turn_id: str,
    *,
    pending: HitlRequest | None = None,
    result: TurnResult | None = None,
    task_queue: str = TASK_QUEUE,
    classification: str | None = None,
) -> WorkflowHandle:
    """Start a stub turn under a real turn id, with the search attributes the real one sets."""
    _, user_id, thread_id, _ = turn_id.split(":")
    pairs: list[SearchAttributePair] = [  # type: ignore[type-arg]
        SearchAttributePair(sa.USER_ID, user_id),
        SearchAttributePair(sa.THREAD_ID, thread_id),
        SearchAttributePair(sa.CHANNEL, "chat"),
        SearchAttributePair(sa.AWAITING_HUMAN, pending is not None),
    ]
    if classification:
        pairs.append(SearchAttributePair(sa.CLASSIFICATION, classification))
    return await client.start_workflow(
        TURN_WORKFLOW,
        StubTurnSpec(pending=pending, result=result),
        id=turn_id,
        task_queue=task_queue,
        search_attributes=TypedSearchAttributes(pairs),
    )


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is an error in the one shape, with this status and code."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert isinstance(error["details"], list)
    return error

"""Helpers of the API tests: users with tokens, the error shape, HTTP over an app, and reads of
what the real workflows did (their start input, the thread's state). No stand-in workflows: the
turns run on the real worker of `temporal.harness`, with only the LLM scripted.
"""

from __future__ import annotations

import gc
import inspect
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from memoir.models import HitlRequest, ThreadState, UserProfile
from memoir.models.names import THREAD_STATE_QUERY, thread_workflow_id
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness, running_harness, until

T = TypeVar("T")

# Knobs of the app's settings that are easy to recognise in a ThreadInput.
KNOBS: dict[str, Any] = {"hitl_ttl_seconds": 123, "thread_idle_hours": 7.5, "max_replans": 2}
FINAL = frozenset({"completed", "ignored", "expired", "blocked", "failed"})


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


async def api_user(stores: Stores, profile: UserProfile) -> ApiUser:
    """The user with a new bearer token."""
    return ApiUser(profile, await stores.users.issue_token(profile.user_id))


@asynccontextmanager
async def api_harness(
    env: WorkflowEnvironment, stores: Stores, database_url: str, **overrides: Any
) -> AsyncIterator[Harness]:
    """`running_harness` whose settings are also the app's: the worker's task queue, the test
    database and the knobs. When its worker has stopped, garbage is collected (`collect_garbage`).
    """
    settings = {"database_url": database_url, **KNOBS, **overrides}
    try:
        async with running_harness(env, stores, **settings) as harness:
            yield harness
    finally:
        collect_garbage()


def collect_garbage() -> None:
    """Collect garbage here, on the event loop's thread, outside any workflow; freeze the rest.

    sdk-core does not evict idle cached runs when a worker shuts down (temporalio/sdk-python#494,
    #1849), and these tests leave turns waiting on a person. Such a run's coroutine is closed when
    the garbage collector reaches it, on whatever thread triggers the collection. On a later
    test's workflow thread in the middle of an activation, the turn's `finally` in `_ask` (an
    upsert and a signal to its thread) would add commands to that other workflow, which then fails
    on nondeterminism. So automatic collection is off for the API tests (`gc_between_tests`) and
    runs here instead, where those `finally` blocks fail harmlessly with "not in workflow event
    loop"; that expected noise is muted. A run the SDK still holds is frozen with the survivors
    and collected when the package ends; freezing also keeps the next collection short (a full
    one walks torch's heap: ~0.3 s).
    """
    previous = sys.unraisablehook

    def mute_abandoned_coroutines(unraisable: sys.UnraisableHookArgs) -> None:
        if not inspect.iscoroutine(unraisable.object):
            previous(unraisable)

    sys.unraisablehook = mute_abandoned_coroutines
    try:
        gc.collect()
    finally:
        sys.unraisablehook = previous
    gc.freeze()


@asynccontextmanager
async def http_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the app in-process."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        yield client


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is an error in the one shape, with this status and code."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert isinstance(error["details"], list)
    return error


async def post_message(
    http: httpx.AsyncClient, user: ApiUser, thread_id: str, message_id: str, text: str
) -> httpx.Response:
    body = {"thread_id": thread_id, "message_id": message_id, "text": text}
    return await http.post("/v1/messages", json=body, headers=user.headers)


async def get_turn(http: httpx.AsyncClient, user: ApiUser, turn_id: str) -> httpx.Response:
    return await http.get(f"/v1/turns/{turn_id}", headers=user.headers)


async def answer(
    http: httpx.AsyncClient, user: ApiUser, hitl_id: str, body: object
) -> httpx.Response:
    return await http.post(f"/v1/inbox/{hitl_id}", json=body, headers=user.headers)


async def finished_view(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, turn_id: str
) -> dict[str, Any]:
    """Wait (bounded, real time) for the turn to close, then its view by `GET /v1/turns/{id}`."""
    await harness.result(turn_id)
    response = await get_turn(http, user, turn_id)
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    assert view["status"] in FINAL
    return view


async def start_input(client: Client, workflow_id: str, input_type: type[T]) -> T:
    """The input a workflow was started with, read from the first event of its history."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [value] = await client.data_converter.decode(started.input.payloads, [input_type])
    return value  # type: ignore[no-any-return]


async def thread_state(client: Client, user_id: str, thread_id: str) -> ThreadState:
    handle = client.get_workflow_handle(thread_workflow_id(user_id, thread_id))
    return await handle.query(THREAD_STATE_QUERY, result_type=ThreadState)


async def thread_knows(harness: Harness, request: HitlRequest) -> None:
    """Wait until the thread holds the request as its pending question.

    The turn tells its thread by a signal that lands a moment after the turn's own `pending` query
    shows the request; a chat message that does not look like an answer ("maybe") arriving in
    between would start a new turn instead of answering.
    """

    async def knows() -> bool:
        state = await thread_state(harness.client, request.user_id, request.thread_id)
        return state.pending_hitl_id == request.hitl_id

    await until(knows, f"thread to hold {request.hitl_id}")


async def approval_asked(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, text: str = "pay rent"
) -> HitlRequest:
    """A real turn of the user that waits for approval of a reminder."""
    harness.llm.script("Plan", plans.remind(text, approval=True))
    routed = await post_message(http, user, harness.thread_id, "m1", f"remind me to {text}")
    assert routed.json()["status"] == "started", routed.text
    return await harness.pending(routed.json()["turn_id"])


async def inbox_of(http: httpx.AsyncClient, user: ApiUser) -> list[dict[str, Any]]:
    response = await http.get("/v1/inbox", headers=user.headers)
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()
    return listed

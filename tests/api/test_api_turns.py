"""GET /v1/turns/{turn_id}: ownership, views of running / finished turns, queued turns."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import httpx
import pytest
from langchain_core.messages import BaseMessage
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api import gateway
from api.app import create_app
from memoir.models import Classification, Plan
from memoir.models.names import turn_workflow_id
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import (
    ApiUser,
    api_harness,
    api_user,
    assert_error,
    finished_view,
    get_turn,
    http_client,
    post_message,
    thread_state,
)

# Long enough for any turn here, short enough that a broken test does not hang the session.
GATE_TIMEOUT_S = 30.0


async def test_turn_of_another_user_is_404(
    http: httpx.AsyncClient, user: ApiUser, other_user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("call mum"))
    routed = await post_message(http, other_user, "t1", "m1", "remind me to call mum")
    turn_id = routed.json()["turn_id"]
    await harness.result(turn_id)
    assert_error(await get_turn(http, user, turn_id), 404, "not_found")
    assert (await get_turn(http, other_user, turn_id)).status_code == 200


async def test_unknown_turn_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    turn_id = turn_workflow_id(user.user_id, "t1", "never-sent")
    assert_error(await get_turn(http, user, turn_id), 404, "not_found")


async def test_malformed_turn_id_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    assert_error(await get_turn(http, user, f"turn:{user.user_id}:t1"), 404, "not_found")


async def test_completed_turn_shows_its_result(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("call mum"))
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to call mum")
    turn_id = routed.json()["turn_id"]
    result = await harness.result(turn_id)
    view = (await get_turn(http, user, turn_id)).json()
    assert (view["status"], view["stage"], view["classification"]) == (
        "completed",
        "done",
        "respond",
    )
    assert view["reply"] and view["reply"] == result.reply
    assert view["pending"] is None
    assert [(a["step_id"], a["capability"], a["success"]) for a in view["actions"]] == [
        ("s1", "reminders.create", True)
    ]


async def test_turn_awaiting_a_human_shows_its_pending_request(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("pay rent", approval=True))
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to pay rent")
    turn_id = routed.json()["turn_id"]
    await harness.pending(turn_id)
    response = await get_turn(http, user, turn_id)
    assert response.status_code == 200, response.text
    view = response.json()
    assert (view["status"], view["classification"]) == ("awaiting_human", "respond")
    assert view["pending"]["hitl_id"] == f"{turn_id}:hitl1"
    assert view["pending"]["kind"] == "approval"
    assert view["pending"]["action_request"]["action"] == "reminders.create"


async def test_running_turn_whose_worker_is_gone_shows_its_search_attributes(
    temporal_env: WorkflowEnvironment,
    stores: Stores,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gateway, "QUERY_TIMEOUT", timedelta(seconds=1))
    email = {
        "id": "ci-1",
        "from": "CI <ci@example.com>",
        "to": "tess@example.com",
        "subject": "Nightly build passed",
        "body": "All 412 tests passed.",
    }
    # A harness of its own, so the test can stop its worker half way through the turn.
    async with api_harness(temporal_env, stores, database_url) as harness:
        user = await api_user(stores, harness.user)
        app = create_app(harness.settings, client=temporal_env.client, stores=stores)
        harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
        async with http_client(app) as http:
            routed = await http.post("/v1/emails", json=email, headers=user.headers)
        turn_id = routed.json()["turn_id"]
        await harness.pending(turn_id)
    # The worker has shut down: the turn cannot answer its view query any more.
    async with http_client(app) as http:
        response = await get_turn(http, user, turn_id)
    assert response.status_code == 200, response.text
    view = response.json()
    assert (view["status"], view["classification"], view["stage"]) == (
        "awaiting_human",
        "notify",
        "unknown",
    )


async def test_terminated_turn_is_failed(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("pay rent", approval=True))
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to pay rent")
    turn_id = routed.json()["turn_id"]
    await harness.pending(turn_id)
    await temporal_client.get_workflow_handle(turn_id).terminate(reason="test")
    view = (await get_turn(http, user, turn_id)).json()
    assert (view["status"], view["stage"]) == ("failed", "terminated")


class HeldPlan:
    """A scripted planner answer held back until the test releases it: the turn stays in its
    plan stage for as long as the test needs (the LLM is the only scripted part)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.asked = threading.Event()
        self.released = threading.Event()

    def __call__(self, messages: list[BaseMessage]) -> Plan:
        self.asked.set()
        if not self.released.wait(GATE_TIMEOUT_S):
            raise TimeoutError("the held plan was never released")
        return self.plan


async def test_turn_queued_behind_a_running_turn_is_running_queued(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    held = HeldPlan(plans.remind("book a table"))
    harness.llm.script("Plan", held, plans.remind("buy flowers"))
    first = await post_message(http, user, harness.thread_id, "m1", "remind me to book a table")
    try:
        assert await asyncio.to_thread(held.asked.wait, GATE_TIMEOUT_S)
        second = await post_message(http, user, harness.thread_id, "m2", "remind me to buy flowers")
        assert second.json()["status"] == "started"
        queued = second.json()["turn_id"]
        response = await get_turn(http, user, queued)
        assert response.status_code == 200, response.text
        assert (response.json()["status"], response.json()["stage"]) == ("running", "queued")
        state = await thread_state(temporal_client, user.user_id, harness.thread_id)
        assert (state.running_turn_id, state.queued_turn_ids) == (first.json()["turn_id"], [queued])
    finally:
        held.released.set()
    assert (await finished_view(http, harness, user, queued))["status"] == "completed"

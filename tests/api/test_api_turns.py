"""GET /v1/turns/{turn_id}: ownership, views of running / finished turns, queued turns."""

from __future__ import annotations

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from api import gateway
from memoir.models import Classification, ExecutionResult, TurnResult, TurnStatus
from memoir.models.names import turn_workflow_id
from tests.api.support import (
    NOBODY_POLLS,
    ApiUser,
    assert_error,
    hitl_request,
    new_turn_id,
    start_turn,
)


async def get_turn(http: httpx.AsyncClient, user: ApiUser, turn_id: str) -> httpx.Response:
    return await http.get(f"/v1/turns/{turn_id}", headers=user.headers)


async def test_turn_of_another_user_is_404(
    http: httpx.AsyncClient,
    user: ApiUser,
    other_user: ApiUser,
    temporal_client: Client,
    stub_worker: Worker,
) -> None:
    turn_id = new_turn_id(other_user.user_id)
    await start_turn(temporal_client, turn_id, result=TurnResult(turn_id=turn_id, status="ignored"))
    assert_error(await get_turn(http, user, turn_id), 404, "not_found")
    assert (await get_turn(http, other_user, turn_id)).status_code == 200


async def test_unknown_turn_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    assert_error(await get_turn(http, user, new_turn_id(user.user_id)), 404, "not_found")


async def test_malformed_turn_id_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    assert_error(await get_turn(http, user, f"turn:{user.user_id}:t1"), 404, "not_found")


async def test_completed_turn_shows_its_result(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    action = ExecutionResult(
        step_id="s1", capability="reminders.create", success=True, summary="reminder set"
    )
    result = TurnResult(
        turn_id=turn_id,
        status=TurnStatus.COMPLETED,
        classification=Classification.RESPOND,
        reply="Done: reminder set.",
        actions=[action],
    )
    handle = await start_turn(temporal_client, turn_id, result=result)
    await handle.result()
    view = (await get_turn(http, user, turn_id)).json()
    assert view["status"] == "completed"
    assert view["classification"] == "respond"
    assert view["reply"] == "Done: reminder set."
    assert [a["step_id"] for a in view["actions"]] == ["s1"]


async def test_running_turn_answers_with_its_view_query(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    await start_turn(temporal_client, turn_id, pending=hitl_request(turn_id))
    view = (await get_turn(http, user, turn_id)).json()
    assert view["status"] == "awaiting_human"
    assert view["pending"]["hitl_id"] == f"{turn_id}:hitl1"


async def test_running_turn_without_a_worker_shows_its_search_attributes(
    http: httpx.AsyncClient,
    user: ApiUser,
    temporal_client: Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gateway, "QUERY_TIMEOUT", gateway.timedelta(seconds=1))
    turn_id = new_turn_id(user.user_id)
    pending = hitl_request(turn_id)
    await start_turn(
        temporal_client, turn_id, pending=pending, task_queue=NOBODY_POLLS, classification="notify"
    )
    response = await get_turn(http, user, turn_id)
    assert response.status_code == 200, response.text
    view = response.json()
    assert (view["status"], view["classification"], view["stage"]) == (
        "awaiting_human",
        "notify",
        "unknown",
    )


async def test_terminated_turn_is_failed(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client
) -> None:
    turn_id = new_turn_id(user.user_id)
    handle = await start_turn(temporal_client, turn_id, task_queue=NOBODY_POLLS)
    await handle.terminate(reason="test")
    view = (await get_turn(http, user, turn_id)).json()
    assert (view["status"], view["stage"]) == ("failed", "terminated")


async def test_turn_queued_in_its_thread_is_running_queued(
    http: httpx.AsyncClient, user: ApiUser, stub_worker: Worker
) -> None:
    body = {"thread_id": "t1", "message_id": "m9", "text": "book a table"}
    await http.post("/v1/messages", json=body, headers=user.headers)
    turn_id = turn_workflow_id(user.user_id, "t1", "m9")
    response = await get_turn(http, user, turn_id)
    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["stage"]) == ("running", "queued")

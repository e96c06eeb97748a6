"""GET /v1/inbox and POST /v1/inbox/{hitl_id}: listing and answering pending requests."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from memoir.models import HitlAnswer, HitlConfig
from tests.api.support import ApiUser, assert_error, hitl_request, new_turn_id, start_turn


async def answer(
    http: httpx.AsyncClient, user: ApiUser, hitl_id: str, body: object
) -> httpx.Response:
    return await http.post(f"/v1/inbox/{hitl_id}", json=body, headers=user.headers)


async def test_answer_for_unknown_hitl_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    hitl_id = f"{new_turn_id(user.user_id)}:hitl1"
    assert_error(await answer(http, user, hitl_id, {"type": "accept"}), 404, "not_found")


async def test_answer_for_another_users_hitl_is_404(
    http: httpx.AsyncClient,
    user: ApiUser,
    other_user: ApiUser,
    temporal_client: Client,
    stub_worker: Worker,
) -> None:
    turn_id = new_turn_id(other_user.user_id)
    request = hitl_request(turn_id)
    await start_turn(temporal_client, turn_id, pending=request)
    response = await answer(http, user, request.hitl_id, {"type": "accept"})
    assert_error(response, 404, "not_found")


async def test_answer_of_the_wrong_type_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    hitl_id = f"{new_turn_id(user.user_id)}:hitl1"
    response = await answer(http, user, hitl_id, {"type": "approve"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "type"


async def test_inbox_lists_the_pending_requests_of_this_user_only(
    http: httpx.AsyncClient,
    user: ApiUser,
    other_user: ApiUser,
    temporal_client: Client,
    stub_worker: Worker,
) -> None:
    mine = new_turn_id(user.user_id)
    theirs = new_turn_id(other_user.user_id)
    await start_turn(temporal_client, mine, pending=hitl_request(mine))
    await start_turn(temporal_client, theirs, pending=hitl_request(theirs))
    listed: list[str] = []
    for _ in range(50):  # visibility is eventually consistent
        response = await http.get("/v1/inbox", headers=user.headers)
        listed = [r["hitl_id"] for r in response.json()]
        if listed:
            break
        await asyncio.sleep(0.1)
    assert listed == [f"{mine}:hitl1"]


async def test_inbox_is_empty_without_pending_requests(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    response = await http.get("/v1/inbox", headers=user.headers)
    assert (response.status_code, response.json()) == (200, [])


async def test_answer_is_signalled_to_the_turn_and_accepted(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    request = hitl_request(turn_id)
    handle = await start_turn(temporal_client, turn_id, pending=request)
    response = await answer(http, user, request.hitl_id, {"type": "accept"})
    assert response.status_code == 202, response.text
    assert response.json() == {"hitl_id": request.hitl_id, "status": "accepted"}
    [received] = await handle.query("answers", result_type=list[HitlAnswer])
    assert (received.hitl_id, received.response.type, received.source) == (
        request.hitl_id,
        "accept",
        "inbox",
    )


async def test_answer_to_another_hitl_of_the_turn_is_409(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    await start_turn(temporal_client, turn_id, pending=hitl_request(turn_id, n=2))
    response = await answer(http, user, f"{turn_id}:hitl1", {"type": "accept"})
    error = assert_error(response, 409, "not_pending")
    assert "not pending (answered or expired)" in error["message"]


async def test_answer_to_a_finished_turn_is_409(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    await (await start_turn(temporal_client, turn_id)).result()
    response = await answer(http, user, f"{turn_id}:hitl1", {"type": "accept"})
    assert_error(response, 409, "not_pending")


async def test_answer_after_expiry_is_409_expired(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    request = hitl_request(turn_id, expires_in=timedelta(seconds=-1))
    await start_turn(temporal_client, turn_id, pending=request)
    response = await answer(http, user, request.hitl_id, {"type": "accept"})
    assert_error(response, 409, "expired")


async def test_answer_not_allowed_by_the_config_is_422_with_the_reason(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    request = hitl_request(turn_id, config=HitlConfig(allow_accept=False, allow_edit=False))
    handle = await start_turn(temporal_client, turn_id, pending=request)
    response = await answer(http, user, request.hitl_id, {"type": "accept"})
    error = assert_error(response, 422, "invalid_answer")
    assert error["message"] == "'accept' is not allowed here; allowed: ignore, response."
    assert await handle.query("answers", result_type=list[HitlAnswer]) == []


async def test_edit_that_changes_the_action_is_422(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    turn_id = new_turn_id(user.user_id)
    request = hitl_request(turn_id)
    await start_turn(temporal_client, turn_id, pending=request)
    body = {"type": "edit", "args": {"action": "calendar.schedule", "args": {}}}
    error = assert_error(await answer(http, user, request.hitl_id, body), 422, "invalid_answer")
    assert "email.send" in error["message"]

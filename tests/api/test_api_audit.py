"""The audit log: what the API routes and the human-in-the-loop answers record, `GET /v1/audit`,
and the anonymous receipt that erasure leaves."""

from __future__ import annotations

import json
from typing import Any

import httpx

from memoir.audit import AuditLog, token_id
from memoir.stores import Stores
from temporal.harness import Harness
from tests.api.support import (
    ApiUser,
    answer,
    approval_asked,
    assert_error,
    finished_view,
    get_turn,
    post_message,
)


async def audit_of(http: httpx.AsyncClient, user: ApiUser, **params: Any) -> dict[str, Any]:
    response = await http.get("/v1/audit", headers=user.headers, params=params)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def test_a_read_records_who_what_which_when_and_from_where(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness)
    assert (await get_turn(http, user, request.turn_id)).status_code == 200
    [read, submitted] = (await audit_of(http, user))["items"]
    assert submitted["action"] == "submit" and submitted["resource_kind"] == "message"
    assert {
        k: read[k] for k in ("actor", "token_id", "action", "resource_kind", "resource_id")
    } == {
        "actor": "user",
        "token_id": token_id(user.token),
        "action": "read",
        "resource_kind": "turn",
        "resource_id": request.turn_id,
    }
    assert (read["via"], read["route"]) == ("api", "GET /v1/turns/{turn_id}")
    assert read["at"] >= submitted["at"]


async def test_an_inbox_approval_is_recorded_as_approve(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness)
    assert (await answer(http, user, request.hitl_id, {"type": "accept"})).status_code == 202
    latest = (await audit_of(http, user, limit=1))["items"][0]
    assert (latest["action"], latest["resource_kind"], latest["resource_id"]) == (
        "approve",
        "hitl_request",
        request.hitl_id,
    )
    assert latest["route"] == "POST /v1/inbox/{hitl_id}"


async def test_an_inbox_rejection_is_recorded_as_reject(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness)
    ignore = {"type": "ignore", "args": None}
    assert (await answer(http, user, request.hitl_id, ignore)).status_code == 202
    latest = (await audit_of(http, user, limit=1))["items"][0]
    assert (latest["action"], latest["resource_id"]) == ("reject", request.hitl_id)


async def test_a_chat_answer_is_recorded_as_an_answer_via_chat(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness)
    routed = await post_message(http, user, harness.thread_id, "m2", "yes")
    assert routed.json()["status"] == "routed_to_pending", routed.text
    await finished_view(http, harness, user, request.turn_id)
    entries = (await audit_of(http, user))["items"]
    [chat] = [e for e in entries if e["via"] == "chat"]
    assert (chat["action"], chat["resource_kind"], chat["resource_id"]) == (
        "answer",
        "hitl_request",
        request.turn_id,
    )
    assert chat["details"] == {"message_id": "m2", "accepted": True}


async def test_pages_run_newest_first_by_cursor(
    http: httpx.AsyncClient, user: ApiUser, stores: Stores
) -> None:
    for _ in range(5):
        body = {"capabilities": ["reminders"]}
        response = await http.put("/v1/me/capabilities", json=body, headers=user.headers)
        assert response.status_code == 200, response.text
    first = await audit_of(http, user, limit=2)
    second = await audit_of(http, user, limit=2, cursor=first["next_cursor"])
    third = await audit_of(http, user, limit=2, cursor=second["next_cursor"])
    ids = [e["audit_id"] for page in (first, second, third) for e in page["items"]]
    assert ids == sorted(ids, reverse=True) and len(ids) == 5
    assert third["next_cursor"] is None


async def test_repeated_reads_within_a_minute_are_one_entry(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    for _ in range(3):
        assert (await http.get("/v1/me", headers=user.headers)).status_code == 200
        assert (await http.get("/v1/audit", headers=user.headers)).status_code == 200
    entries = (await audit_of(http, user))["items"]
    assert [(e["action"], e["resource_kind"]) for e in entries] == [("read", "profile")]


async def test_another_user_never_sees_my_entries(
    http: httpx.AsyncClient, user: ApiUser, other_user: ApiUser
) -> None:
    assert (await http.get("/v1/me", headers=user.headers)).status_code == 200
    assert (await audit_of(http, other_user))["items"] == []


async def test_a_bad_cursor_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.get("/v1/audit", headers=user.headers, params={"cursor": 0})
    assert_error(response, 422, "validation_error")


async def test_erasure_leaves_only_an_anonymous_receipt(
    http: httpx.AsyncClient, user: ApiUser, stores: Stores
) -> None:
    assert (await http.get("/v1/me", headers=user.headers)).status_code == 200
    response = await http.delete("/v1/me", headers=user.headers)
    assert response.status_code == 200, response.text
    receipt = response.json()
    assert set(receipt) == {"receipt_id", "erased_at", "erased"}
    assert receipt["erased"]["audit_log"] == 1 and receipt["erased"]["users"] == 1
    kept = await AuditLog(stores.pool).get_receipt(receipt["receipt_id"])
    assert kept is not None and kept.model_dump(mode="json") == receipt
    stored = json.dumps(receipt)
    for personal in (user.user_id, user.profile.name, token_id(user.token)):
        assert personal not in stored
    assert await AuditLog(stores.pool).entries(user.user_id) == []

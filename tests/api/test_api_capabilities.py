"""GET /v1/me and PUT /v1/me/capabilities: the connected capabilities gate the next turn."""

from __future__ import annotations

import httpx

from memoir.models import TurnStatus
from memoir.models.plan import CAPABILITY_FAMILIES
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, assert_error, post_message


async def _put(http: httpx.AsyncClient, user: ApiUser, caps: list[str]) -> httpx.Response:
    return await http.put("/v1/me/capabilities", json={"capabilities": caps}, headers=user.headers)


async def test_get_me_shows_the_profile_with_its_capabilities(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    response = await http.get("/v1/me", headers=user.headers)
    assert response.status_code == 200, response.text
    me = response.json()
    assert (me["user_id"], me["name"], me["timezone"]) == (
        user.user_id,
        user.profile.name,
        user.profile.timezone,
    )
    assert me["capabilities"] == ["reminders"]


async def test_get_me_needs_a_token(http: httpx.AsyncClient) -> None:
    assert_error(await http.get("/v1/me"), 401, "unauthorized")


async def test_put_capabilities_sets_them_and_reads_back(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    response = await _put(http, user, ["reminders", "email", "calendar", "email"])
    assert response.status_code == 200, response.text
    assert response.json()["capabilities"] == ["reminders", "email", "calendar"]
    me = (await http.get("/v1/me", headers=user.headers)).json()
    assert me["capabilities"] == ["reminders", "email", "calendar"]
    assert (await _put(http, user, [])).json()["capabilities"] == []
    assert (await http.get("/v1/me", headers=user.headers)).json()["capabilities"] == []


async def test_unknown_capability_is_422_listing_the_known_ones(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    error = assert_error(await _put(http, user, ["email", "gmail"]), 422, "validation_error")
    assert "gmail" in error["message"]
    assert all(name in error["message"] for name in CAPABILITY_FAMILIES)
    assert [d["field"] for d in error["details"]] == ["capabilities.1"]
    me = (await http.get("/v1/me", headers=user.headers)).json()
    assert me["capabilities"] == ["reminders"]  # unchanged


async def test_missing_body_field_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.put("/v1/me/capabilities", json={}, headers=user.headers)
    assert_error(response, 422, "validation_error")


async def test_disconnected_email_blocks_the_turn_and_reconnecting_asks_for_approval(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    assert (await _put(http, user, ["reminders", "email"])).status_code == 200
    assert (await _put(http, user, ["reminders"])).status_code == 200  # email disconnected
    harness.llm.script("Plan", plans.send_email())
    routed = await post_message(http, user, harness.thread_id, "m1", "email dan hello")
    result = await harness.result(routed.json()["turn_id"])
    assert result.status is TurnStatus.BLOCKED
    assert "Connect email" in (result.reply or "")

    assert (await _put(http, user, ["reminders", "email"])).status_code == 200
    harness.llm.script("Plan", plans.send_email())
    routed = await post_message(http, user, harness.thread_id, "m2", "email dan hello")
    request = await harness.pending(routed.json()["turn_id"])
    assert request.kind == "approval"
    assert request.action_request.action == "email.send"

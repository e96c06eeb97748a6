"""GET /v1/preferences/{namespace} (+ /history, /rollback): profiles and their versions."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memoir.models import Classification
from memoir.stores import DEFAULT_PREFERENCES, Stores
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, answer, assert_error, finished_view

TRIAGE = "triage_preferences"
EMAIL = {
    "id": "pref-1",
    "from": "Deploy Bot <ci@example.com>",
    "to": "me@example.com",
    "subject": "Deploy finished",
    "body": "The deploy of web-app finished.",
}


async def get(http: httpx.AsyncClient, user: ApiUser, path: str) -> dict[str, Any]:
    response = await http.get(f"/v1/preferences/{path}", headers=user.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def rollback(
    http: httpx.AsyncClient, user: ApiUser, namespace: str, body: object
) -> httpx.Response:
    return await http.post(f"/v1/preferences/{namespace}/rollback", json=body, headers=user.headers)


async def ignore_a_notify_email(http: httpx.AsyncClient, harness: Harness, user: ApiUser) -> str:
    """A notify email answered 'ignore' from the inbox: triage learns a new version."""
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await http.post("/v1/emails", json=EMAIL, headers=user.headers)
    request = await harness.pending(routed.json()["turn_id"])
    assert (await answer(http, user, request.hitl_id, {"type": "ignore"})).status_code == 202
    await finished_view(http, harness, user, request.turn_id)
    return request.turn_id


async def test_first_read_writes_and_returns_the_default(
    http: httpx.AsyncClient, user: ApiUser, stores: Stores
) -> None:
    current = await get(http, user, TRIAGE)
    assert current["content"] == DEFAULT_PREFERENCES[TRIAGE]
    assert (current["namespace"], current["version"], current["decision"]) == (TRIAGE, 1, "default")
    assert current["turn_id"] is None and current["created_at"]
    [stored] = await stores.preferences.history(user.user_id, TRIAGE)
    assert stored.version == 1
    assert (await get(http, user, TRIAGE))["version"] == 1  # a second read writes nothing


async def test_history_after_a_notify_decision_lists_it_first_with_its_diff(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    turn_id = await ignore_a_notify_email(http, harness, user)
    history = await get(http, user, f"{TRIAGE}/history")
    assert history["namespace"] == TRIAGE
    learned, default = history["versions"]
    assert (learned["version"], learned["decision"], learned["turn_id"]) == (
        2,
        "notify.ignore",
        turn_id,
    )
    assert learned["diff"].startswith("--- v1\n+++ v2\n@@")
    assert any(line.startswith("+") for line in learned["diff"].splitlines()[2:])
    assert (default["version"], default["decision"], default["diff"]) == (1, "default", None)
    assert (await get(http, user, TRIAGE))["decision"] == "notify.ignore"


async def test_rollback_writes_a_new_version_with_the_old_text(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await ignore_a_notify_email(http, harness, user)
    response = await rollback(http, user, TRIAGE, {"version": 1})
    assert response.status_code == 200, response.text
    restored = response.json()
    assert (restored["version"], restored["decision"]) == (3, "rollback:1")
    assert restored["content"] == DEFAULT_PREFERENCES[TRIAGE]
    assert await get(http, user, TRIAGE) == restored
    history = await get(http, user, f"{TRIAGE}/history")
    assert [v["version"] for v in history["versions"]] == [3, 2, 1]


async def test_unknown_namespace_is_404_listing_the_valid_ones(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    for response in (
        await http.get("/v1/preferences/tone_preferences", headers=user.headers),
        await http.get("/v1/preferences/tone_preferences/history", headers=user.headers),
        await rollback(http, user, "tone_preferences", {"version": 1}),
    ):
        error = assert_error(response, 404, "not_found")
        assert "tone_preferences" in error["message"]
        for valid in ("triage_preferences", "response_preferences", "cal_preferences"):
            assert valid in error["message"]


async def test_rollback_to_an_unknown_version_is_404(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    error = assert_error(await rollback(http, user, TRIAGE, {"version": 7}), 404, "not_found")
    assert "version 7" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"version": 0}, id="zero"),
        pytest.param({"version": "two"}, id="not-a-number"),
        pytest.param({}, id="missing"),
        pytest.param({"version": 1, "extra": True}, id="unknown-field"),
    ],
)
async def test_invalid_rollback_body_is_422(
    http: httpx.AsyncClient, user: ApiUser, body: object
) -> None:
    assert_error(await rollback(http, user, TRIAGE, body), 422, "validation_error")


async def test_another_users_versions_are_not_shown(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, other_user: ApiUser
) -> None:
    await ignore_a_notify_email(http, harness, user)
    current = await get(http, other_user, TRIAGE)
    assert (current["version"], current["decision"]) == (1, "default")

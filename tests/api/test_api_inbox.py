"""GET /v1/inbox and POST /v1/inbox/{hitl_id}: listing and answering the real turns' requests."""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from api.app import create_app
from memoir.models import Classification
from memoir.models.names import turn_workflow_id
from memoir.settings import Settings
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness, until
from tests.api.support import (
    ApiUser,
    answer,
    approval_asked,
    assert_error,
    finished_view,
    get_turn,
    http_client,
    inbox_of,
    post_message,
)

GMAIL = {
    "id": "ci-1",
    "from": "CI <ci@example.com>",
    "to": "tess@example.com",
    "subject": "Nightly build passed",
    "body": "All 412 tests passed.",
}


async def test_answer_for_unknown_hitl_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    hitl_id = f"{turn_workflow_id(user.user_id, 't1', 'never-sent')}:hitl1"
    assert_error(await answer(http, user, hitl_id, {"type": "accept"}), 404, "not_found")


async def test_answer_for_another_users_hitl_is_404(
    http: httpx.AsyncClient, user: ApiUser, other_user: ApiUser, harness: Harness
) -> None:
    theirs = await approval_asked(http, other_user, harness)
    response = await answer(http, user, theirs.hitl_id, {"type": "accept"})
    assert_error(response, 404, "not_found")
    view = (await get_turn(http, other_user, theirs.turn_id)).json()
    assert (view["status"], view["pending"]["hitl_id"]) == ("awaiting_human", theirs.hitl_id)


async def test_answer_of_the_wrong_type_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    hitl_id = f"{turn_workflow_id(user.user_id, 't1', 'never-sent')}:hitl1"
    response = await answer(http, user, hitl_id, {"type": "approve"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "type"


async def test_inbox_lists_the_pending_requests_of_this_user_only(
    http: httpx.AsyncClient, user: ApiUser, other_user: ApiUser, harness: Harness
) -> None:
    mine = await approval_asked(http, user, harness, "pay rent")
    theirs = await approval_asked(http, other_user, harness, "water plants")

    async def listed(who: ApiUser, hitl_id: str) -> list[dict[str, Any]]:
        requests = await inbox_of(http, who)
        return requests if hitl_id in [r["hitl_id"] for r in requests] else []

    # Visibility is eventually consistent: wait until each request is indexed.
    await until(lambda: listed(other_user, theirs.hitl_id), "their request in their inbox")
    requests = await until(lambda: listed(user, mine.hitl_id), "my request in my inbox")
    assert [r["hitl_id"] for r in requests] == [mine.hitl_id]
    assert requests[0]["kind"] == "approval"
    assert requests[0]["action_request"]["args"]["text"] == "pay rent"


async def test_inbox_is_empty_without_pending_requests(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    response = await http.get("/v1/inbox", headers=user.headers)
    assert (response.status_code, response.json()) == (200, [])


async def test_accepted_answer_completes_the_turn_and_creates_the_reminder(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "renew passport")
    response = await answer(http, user, request.hitl_id, {"type": "accept"})
    assert response.status_code == 202, response.text
    assert response.json() == {"hitl_id": request.hitl_id, "status": "accepted"}
    view = await finished_view(http, harness, user, request.turn_id)
    assert view["status"] == "completed"
    assert [a["capability"] for a in view["actions"]] == ["reminders.create"]
    [reminder] = await harness.stores.reminders.list(user.user_id)
    assert (reminder.text, reminder.idempotency_key) == ("renew passport", f"{request.turn_id}:s1")
    result = await harness.result(request.turn_id)
    assert [(o.hitl_id, o.decision and o.decision.type) for o in result.hitl] == [
        (request.hitl_id, "accept")
    ]


async def test_answer_to_an_earlier_hitl_of_the_turn_is_409(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.unclear(), plans.remind("feed the cat", approval=True))
    routed = await post_message(http, user, harness.thread_id, "m1", "do the thing")
    turn_id = routed.json()["turn_id"]
    first = await harness.pending(turn_id)
    clarified = {"type": "response", "args": "remind me to feed the cat"}
    assert (await answer(http, user, first.hitl_id, clarified)).status_code == 202

    async def second_question() -> dict[str, Any] | None:
        pending: dict[str, Any] | None = (await get_turn(http, user, turn_id)).json()["pending"]
        return pending if pending and pending["hitl_id"] != first.hitl_id else None

    second = await until(second_question, "the approval after the clarification")
    assert second["hitl_id"] == f"{turn_id}:hitl2"
    response = await answer(http, user, first.hitl_id, {"type": "accept"})
    error = assert_error(response, 409, "not_pending")
    assert "not pending (answered or expired)" in error["message"]


async def test_answer_to_a_finished_turn_is_409(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("call mum"))
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to call mum")
    turn_id = routed.json()["turn_id"]
    await finished_view(http, harness, user, turn_id)
    response = await answer(http, user, f"{turn_id}:hitl1", {"type": "accept"})
    assert_error(response, 409, "not_pending")


async def test_answer_after_expiry_is_409(
    user: ApiUser, harness: Harness, settings: Settings, temporal_client: Client, stores: Stores
) -> None:
    short_ttl = settings.model_copy(update={"hitl_ttl_seconds": 2})
    app = create_app(short_ttl, client=temporal_client, stores=stores)
    async with http_client(app) as http:
        request = await approval_asked(http, user, harness)
        assert (request.expires_at - request.created_at).total_seconds() == 2
        view = await finished_view(http, harness, user, request.turn_id)
        assert view["status"] == "expired"
        response = await answer(http, user, request.hitl_id, {"type": "accept"})
    error = assert_error(response, 409, "not_pending")
    assert "not pending (answered or expired)" in error["message"]
    assert await harness.stores.reminders.list(user.user_id) == []


async def test_answer_not_allowed_by_the_config_is_422_with_the_reason(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await http.post("/v1/emails", json=GMAIL, headers=user.headers)
    request = await harness.pending(routed.json()["turn_id"])
    assert request.kind == "notify"
    edit = {"type": "edit", "args": {"action": "Email Assistant: notify", "args": {}}}
    response = await answer(http, user, request.hitl_id, edit)
    error = assert_error(response, 422, "invalid_answer")
    assert error["message"] == "'edit' is not allowed here; allowed: accept, ignore, response."
    view = (await get_turn(http, user, request.turn_id)).json()
    assert view["status"] == "awaiting_human"
    assert view["pending"] == request.model_dump(mode="json")


async def test_edit_that_changes_the_action_is_422(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness)
    body = {"type": "edit", "args": {"action": "calendar.schedule", "args": {}}}
    error = assert_error(await answer(http, user, request.hitl_id, body), 422, "invalid_answer")
    assert error["message"] == "An edit must keep the action 'reminders.create'."


async def test_acknowledged_notification_is_completed_with_no_reply(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await http.post("/v1/emails", json=GMAIL, headers=user.headers)
    request = await harness.pending(routed.json()["turn_id"])
    assert (await answer(http, user, request.hitl_id, {"type": "accept"})).status_code == 202
    view = await finished_view(http, harness, user, request.turn_id)
    assert (view["status"], view["classification"], view["reply"]) == (
        "completed",
        "notify",
        None,
    )

"""The inbox page in chromium answers each kind of request, and the turn does what was chosen:
accept, edit (a form of the arguments), respond, ignore, acknowledge, choose an option.

Real parts: the page served by uvicorn, the API, the Temporal dev server, the worker, Postgres.
Only the LLM is scripted (`ScriptedChatModel`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from playwright.async_api import expect

from memoir.models import Classification, TurnStatus
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, approval_asked, post_message
from tests.browser.support import InboxPage
from workflows.hitl import CANCELLED_REPLY

NOTIFY_EMAIL = {
    "id": "ci-1",
    "from": "CI <ci@example.com>",
    "to": "tess@example.com",
    "subject": "Nightly build passed",
    "body": "All 412 tests passed on **main**.",
}


async def test_accept_runs_the_proposed_step(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    card = await inbox.open(http, user, request.hitl_id)
    await expect(card.locator(".kind")).to_have_text("approval")
    await inbox.screenshot("approval")

    await card.get_by_role("button", name="Accept", exact=True).click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert result.status is TurnStatus.COMPLETED
    assert [r.text for r in await harness.stores.reminders.list(user.user_id)] == ["pay rent"]
    await expect(card).to_have_count(0)
    await expect(inbox.page.locator("#status")).to_have_text("Nothing is waiting for you.")


async def test_edit_form_shows_each_argument_and_the_edited_args_execute(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    proposed = request.action_request.args
    card = await inbox.open(http, user, request.hitl_id)
    form = card.get_by_role("form", name="Edit the arguments")
    await expect(form.get_by_label("text", exact=True)).to_have_value("pay rent")
    await expect(form.get_by_label("due_at", exact=True)).to_have_value(proposed["due_at"])
    due = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)

    await form.get_by_label("text", exact=True).fill("pay rent and the gas bill")
    await form.get_by_label("due_at", exact=True).fill(due.isoformat())
    await inbox.screenshot("approval-edited")
    await form.get_by_role("button", name="Edit and send").click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert result.status is TurnStatus.COMPLETED
    [reminder] = await harness.stores.reminders.list(user.user_id)
    assert (reminder.text, reminder.due_at) == ("pay rent and the gas bill", due)
    [action] = result.actions
    assert action.success and action.data["reminder"]["text"] == "pay rent and the gas bill"


async def test_respond_sends_the_feedback_and_the_turn_replans_with_it(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    replanned = plans.remind("pay rent on Friday")
    harness.llm.script("Plan", plans.remind("pay rent", approval=True), replanned)
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to pay rent")
    request = await harness.pending(routed.json()["turn_id"])
    card = await inbox.open(http, user, request.hitl_id)

    await card.get_by_label("Your answer").fill("make it Friday instead")
    await card.get_by_role("button", name="Respond", exact=True).click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert result.status is TurnStatus.COMPLETED
    first, second = harness.llm.calls_for("Plan")
    assert "make it Friday instead" not in first.text
    assert "make it Friday instead" in second.text
    texts = [r.text for r in await harness.stores.reminders.list(user.user_id)]
    assert texts == ["pay rent on Friday"]


async def test_ignore_cancels_and_nothing_runs(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    card = await inbox.open(http, user, request.hitl_id)

    await card.get_by_role("button", name="Ignore", exact=True).click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert (result.status, result.reply, result.actions) == (
        TurnStatus.COMPLETED,
        CANCELLED_REPLY,
        [],
    )
    assert await harness.stores.reminders.list(user.user_id) == []
    await expect(card).to_have_count(0)


async def test_acknowledge_closes_a_notification_with_no_reply(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await http.post("/v1/emails", json=NOTIFY_EMAIL, headers=user.headers)
    request = await harness.pending(routed.json()["turn_id"])
    card = await inbox.open(http, user, request.hitl_id)
    await expect(card.locator(".description strong").first).to_have_text("Subject")
    await inbox.screenshot("notification")

    await card.get_by_role("button", name="Acknowledge", exact=True).click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert (result.status, result.classification, result.reply) == (
        TurnStatus.COMPLETED,
        Classification.NOTIFY,
        None,
    )
    await expect(card).to_have_count(0)


async def test_choosing_a_disambiguation_option_acts_on_that_one_only(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    reminders = harness.stores.reminders
    due = datetime.now(UTC) + timedelta(hours=3)
    made = {}
    for who in ("Alice", "Bob"):
        made[who] = await reminders.create(
            user_id=user.user_id,
            thread_id=harness.thread_id,
            text=f"pay rent to {who}",
            due_at=due,
            idempotency_key=f"seed-{who}:s1",
        )
    harness.llm.script("Plan", plans.complete("pay rent"))
    routed = await post_message(http, user, harness.thread_id, "m1", "I paid the rent")
    request = await harness.pending(routed.json()["turn_id"])
    assert request.kind == "disambiguation"
    card = await inbox.open(http, user, request.hitl_id)
    await inbox.screenshot("disambiguation")

    await card.get_by_role("button", name="pay rent to Bob").click()

    await expect(card.locator(".result")).to_have_text("Answer accepted.")
    result = await harness.result(request.turn_id)
    assert result.status is TurnStatus.COMPLETED
    bob = await reminders.get(user.user_id, made["Bob"].reminder_id)
    alice = await reminders.get(user.user_id, made["Alice"].reminder_id)
    assert bob is not None and bob.status == "completed"
    assert alice is not None and alice.status == "pending"

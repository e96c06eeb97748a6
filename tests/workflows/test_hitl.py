"""The HITL contract: expiry by timer, re-ask on invalid answers, one answer only, learning."""

import time
from datetime import timedelta

from temporalio.api.enums.v1 import EventType

from memoir.models import EmailMessage, HumanResponse, RouteStatus, TurnStatus, names
from memoir.models.hitl import ActionRequest, HitlKind
from memoir.models.plan import Classification
from temporal import scenarios as plans
from temporal.harness import Harness

NOTIFY_EMAIL = EmailMessage(
    email_id="n1",
    author="CI <ci@example.com>",
    to="tess@example.com",
    subject="Nightly build passed",
    body="All 412 tests passed.",
)


async def test_unanswered_question_expires_after_ttl_in_under_a_second(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("pay rent", approval=True))
    routed = await harness.send("remind me to pay rent")
    request = await harness.pending(routed.turn_id or "")
    assert (request.expires_at - request.created_at).total_seconds() == 300
    started = time.monotonic()
    await harness.skip(timedelta(seconds=301))
    result = await harness.result(routed.turn_id or "")
    assert time.monotonic() - started < 1.0
    assert result.status is TurnStatus.EXPIRED
    assert "expired" in (result.reply or "")
    assert result.actions == []
    assert [o.status for o in result.hitl] == ["expired"]
    assert await harness.stores.reminders.list(harness.user.user_id) == []


async def test_the_next_activity_starts_in_the_workflow_task_that_takes_the_answer(
    harness: Harness,
) -> None:
    """Patch `hitl-close-unawaited`: telling the thread the question closed costs no round trip."""
    harness.llm.script("Plan", await harness.remind_plan("pay rent", approval=True))
    turn_id = (await harness.send("remind me to pay rent")).turn_id or ""
    request = await harness.pending(turn_id)
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(turn_id)
    history = await harness.client.get_workflow_handle(turn_id).fetch_history()
    kinds = [e.event_type for e in history.events]
    answered = kinds.index(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
    execute = next(
        i
        for i, e in enumerate(history.events)
        if e.activity_task_scheduled_event_attributes.activity_type.name == names.EXECUTE_STEP
    )
    between = kinds[answered:execute]
    assert between.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) == 1
    assert EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED in between
    assert EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED in kinds[execute:]
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success


async def test_invalid_chat_answer_reasks_with_error_under_same_id(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("buy milk", approval=True))
    routed = await harness.send("remind me to buy milk")
    first = await harness.pending(routed.turn_id or "")
    reply = await harness.send("maybe later, perhaps")
    assert reply.status is RouteStatus.ROUTED_TO_PENDING
    assert reply.reply is not None and reply.reply.startswith("⚠️ Please answer yes or no.")
    again = await harness.pending(routed.turn_id or "")
    assert again.hitl_id == first.hitl_id
    assert again.error == "Please answer yes or no."
    assert again.expires_at == first.expires_at
    await harness.send("yes")
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert [r.text for r in await harness.stores.reminders.list(harness.user.user_id)] == [
        "buy milk"
    ]


async def test_second_answer_changes_nothing(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("book flights", approval=True))
    routed = await harness.send("remind me to book flights")
    request = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    await harness.answer_inbox(request, HumanResponse(type="ignore"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert [o.decision.type for o in result.hitl if o.decision] == ["accept"]
    assert len(result.actions) == 1 and result.actions[0].success


async def test_approval_edit_executes_the_edited_args(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("call dad", approval=True))
    routed = await harness.send("remind me to call dad")
    request = await harness.pending(routed.turn_id or "")
    edited = {**request.action_request.args, "text": "call dad and grandma"}
    await harness.answer_inbox(
        request,
        HumanResponse(type="edit", args=ActionRequest(action="reminders.create", args=edited)),
    )
    result = await harness.result(routed.turn_id or "")
    assert result.actions[0].args["text"] == "call dad and grandma"


async def test_clarification_answer_replans_with_it(harness: Harness) -> None:
    harness.llm.script("Plan", plans.unclear(), await harness.remind_plan("feed the cat"))
    routed = await harness.send("do the thing")
    request = await harness.pending(routed.turn_id or "")
    assert request.kind is HitlKind.INTENT_UNCLEAR
    await harness.send("remind me to feed the cat")
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    plan_calls = harness.llm.calls_for("Plan")
    assert "feed the cat" in plan_calls[-1].text


async def test_notify_then_respond_updates_triage_preferences(harness: Harness) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send("", email=NOTIFY_EMAIL)
    request = await harness.pending(routed.turn_id or "")
    assert request.kind is HitlKind.NOTIFY
    assert [o.id for o in request.options] == ["respond", "acknowledge", "ignore"]
    assert request.config.allow_accept
    await harness.answer_inbox(request, HumanResponse(type="response", args="thank them"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "triage_preferences"
    )
    assert latest.decision == "notify.respond"


async def test_notify_then_ignore_updates_triage_preferences(harness: Harness) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await harness.send("", email=NOTIFY_EMAIL)
    request = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(request, HumanResponse(type="ignore"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.IGNORED
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "triage_preferences"
    )
    assert latest.decision == "notify.ignore"


NOTIFY_LESSON = (
    '- Notify: emails from ci@example.com with subjects like "Nightly build passed" '
    '(you acknowledged "Nightly build passed")'
)


async def test_acknowledge_closes_a_notify_turn_and_writes_a_notify_lesson(
    harness: Harness,
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await harness.send("", email=NOTIFY_EMAIL)
    request = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert (result.status, result.classification, result.reply) == (
        TurnStatus.COMPLETED,
        Classification.NOTIFY,
        None,
    )
    assert harness.llm.calls_for("Plan") == []  # closed: nothing planned, nothing sent
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "triage_preferences"
    )
    assert latest.decision == "notify.acknowledge"
    notify_section = latest.content.split("Notify (", 1)[1].split("\n\n", 1)[0]
    assert notify_section.splitlines()[-1] == NOTIFY_LESSON


async def test_chat_thanks_acknowledges_a_pending_notify_question(harness: Harness) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await harness.send("", email=NOTIFY_EMAIL)
    await harness.pending(routed.turn_id or "")
    answered = await harness.send("Thanks!")
    assert (answered.status, answered.reply) == (RouteStatus.ROUTED_TO_PENDING, None)
    result = await harness.result(routed.turn_id or "")
    assert (result.status, result.reply) == (TurnStatus.COMPLETED, None)
    assert [o.decision.type for o in result.hitl if o.decision] == ["accept"]
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "triage_preferences"
    )
    assert latest.decision == "notify.acknowledge"


async def test_expired_notify_learns_nothing(harness: Harness) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await harness.send("", email=NOTIFY_EMAIL)
    await harness.pending(routed.turn_id or "")
    await harness.skip(timedelta(seconds=301))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.EXPIRED
    history = await harness.stores.preferences.history(harness.user.user_id, "triage_preferences")
    assert [v.decision for v in history] in ([], ["default"])

"""Offline planner: latest actions, missing fields, feedback on re-plan, and the prompt."""

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.models import EmailMessage, LatestAction, Plan, RecentMessage
from memoir.planner import clarification_feedback, make_plan, respond_feedback

NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)
PARIS = ZoneInfo("Europe/Paris")
CAPS = ["reminders.create", "reminders.delete", "calendar.cancel"]

REMINDER = LatestAction(
    created_at=NOW - timedelta(minutes=5),
    capability="reminders.create",
    action="create",
    summary='Reminder "call mom" set for 17:00',
    when="2025-01-15T17:00:00+01:00",
    external_ids={"reminder_id": "r42"},
)
MEETING = LatestAction(
    created_at=NOW - timedelta(minutes=30),
    capability="calendar.schedule",
    action="schedule",
    summary='Scheduled "Sync with Dan"',
    external_ids={"event_uid": "ev7"},
)


async def plan(offline: OfflineChatModel, plan_request: Any, text: str, **kw: Any) -> Plan:
    return await make_plan(offline, plan_request(text, **kw), CAPS)


async def test_cancel_it_deletes_the_most_recent_reminder_by_id(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "cancel it", latest=[MEETING, REMINDER])
    assert [(s.capability, s.args) for s in result.steps] == [
        ("reminders.delete", {"query": "call mom", "reminder_id": "r42"})
    ]
    assert result.needs_approval and "strongest candidate" in result.reasoning


async def test_cancel_it_picks_the_meeting_when_it_is_most_recent(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    newer_meeting = MEETING.model_copy(update={"created_at": NOW})
    result = await plan(offline, plan_request, "cancel it", latest=[REMINDER, newer_meeting])
    assert [(s.capability, s.args) for s in result.steps] == [
        ("calendar.cancel", {"query": "Sync with Dan", "event_uid": "ev7"})
    ]


async def test_mark_it_done_completes_the_latest_reminder(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "mark it done", latest=[REMINDER])
    assert result.steps[0].capability == "reminders.complete"
    assert result.steps[0].args["reminder_id"] == "r42"


async def test_move_it_replaces_the_reminder_with_dependent_steps(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "move it to 6pm", latest=[REMINDER])
    delete, create = result.steps
    assert delete.capability == "reminders.delete" and create.capability == "reminders.create"
    assert create.depends_on == [delete.id]
    assert datetime.fromisoformat(create.args["due_at"]) == datetime(2025, 1, 15, 18, tzinfo=PARIS)


async def test_move_that_meeting_skips_reminders_for_the_calendar_action(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(
        offline, plan_request, "move that meeting to Friday at 3pm", latest=[REMINDER, MEETING]
    )
    assert [s.capability for s in result.steps] == ["calendar.update"]


async def test_referential_message_without_latest_actions_is_intent_unclear(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    for text in ("do it", "cancel it", "that one"):
        result = await plan(offline, plan_request, text)
        assert result.intent == "intent_unclear" and result.confidence == 0.3, text
        assert result.question and not result.steps


async def test_do_it_accepts_the_assistants_last_proposal(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    recent = [
        RecentMessage(role="user", content="I need to call the bank", at=NOW),
        RecentMessage(
            role="assistant", content="Want me to remind you to call the bank at 4pm?", at=NOW
        ),
    ]
    result = await plan(offline, plan_request, "yes do it", recent=recent)
    assert [(s.capability, s.args["text"]) for s in result.steps] == [
        ("reminders.create", "call the bank")
    ]


async def test_remind_me_without_time_asks_when(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "remind me to call mom")
    assert result.missing_fields == ["when"] and not result.steps
    assert result.question == "When should I remind you to call mom?"


async def test_remind_me_without_text_asks_what(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "remind me at 5pm")
    assert result.missing_fields == ["what"] and result.question


async def test_remind_me_alone_asks_what_and_when(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(offline, plan_request, "remind me")
    assert result.missing_fields == ["what", "when"]


async def test_clarified_time_completes_the_request_on_replan(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(
        offline,
        plan_request,
        "remind me to call mom",
        feedback=[clarification_feedback("at 5pm")],
    )
    assert [(s.capability, s.args["text"]) for s in result.steps] == [
        ("reminders.create", "call mom")
    ]
    assert "completes the request" in result.reasoning


async def test_clarification_that_is_a_full_request_replaces_an_unclear_one(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    result = await plan(
        offline,
        plan_request,
        "do it",
        feedback=[clarification_feedback("remind me to stretch in 10 minutes")],
    )
    assert result.steps[0].args["text"] == "stretch"
    assert "replaces" in result.reasoning


async def test_respond_feedback_goes_into_the_reply_draft(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    incoming = EmailMessage(
        email_id="e1",
        author="Dan <dan@acme.com>",
        to="ana@me.example",
        subject="Thursday?",
        body="Are you free Thursday at 2pm?",
    )
    result = await plan(
        offline,
        plan_request,
        incoming.body,
        email=incoming,
        feedback=[respond_feedback("tell him Thursday 2pm works")],
    )
    assert "Thursday 2pm works." in result.steps[0].args["body"]


async def test_planner_prompt_lists_capabilities_latest_actions_and_now(
    plan_request: Any,
) -> None:
    llm = ScriptedChatModel(responses={"Plan": [{"intent": "x", "confidence": 0.9}]})
    await make_plan(
        llm,
        plan_request("cancel it", latest=[MEETING, REMINDER], bullets=["Has a dog named Luna"]),
        CAPS,
    )
    seen = llm.calls_for("Plan")[0].text
    assert "## Connected Capabilities\n- reminders.create\n- reminders.delete" in seen
    block = seen.split("## Latest Actions\n", 1)[1]
    assert block.index("call mom") < block.index("Sync with Dan")  # newest first
    assert "- Has a dog named Luna" in seen
    assert "ISO: 2025-01-15T10:30:00+01:00\nTimezone: Europe/Paris" in seen
    assert seen.rstrip().endswith("## Request\ncancel it")


async def test_latest_action_recorded_by_family_and_action_is_found(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    as_recorded = REMINDER.model_copy(update={"capability": "reminders"})
    result = await plan(offline, plan_request, "cancel it", latest=[as_recorded])
    assert [s.capability for s in result.steps] == ["reminders.delete"]

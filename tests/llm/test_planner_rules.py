"""Offline planner: one intent per test."""

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memoir.llm import OfflineChatModel
from memoir.models import Plan
from memoir.planner import make_plan

CAPS = [
    "reminders.create",
    "reminders.list",
    "reminders.complete",
    "reminders.delete",
    "email.send",
    "calendar.schedule",
    "calendar.update",
    "calendar.cancel",
]
PARIS = ZoneInfo("Europe/Paris")


async def plan_for(offline: OfflineChatModel, plan_request: Any, text: str, **kw: Any) -> Plan:
    return await make_plan(offline, plan_request(text, **kw), CAPS)


def only_step(plan: Plan) -> tuple[str, dict[str, Any]]:
    assert len(plan.steps) == 1, plan
    return plan.steps[0].capability, plan.steps[0].args


async def test_remind_me_creates_a_reminder_due_in_the_user_timezone(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "remind me to call mom at 5pm tomorrow")
    capability, args = only_step(plan)
    assert capability == "reminders.create"
    assert args["text"] == "call mom"
    assert datetime.fromisoformat(args["due_at"]) == datetime(2025, 1, 16, 17, tzinfo=PARIS)
    assert plan.intent_type == "operation" and not plan.needs_approval and plan.risk == "low"


@pytest.mark.parametrize("text", ["what are my reminders?", "list reminders", "show my reminders"])
async def test_reminder_questions_list_reminders(
    offline: OfflineChatModel, plan_request: Any, text: str
) -> None:
    assert only_step(await plan_for(offline, plan_request, text)) == ("reminders.list", {})


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("done with the dentist", "dentist"),
        ("mark the dentist reminder as done", "dentist"),
        ("complete pay rent", "pay rent"),
    ],
)
async def test_done_and_complete_phrases_complete_a_reminder(
    offline: OfflineChatModel, plan_request: Any, text: str, query: str
) -> None:
    plan = await plan_for(offline, plan_request, text)
    assert only_step(plan) == ("reminders.complete", {"query": query})
    assert not plan.needs_approval


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("delete the dentist reminder", "dentist"),
        ("cancel the reminder to call mom", "call mom"),
        ("remove the gym reminder", "gym"),
    ],
)
async def test_deleting_one_reminder_needs_approval_at_medium_risk(
    offline: OfflineChatModel, plan_request: Any, text: str, query: str
) -> None:
    plan = await plan_for(offline, plan_request, text)
    assert only_step(plan) == ("reminders.delete", {"query": query})
    assert plan.needs_approval and plan.risk == "medium"


async def test_deleting_all_reminders_is_one_high_risk_step_needing_approval(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "delete all my reminders")
    assert only_step(plan) == ("reminders.delete", {"all": True})
    assert plan.needs_approval and plan.risk == "high"


async def test_email_someone_plans_an_email_send_needing_approval(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "email Dan about the budget: can we meet Monday?")
    capability, args = only_step(plan)
    assert capability == "email.send"
    assert args["to"] == "Dan" and args["subject"] == "The budget"
    assert "Can we meet Monday?" in args["body"] and args["body"].startswith("Hi Dan,")
    assert plan.needs_approval and plan.risk == "medium"


async def test_reply_to_someone_saying_plans_an_email(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    capability, args = only_step(
        await plan_for(offline, plan_request, "reply to Sarah saying see you there")
    )
    assert capability == "email.send" and args["to"] == "Sarah"
    assert "See you there." in args["body"]


async def test_email_without_content_asks_for_the_body(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "email Dan")
    assert plan.missing_fields == ["body"] and not plan.steps
    assert plan.question and "Dan" in plan.question


async def test_schedule_a_meeting_plans_calendar_schedule_needing_approval(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(
        offline, plan_request, "schedule a meeting with Dan and Alice on Friday at 10am"
    )
    capability, args = only_step(plan)
    assert capability == "calendar.schedule"
    assert args["attendees"] == ["Dan", "Alice"]
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 17, 10, tzinfo=PARIS)
    assert args["duration_minutes"] == 30
    assert plan.needs_approval


async def test_am_i_free_checks_the_calendar_over_the_day_asked_about(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "am I free tomorrow afternoon?")
    capability, args = only_step(plan)
    assert capability == "calendar.availability" and not plan.needs_approval
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 16, tzinfo=PARIS)
    assert datetime.fromisoformat(args["end"]) == datetime(2025, 1, 17, tzinfo=PARIS)


async def test_a_calendar_check_for_today_starts_now(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    _capability, args = only_step(await plan_for(offline, plan_request, "what's on for today"))
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 15, 10, 30, tzinfo=PARIS)


async def test_move_a_meeting_plans_calendar_update_needing_approval(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "move my meeting with Dan to Friday at 2pm")
    capability, args = only_step(plan)
    assert capability == "calendar.update" and args["query"] == "meeting with Dan"
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 17, 14, tzinfo=PARIS)
    assert plan.needs_approval


async def test_cancel_a_meeting_plans_calendar_cancel_needing_approval(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "cancel my meeting with Dan")
    assert only_step(plan) == ("calendar.cancel", {"query": "meeting with Dan"})
    assert plan.needs_approval


@pytest.mark.parametrize(
    ("text", "intent"),
    [("hi", "greeting"), ("thanks!", "thanks"), ("what's the capital of France?", "question")],
)
async def test_greetings_thanks_and_questions_are_conversation_without_steps(
    offline: OfflineChatModel, plan_request: Any, text: str, intent: str
) -> None:
    plan = await plan_for(offline, plan_request, text)
    assert plan.intent_type == "conversation" and plan.intent == intent and not plan.steps


async def test_gibberish_is_intent_unclear_with_a_question(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "blorf the quux")
    assert plan.intent == "intent_unclear" and plan.confidence == 0.3 and plan.question


async def test_email_to_respond_to_plans_one_reply_to_its_author(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    from memoir.models import EmailMessage

    incoming = EmailMessage(
        email_id="e9",
        author="Dan Smith <dan@acme.com>",
        to="ana@me.example",
        subject="Question about the API",
        body="Does the /v2/users endpoint support pagination?",
    )
    plan = await plan_for(offline, plan_request, incoming.body, email=incoming)
    capability, args = only_step(plan)
    assert capability == "email.send"
    assert args["to"] == "Dan Smith <dan@acme.com>"
    assert args["subject"] == "Re: Question about the API"
    assert args["in_reply_to"] == "e9"
    assert args["body"].startswith("Hi Dan,") and "Best regards,\nAna" in args["body"]
    assert plan.needs_approval


async def test_email_reply_follows_learned_sign_off_preference(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    from memoir.models import EmailMessage

    incoming = EmailMessage(
        email_id="e9", author="dan@acme.com", to="ana@me.example", subject="Hi", body="Free?"
    )
    plan = await make_plan(
        offline,
        plan_request(incoming.body, email=incoming),
        CAPS,
        preferences={
            "response_preferences": "Be brief.\n- When replying, prefer: opening with "
            '"Hey <name>,"; signing off with "Cheers, Ana"'
        },
    )
    body = plan.steps[0].args["body"]
    assert body.startswith("Hey Dan,") and body.endswith("Cheers,\nAna")


async def test_fact_statement_is_conversation_not_unclear(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(offline, plan_request, "My dog Luna is 3 and I live in Lisbon")
    assert (plan.intent, plan.intent_type, plan.steps) == ("share a fact", "conversation", [])
    assert plan.confidence >= 0.6

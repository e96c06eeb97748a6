"""Offline planner: response and calendar preferences are applied, feedback revises a draft, a
meeting request by email is checked against the calendar, and every plan says what fired."""

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.models import EmailMessage, Plan
from memoir.planner import approval_feedback, make_plan, respond_feedback

PARIS = ZoneInfo("Europe/Paris")
CAPS = ["reminders", "email", "calendar"]
MEETING_EMAIL = EmailMessage(
    email_id="e7",
    author="Dan Smith <dan@acme.com>",
    to="ana@me.example",
    subject="Roadmap",
    body="Hi Ana, could we schedule a 30 minute meeting on Thursday at 3pm to discuss the "
    "roadmap? Thanks, Dan",
)
QUESTION_EMAIL = EmailMessage(
    email_id="e8",
    author="Dan Smith <dan@acme.com>",
    to="ana@me.example",
    subject="Pagination",
    body="Does the /v2/users endpoint support pagination?",
)


async def plan_for(
    llm: Any, plan_request: Any, text: str, caps: list[str] = CAPS, prefs: Any = None, **kw: Any
) -> Plan:
    return await make_plan(llm, plan_request(text, **kw), caps, prefs)


async def reply_to_meeting(offline: Any, plan_request: Any, *feedback: Any) -> Plan:
    """The plan for MEETING_EMAIL with only email connected, given this feedback."""
    return await plan_for(
        offline, plan_request, MEETING_EMAIL.body, ["email"], email=MEETING_EMAIL, feedback=feedback
    )


def _step(plan: Plan, capability: str) -> dict[str, Any]:
    return next(s.args for s in plan.steps if s.capability == capability)


async def test_email_drafts_follow_the_sign_off_and_tone(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    prefs = {
        "response_preferences": 'Sign off emails with "Cheers, Sam".\nWrite emails in a warm tone.'
    }
    reply = await plan_for(
        offline, plan_request, QUESTION_EMAIL.body, ["email"], prefs, email=QUESTION_EMAIL
    )
    body = _step(reply, "email.send")["body"]
    assert body.endswith("Cheers,\nSam") and "I hope you're doing well!" in body
    assert "sign_off" in reply.reasoning
    chat = await plan_for(offline, plan_request, "email Dan that the report is ready", prefs=prefs)
    assert _step(chat, "email.send")["body"].endswith("Cheers,\nSam")


async def test_a_greeting_preference_is_written_as_the_person_wrote_it(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    prefs = {"response_preferences": 'Start emails with "Hey {team} <name>,".'}
    reply = await plan_for(
        offline, plan_request, QUESTION_EMAIL.body, ["email"], prefs, email=QUESTION_EMAIL
    )
    assert _step(reply, "email.send")["body"].startswith("Hey {team} Dan,\n\n")


async def test_schedule_follows_meeting_length_hours_days_and_attendees(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    cal = {
        "cal_preferences": "Meetings last 45 minutes.\nAvoid meetings before 10:00.\n"
        "Avoid meetings on Fridays.\nInvite dana@example.com to meetings by default."
    }
    plan = await plan_for(
        offline, plan_request, "schedule a call with Bob on Friday at 9am", prefs=cal
    )
    args = _step(plan, "calendar.schedule")
    assert args["duration_minutes"] == 45
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 20, 10, tzinfo=PARIS)
    assert args["attendees"] == ["Bob", "dana@example.com"]
    assert "Fridays" in plan.reasoning and "before 10:00" in plan.reasoning


async def test_a_meeting_that_would_end_after_the_avoided_hour_starts_earlier(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    cal = {"cal_preferences": "Avoid meetings after 17:00."}
    plan = await plan_for(
        offline, plan_request, "book a meeting with Ann tomorrow at 4:45pm for an hour", prefs=cal
    )
    args = _step(plan, "calendar.schedule")
    assert args["duration_minutes"] == 60
    assert datetime.fromisoformat(args["start"]) == datetime(2025, 1, 16, 16, tzinfo=PARIS)


async def test_the_prompt_shows_both_preference_texts(plan_request: Any) -> None:
    llm = ScriptedChatModel(responses={"Plan": [{"intent": "x", "confidence": 0.9}]})
    prefs = {
        "response_preferences": 'Sign off emails with "Best, Sam".',
        "cal_preferences": "Meetings last 45 minutes.",
    }
    await plan_for(llm, plan_request, "hi", prefs=prefs)
    seen = llm.calls_for("Plan")[0].text
    section = seen.split("## Preferences\n", 1)[1].split("\n## ", 1)[0]
    assert 'Response preferences:\nSign off emails with "Best, Sam".' in section
    assert "Calendar preferences:\nMeetings last 45 minutes." in section


async def test_feedback_on_a_draft_revises_it_instead_of_becoming_the_body(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    first = await reply_to_meeting(offline, plan_request)
    draft = _step(first, "email.send")["body"]
    feedback = approval_feedback("email.send", "Propose Thursday 3pm works, and keep it shorter")
    revised = await reply_to_meeting(offline, plan_request, feedback)
    body = _step(revised, "email.send")["body"]
    assert "Thursday 3pm works for me." in body
    assert "shorter" not in body and "Propose" not in body
    assert len(body) < len(draft) and body.startswith("Hi Dan,") and body.endswith("Ana")
    assert "goes into the draft" in revised.reasoning and "changes the style" in revised.reasoning


async def test_respond_feedback_content_goes_into_the_reply(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    feedback = respond_feedback("tell him Thursday 2pm works, and make it warmer")
    plan = await reply_to_meeting(offline, plan_request, feedback)
    body = _step(plan, "email.send")["body"]
    assert "Thursday 2pm works." in body and "I hope you're doing well!" in body
    assert "warmer" not in body


async def test_feedback_is_cut_into_clauses_as_the_preference_learner_cuts_it(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    feedback = respond_feedback("say Thursday works, and please keep it short")
    plan = await reply_to_meeting(offline, plan_request, feedback)
    body = _step(plan, "email.send")["body"]
    assert "Thursday works." in body and "keep it short" not in body
    assert "“please keep it short” changes the style" in plan.reasoning


async def test_a_meeting_request_with_a_time_checks_the_calendar_and_proposes_the_event(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await plan_for(
        offline,
        plan_request,
        MEETING_EMAIL.body,
        email=MEETING_EMAIL,
        prefs={"cal_preferences": "Meetings last 45 minutes."},
    )
    check, schedule = plan.steps
    assert check.capability == "calendar.availability"
    assert schedule.capability == "calendar.schedule" and schedule.depends_on == [check.id]
    start = datetime.fromisoformat(schedule.args["start"])
    assert start == datetime(2025, 1, 16, 15, tzinfo=PARIS)
    assert datetime.fromisoformat(check.args["start"]) <= start
    assert datetime.fromisoformat(check.args["end"]) > start
    assert schedule.args["duration_minutes"] == 30  # the email's length beats the preference
    assert schedule.args["attendees"] == ["dan@acme.com"]
    assert plan.needs_approval and "I'll check my calendar" not in plan.model_dump_json()


async def test_without_the_calendar_a_meeting_request_gets_a_reply(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await reply_to_meeting(offline, plan_request)
    assert [s.capability for s in plan.steps] == ["email.send"]


async def test_reasoning_names_the_rule_or_the_nearest_example(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    ruled = await plan_for(offline, plan_request, "remind me to call mom at 5pm")
    assert "Intent reminders.create: a rule fired on" in ruled.reasoning
    fuzzy = await plan_for(offline, plan_request, "nudge me at 9 to stretch")
    assert [s.capability for s in fuzzy.steps] == ["reminders.create"]
    assert fuzzy.steps[0].args["text"] == "stretch"
    assert "nearest example" in fuzzy.reasoning

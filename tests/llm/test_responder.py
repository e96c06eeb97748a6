"""write_reply: join, format (user timezone), write."""

from datetime import UTC, datetime
from typing import Any

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.llm.offline_writer import conversation_reply, write_reply_offline
from memoir.llm.providers import write
from memoir.models import Classification, EmailMessage, ExecutionResult, Plan, PlanStep
from memoir.responder import (
    format_when,
    join_status,
    reply_messages,
    write_reply,
    writer_request,
)


def ok(step_id: str, capability: str, **data: Any) -> ExecutionResult:
    return ExecutionResult(
        step_id=step_id, capability=capability, success=True, summary="ok", data=data
    )


def failed(step_id: str, capability: str, error: str) -> ExecutionResult:
    return ExecutionResult(
        step_id=step_id, capability=capability, success=False, summary="failed", error=error
    )


def plan_of(*steps: PlanStep) -> Plan:
    return Plan(intent="test", confidence=0.9, steps=list(steps))


REMINDER = PlanStep(
    id="s1",
    capability="reminders.create",
    args={"text": "call mom", "due_at": "2025-01-16T17:00:00+01:00"},
)


async def test_created_reminder_is_confirmed_with_time_in_user_timezone(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    reply = await write_reply(
        offline, reply_request("remind me", plan_of(REMINDER), [ok("s1", "reminders.create")])
    )
    assert reply == "Done — I'll remind you to call mom at 17:00 tomorrow (Europe/Paris)."


async def test_reminder_time_is_shown_in_a_far_east_timezone(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    step = REMINDER.model_copy(
        update={"args": {"text": "call mom", "due_at": "2025-01-15T20:00:00+00:00"}}
    )
    reply = await write_reply(
        offline,
        reply_request("x", plan_of(step), [ok("s1", "reminders.create")], tz="Pacific/Kiritimati"),
    )
    # 09:30 UTC is 23:30 in Kiritimati, so 20:00 UTC the same day is 10:00 "tomorrow" there.
    assert "at 10:00 tomorrow (Pacific/Kiritimati)" in reply


async def test_listed_reminders_are_bullets(offline: OfflineChatModel, reply_request: Any) -> None:
    result = ok(
        "s1",
        "reminders.list",
        reminders=[
            {"text": "call mom", "due_at": "2025-01-16T16:00:00Z"},
            {"text": "pay rent", "due_at": "2025-01-20T08:00:00Z"},
        ],
    )
    reply = await write_reply(
        offline,
        reply_request("list", plan_of(PlanStep(id="s1", capability="reminders.list")), [result]),
    )
    assert reply == (
        "Here are your reminders:\n- call mom — 17:00 tomorrow (Europe/Paris)\n"
        "- pay rent — 09:00 on Monday (Europe/Paris)"
    )


async def test_partial_failure_is_said_plainly(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    email = PlanStep(id="s2", capability="email.send", args={"to": "Dan", "subject": "Late"})
    reply = await write_reply(
        offline,
        reply_request(
            "x",
            plan_of(REMINDER, email),
            [
                ok("s1", "reminders.create"),
                failed("s2", "email.send", "SMTP refused the connection"),
            ],
        ),
    )
    assert reply.startswith("I did part of it (1 of 2 steps):")
    assert "- Failed: I couldn't send the email to Dan: SMTP refused the connection" in reply


async def test_note_is_said(offline: OfflineChatModel, reply_request: Any) -> None:
    note = "The approval request expired after 5 minutes, so nothing was done."
    assert await write_reply(offline, reply_request("x", None, [], note=note)) == note


async def test_conversation_gets_a_polite_answer(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    plan = Plan(intent="greeting", intent_type="conversation", confidence=0.9)
    assert await write_reply(offline, reply_request("hi", plan, [])) == (
        "Hi Ana! How can I help you today?"
    )


async def test_ignored_email_reply_names_the_email(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    email = EmailMessage(
        email_id="e",
        author="news@acme.example",
        to="ana@me.example",
        subject="Acme Weekly",
        body="...",
    )
    reply = await write_reply(
        offline, reply_request("x", None, [], email=email, classification=Classification.IGNORE)
    )
    assert "Acme Weekly" in reply


async def test_writer_prompt_shows_status_and_formatted_results(reply_request: Any) -> None:
    llm = ScriptedChatModel(replies=["written"])
    reply = await write_reply(
        llm, reply_request("remind me", plan_of(REMINDER), [ok("s1", "reminders.create")])
    )
    seen = llm.calls_for(None)[0].text
    assert reply == "written"
    assert "## Status\nall_succeeded" in seen
    assert "- ok | reminders.create | I'll remind you to call mom at 17:00 tomorrow" in seen


def test_join_status_distinguishes_partial_and_total_failure() -> None:
    assert join_status([]) == "nothing_executed"
    assert join_status([ok("a", "x")]) == "all_succeeded"
    assert join_status([failed("a", "x", "e")]) == "all_failed"
    assert join_status([ok("a", "x"), failed("b", "x", "e")]).startswith("partial_failure")


def test_format_when_uses_relative_days_in_the_user_timezone() -> None:
    now = datetime(2025, 1, 15, 23, 30, tzinfo=UTC)  # already the 16th in Tokyo
    assert format_when("2025-01-16T00:00:00+00:00", now, "Asia/Tokyo") == (
        "09:00 today (Asia/Tokyo)"
    )


def test_fact_statement_is_acknowledged() -> None:
    assert conversation_reply("Luna turned 4 last week") == "Got it — I'll remember that."


def test_remembered_fact_is_said_without_its_citation() -> None:
    memory = ["- User's dog Luna is 4 years old. [sources: m1, m2]"]
    reply = conversation_reply("how old is luna", memory=memory)
    assert reply == "From what I remember: User's dog Luna is 4 years old."


def test_remembered_messages_are_said_with_their_date_and_speaker() -> None:
    fact = ["- [2025-01-14] User's dog Luna is 4 years old. [sources: m1]"]
    said = ["- [2023-05-07, Maya] I lost my job as a banker [sources: D3-4]"]
    assert conversation_reply("how old is luna", memory=fact) == (
        "From what I remember: User's dog Luna is 4 years old."
    )
    assert conversation_reply("what about the banker job", memory=said) == (
        "From what I remember: On 2023-05-07, Maya said: I lost my job as a banker."
    )


async def test_writer_prompt_shows_the_response_and_calendar_preferences(
    reply_request: Any,
) -> None:
    llm = ScriptedChatModel(replies=["written"])
    preferences = {
        "response_preferences": "Write emails in a warm tone.",
        "cal_preferences": "Meetings last 45 minutes.",
    }
    await write_reply(llm, reply_request("hi", None, []), preferences=preferences)
    seen = llm.calls_for(None)[0].text
    assert (
        "## Preferences\nResponse preferences:\nWrite emails in a warm tone.\n\n"
        "Calendar preferences:\nMeetings last 45 minutes." in seen
    )


async def test_offline_writer_greets_in_the_preferred_tone(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    plan = Plan(intent="greeting", intent_type="conversation", confidence=0.9)
    casual = {"response_preferences": "Keep it casual."}
    reply = await write_reply(offline, reply_request("hi", plan, []), preferences=casual)
    assert reply == "Hey Ana! How can I help you today?"


async def test_offline_writer_reads_the_typed_request_not_the_prompt(
    offline: OfflineChatModel, reply_request: Any
) -> None:
    request = writer_request(reply_request("x", plan_of(REMINDER), [ok("s1", "reminders.create")]))
    request.results[0].text = "I'll remind you to water the plants"
    assert await write(offline, request, render=reply_messages, offline=write_reply_offline) == (
        "Done — I'll remind you to water the plants."
    )

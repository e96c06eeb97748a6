"""Preferences are applied (issue 10): a turn after a preference edit shows it in its result, with
the offline planner (the harness's scripted model has no Plan script, so it falls back)."""

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.caldav_server import CalDAVServer
from memoir.mail_sink import MailSink
from memoir.models import Classification, EmailMessage, HumanResponse, TurnStatus
from memoir.stores import Stores
from memoir.tools.calendar import CalendarTool
from temporal import scenarios as plans
from temporal.harness import Harness, running_harness

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
async def prefs_harness(
    time_env: WorkflowEnvironment, stores: Stores, mail_sink: MailSink, caldav_server: CalDAVServer
) -> AsyncIterator[Harness]:
    async with running_harness(
        time_env, stores, smtp_port=mail_sink.port, caldav_url=caldav_server.url
    ) as harness:
        harness.user = await stores.users.set_capabilities(
            harness.user.user_id, ["reminders", "email", "calendar"]
        )
        yield harness


async def _edit(harness: Harness, namespace: str, text: str) -> None:
    """A person's edit of a preference text: a new version, as the API's rollback writes one."""
    store = harness.stores.preferences
    current = await store.get_memory(harness.user.user_id, namespace)
    await store.put(harness.user.user_id, namespace, f"{current}\n{text}", decision="edit")


async def _events(harness: Harness) -> list[tuple[str, datetime, datetime]]:
    s = harness.settings
    tool = CalendarTool(s.caldav_url, s.caldav_username, s.caldav_password)
    return [(e.title, e.start, e.end) for e in await tool._events(harness.user.user_id)]


async def test_a_learned_sign_off_ends_the_sent_email(
    prefs_harness: Harness, mail_sink: MailSink
) -> None:
    harness = prefs_harness
    await _edit(harness, "response_preferences", 'Sign off emails with "Cheers, Sam".')
    routed = await harness.send("email dan@example.com that the report is ready")
    request = await harness.pending(routed.turn_id or "")
    assert request.action_request.args["body"].endswith("Cheers,\nSam")
    seen = harness.llm.calls_for("Plan")[-1].text
    assert "Response preferences:" in seen and 'Sign off emails with "Cheers, Sam".' in seen
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    [message] = mail_sink.messages()
    assert "The report is ready." in message.body and message.body.strip().endswith("Sam")


async def test_a_learned_meeting_length_sets_the_scheduled_event(prefs_harness: Harness) -> None:
    harness = prefs_harness
    await _edit(harness, "cal_preferences", "Meetings last 45 minutes.")
    routed = await harness.send("schedule a meeting with Bob tomorrow at 11am")
    request = await harness.pending(routed.turn_id or "")
    assert request.action_request.args["duration_minutes"] == 45
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    [(title, start, end)] = await _events(harness)
    assert title == "Meeting with Bob" and end - start == timedelta(minutes=45)


async def test_a_meeting_request_by_email_checks_the_calendar_and_proposes_the_event(
    prefs_harness: Harness,
) -> None:
    harness = prefs_harness
    harness.llm.script("TriageDecision", plans.triage(Classification.RESPOND))
    email = EmailMessage(
        email_id="mtg-1",
        author="Dan Brown <dan@example.com>",
        to="tess@example.com",
        subject="Roadmap",
        body="Hi Tess, can we schedule a 30 minute meeting on Thursday at 3pm about the roadmap?",
    )
    routed = await harness.send(email.body, email=email)
    request = await harness.pending(routed.turn_id or "")
    assert request.action_request.action == "calendar.schedule"
    args = request.action_request.args
    start = datetime.fromisoformat(args["start"]).astimezone(PARIS)
    assert (start.weekday(), start.hour, args["duration_minutes"]) == (3, 15, 30)
    assert args["attendees"] == ["dan@example.com"]
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert [(a.capability, a.success) for a in result.actions] == [
        ("calendar.availability", True),
        ("calendar.schedule", True),
    ]
    [(title, first, end)] = await _events(harness)
    assert first == start and end - first == timedelta(minutes=30)

"""Entity resolution end to end over HTTP, on the real workflows: a name or a query that matches
several things makes the turn ask which one (a machine-built question, seed 002); the answer
through `POST /v1/inbox` applies the choice, and only the chosen one is acted on.

Real parts: the app, the worker, Postgres (contacts), an SMTP sink and Radicale. Only the planner
is scripted (`ScriptedChatModel`): the offline planner does not plan "email Dan" or "move the
meeting with Bob". The turn resolves the step before asking for its approval: the disambiguation
question comes first, and the approval then shows the chosen one.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.caldav_server import CalDAVServer
from memoir.mail_sink import MailSink
from memoir.models import ExecuteRequest, Plan, PlanStep
from memoir.stores import Stores
from memoir.tools.calendar import CalendarTool, event_uid
from memoir.tools.email import message_id_for
from temporal.harness import Harness, until
from tests.api.support import ApiUser, answer, api_harness, finished_view, get_turn, post_message


@pytest.fixture
async def harness(
    temporal_env: WorkflowEnvironment,
    stores: Stores,
    database_url: str,
    mail_sink: MailSink,
    caldav_server: CalDAVServer,
) -> AsyncIterator[Harness]:
    """The API harness with email (the sink) and calendar (Radicale) connected."""
    overrides = {"smtp_port": mail_sink.port, "caldav_url": caldav_server.url}
    async with api_harness(temporal_env, stores, database_url, **overrides) as harness:
        harness.user = await stores.users.set_capabilities(
            harness.user.user_id, ["reminders", "email", "calendar", "contacts"]
        )
        yield harness


async def _question(
    http: httpx.AsyncClient, user: ApiUser, turn_id: str, kind: str, after: str | None = None
) -> dict[str, Any]:
    """The turn's pending request of this kind, as `GET /v1/turns/{id}` shows it."""

    async def asked() -> dict[str, Any] | None:
        view: dict[str, Any] = (await get_turn(http, user, turn_id)).json()
        pending: dict[str, Any] | None = view["pending"]
        if view["status"] != "awaiting_human" or not pending:
            return None
        return pending if pending["kind"] == kind and pending["hitl_id"] != after else None

    found: dict[str, Any] = await until(asked, f"a {kind} question from {turn_id}")
    return found


async def _choose_then_approve(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, text: str
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Send `text`; the disambiguation question, answered "2" by the inbox; then the approval,
    accepted. The turn id, the question and the approval."""
    routed = await post_message(http, user, harness.thread_id, "m1", text)
    assert routed.status_code == 202 and routed.json()["status"] == "started", routed.text
    turn_id = routed.json()["turn_id"]
    question = await _question(http, user, turn_id, "disambiguation")
    chosen = await answer(http, user, question["hitl_id"], {"type": "response", "args": "2"})
    assert chosen.status_code == 202, chosen.text
    approval = await _question(http, user, turn_id, "approval", after=question["hitl_id"])
    accepted = await answer(http, user, approval["hitl_id"], {"type": "accept"})
    assert accepted.status_code == 202, accepted.text
    return turn_id, question, approval


def _email_plan() -> Plan:
    step = PlanStep(
        id="s1",
        capability="email.send",
        args={"to": "Dan", "subject": "Lunch", "body": "Lunch on Friday?"},
        description="Email Dan",
    )
    return Plan(intent="email Dan", confidence=0.9, needs_approval=True, steps=[step])


async def test_email_dan_with_two_dans_asks_which_and_sends_to_the_chosen_one(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, mail_sink: MailSink
) -> None:
    contacts = harness.stores.contacts
    await contacts.add(user.user_id, "Dan Smith", "dan.smith@example.com")
    await contacts.add(user.user_id, "Dan Brown", "dan.brown@example.org")
    await contacts.add(user.user_id, "Alice Martin", "alice@example.com")
    harness.llm.script("Plan", _email_plan())

    turn_id, question, approval = await _choose_then_approve(
        http, user, harness, "email Dan about lunch"
    )

    assert [o["label"] for o in question["options"]] == [
        "Dan Brown <dan.brown@example.org>",
        "Dan Smith <dan.smith@example.com>",
    ]
    assert question["question"].startswith("Which one did you mean?\n1. Dan Brown")
    assert approval["action_request"]["args"]["to"] == "Dan Smith <dan.smith@example.com>"
    view = await finished_view(http, harness, user, turn_id)
    assert view["status"] == "completed"
    [action] = view["actions"]
    assert action["success"] and action["data"]["to"] == "Dan Smith <dan.smith@example.com>"
    [message] = mail_sink.messages()
    assert message.to == "Dan Smith <dan.smith@example.com>"
    assert message.message_id == message_id_for(f"{turn_id}:s1")
    assert (message.subject, message.body.strip()) == ("Lunch", "Lunch on Friday?")
    assert mail_sink.handler.received == 1


def _tomorrow_at(hour: int) -> datetime:
    day = datetime.now(UTC) + timedelta(days=1)
    return day.replace(hour=hour, minute=0, second=0, microsecond=0)


def _calendar(harness: Harness) -> CalendarTool:
    s = harness.settings
    return CalendarTool(s.caldav_url, s.caldav_username, s.caldav_password)


async def _seed_event(harness: Harness, title: str, start: datetime) -> str:
    """An event put straight into the user's calendar; its UID."""
    key = f"seed-{uuid.uuid4().hex[:8]}:s1"
    request = ExecuteRequest(
        turn_id="seed",
        user_id=harness.user.user_id,
        thread_id="seed",
        step=PlanStep(id="s1", capability="calendar.schedule", args={}),
        args={"title": title, "start": start.isoformat(), "duration_minutes": 30},
        idempotency_key=key,
    )
    result = await _calendar(harness).execute(request)
    assert result.success, result.error
    return event_uid(key)


async def test_move_the_meeting_with_bob_asks_which_and_moves_only_the_chosen(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    first_start = _tomorrow_at(9)
    second_start = first_start + timedelta(days=1)
    first = await _seed_event(harness, "Meeting with Bob", first_start)
    second = await _seed_event(harness, "Meeting with Bob", second_start)
    new_start = _tomorrow_at(16)
    step = PlanStep(
        id="s1",
        capability="calendar.update",
        args={"query": "meeting with Bob", "start": new_start.isoformat()},
        description="Move the meeting with Bob",
    )
    harness.llm.script(
        "Plan", Plan(intent="move the meeting", confidence=0.9, needs_approval=True, steps=[step])
    )

    turn_id, question, approval = await _choose_then_approve(
        http, user, harness, "move the meeting with Bob to 4pm"
    )

    assert [o["id"] for o in question["options"]] == [first, second]
    assert approval["action_request"]["args"]["uid"] == second
    assert all(o["label"].startswith("Meeting with Bob — ") for o in question["options"])
    view = await finished_view(http, harness, user, turn_id)
    assert view["status"] == "completed"
    assert [a["success"] for a in view["actions"]] == [True]
    events = {e.uid: e for e in await _calendar(harness)._events(user.user_id)}
    assert events[second].start == new_start
    assert events[first].start == first_start

"""`calendar.*` turns on a real Radicale: approve, edit (learns cal_preferences), disambiguate,
and a crash after the CalDAV write (the retry rewrites the same event UID: one event)."""

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.caldav_server import CalDAVServer
from memoir.models import (
    ExecuteRequest,
    ExecutionResult,
    HitlRequest,
    HumanResponse,
    Plan,
    PlanStep,
    RouteStatus,
    TurnStatus,
)
from memoir.models.hitl import ActionRequest
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from memoir.tools.calendar import CalendarTool, event_uid
from temporal.harness import Harness, running_harness, until
from tests.workflows.test_email_turns import CrashAfterSideEffect


@pytest.fixture
async def cal_harness(
    time_env: WorkflowEnvironment, stores: Stores, caldav_server: CalDAVServer
) -> AsyncIterator[Harness]:
    async with running_harness(time_env, stores, caldav_url=caldav_server.url) as harness:
        harness.user = await stores.users.set_capabilities(
            harness.user.user_id, ["reminders", "calendar"]
        )
        yield harness


def _tool(harness: Harness) -> CalendarTool:
    s = harness.settings
    return CalendarTool(s.caldav_url, s.caldav_username, s.caldav_password)


def _tomorrow_at(hour: int) -> datetime:
    day = datetime.now(UTC) + timedelta(days=1)
    return day.replace(hour=hour, minute=0, second=0, microsecond=0)


def _schedule_plan(title: str, start: datetime) -> Plan:
    return Plan(
        intent=f"schedule {title}",
        confidence=0.9,
        needs_approval=True,
        risk="medium",
        steps=[
            PlanStep(
                id="s1",
                capability="calendar.schedule",
                args={
                    "title": title,
                    "start": start.isoformat(),
                    "duration_minutes": 30,
                    "attendees": ["Bob"],
                },
                description=f"Schedule “{title}”",
            )
        ],
    )


def _move_plan(query: str, start: datetime) -> Plan:
    return Plan(
        intent=f"move {query}",
        confidence=0.9,
        needs_approval=True,
        risk="medium",
        steps=[
            PlanStep(
                id="s1",
                capability="calendar.update",
                args={"query": query, "start": start.isoformat()},
                description=f"Move the {query}",
            )
        ],
    )


async def _seed_event(harness: Harness, title: str, start: datetime) -> str:
    """An event put straight into the user's calendar; its UID."""
    key = f"seed-{uuid.uuid4().hex[:8]}:s1"
    step = PlanStep(id="s1", capability="calendar.schedule", args={})
    args = {"title": title, "start": start.isoformat(), "duration_minutes": 30}
    request = ExecuteRequest(
        turn_id="seed",
        user_id=harness.user.user_id,
        thread_id="seed",
        step=step,
        args=args,
        idempotency_key=key,
    )
    result = await _tool(harness).execute(request)
    assert result.success, result.error
    return event_uid(key)


async def test_approved_schedule_creates_one_event(cal_harness: Harness) -> None:
    harness = cal_harness
    start = _tomorrow_at(9)
    harness.llm.script("Plan", _schedule_plan("Meeting with Bob", start))
    routed = await harness.send("schedule a meeting with Bob tomorrow at 9")
    request = await harness.pending(routed.turn_id or "")
    assert request.action_request.action == "calendar.schedule"
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert len(result.actions) == 1 and result.actions[0].success
    events = await _tool(harness)._events(harness.user.user_id)
    assert [(e.uid, e.title, e.start) for e in events] == [
        (event_uid(f"{routed.turn_id}:s1"), "Meeting with Bob", start)
    ]


async def test_edited_schedule_creates_the_edit_and_learns_cal_preferences(
    cal_harness: Harness,
) -> None:
    harness = cal_harness
    harness.llm.script("Plan", _schedule_plan("Meeting with Bob", _tomorrow_at(9)))
    routed = await harness.send("schedule a meeting with Bob tomorrow at 9")
    request = await harness.pending(routed.turn_id or "")
    edited_start = _tomorrow_at(14)
    edited = {
        **request.action_request.args,
        "title": "Planning with Bob",
        "start": edited_start.isoformat(),
        "duration_minutes": 60,
    }
    await harness.answer_inbox(
        request,
        HumanResponse(type="edit", args=ActionRequest(action="calendar.schedule", args=edited)),
    )
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    events = await _tool(harness)._events(harness.user.user_id)
    assert [(e.title, e.start, e.end) for e in events] == [
        ("Planning with Bob", edited_start, edited_start + timedelta(minutes=60))
    ]
    [latest, *_] = await harness.stores.preferences.history(harness.user.user_id, "cal_preferences")
    assert latest.decision == "calendar.schedule.edit"


async def test_move_the_meeting_with_bob_asks_which_and_moves_the_chosen(
    cal_harness: Harness,
) -> None:
    harness = cal_harness
    first = await _seed_event(harness, "Meeting with Bob", _tomorrow_at(9))
    second = await _seed_event(harness, "Meeting with Bob", _tomorrow_at(9) + timedelta(days=1))
    new_start = _tomorrow_at(16)
    harness.llm.script("Plan", _move_plan("meeting with Bob", new_start))
    routed = await harness.send("move the meeting with Bob to 4pm tomorrow")
    # Which meeting is asked first; the approval then shows the chosen one.
    question = await harness.pending(routed.turn_id or "")
    assert question.kind == "disambiguation"
    assert [o.id for o in question.options] == [first, second]
    assert all(o.label.startswith("Meeting with Bob — ") for o in question.options)
    answered = await harness.send("2")
    assert answered.status is RouteStatus.ROUTED_TO_PENDING

    async def approval() -> HitlRequest | None:
        pending = await harness.pending(routed.turn_id or "")
        return pending if pending.kind == "approval" else None

    request = await until(approval, "the approval")
    assert request.action_request.args["uid"] == second
    assert request.action_request.args["event_title"] == "Meeting with Bob"
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert len(result.actions) == 1 and result.actions[0].success
    events = {e.uid: e for e in await _tool(harness)._events(harness.user.user_id)}
    assert events[second].start == new_start
    assert events[first].start == _tomorrow_at(9)


async def test_unconnected_calendar_is_blocked(
    time_env: WorkflowEnvironment, stores: Stores, caldav_server: CalDAVServer
) -> None:
    async with running_harness(time_env, stores, caldav_url=caldav_server.url) as harness:
        harness.llm.script("Plan", _schedule_plan("Sync", _tomorrow_at(9)))
        routed = await harness.send("schedule a sync tomorrow at 9")
        result = await harness.result(routed.turn_id or "")
        assert result.status is TurnStatus.BLOCKED
        assert await _tool(harness)._events(harness.user.user_id) == []


class CrashAfterCalDavWrite(CrashAfterSideEffect):
    """`CrashAfterSideEffect` that also records the event UID each attempt wrote."""

    def __init__(self, inner: ToolRegistry, capability: str) -> None:
        super().__init__(inner, capability)
        self.written_uids: list[str] = []

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        if request.step.capability == self._capability:
            self.written_uids.append(event_uid(request.idempotency_key))
        return await super().execute(request)


async def test_crash_after_caldav_write_retries_with_the_same_uid_and_keeps_one_event(
    time_env: WorkflowEnvironment, stores: Stores, caldav_server: CalDAVServer
) -> None:
    crash: list[CrashAfterCalDavWrite] = []

    def wrap(tools: ToolRegistry) -> ToolRegistry:
        crash.append(CrashAfterCalDavWrite(tools, "calendar.schedule"))
        return crash[0]

    start = _tomorrow_at(11)
    async with running_harness(
        time_env, stores, wrap_tools=wrap, caldav_url=caldav_server.url
    ) as harness:
        harness.user = await stores.users.set_capabilities(
            harness.user.user_id, ["reminders", "calendar"]
        )
        harness.llm.script("Plan", _schedule_plan("Crash test with Bob", start))
        routed = await harness.send("schedule a crash test with Bob tomorrow at 11")
        turn_id = routed.turn_id or ""
        request = await harness.pending(turn_id)
        await harness.answer_inbox(request, HumanResponse(type="accept"))
        result = await harness.result(turn_id)
        events = await _tool(harness)._events(harness.user.user_id)
    assert result.status is TurnStatus.COMPLETED
    assert len(result.actions) == 1 and result.actions[0].success
    assert crash[0].attempts == 2  # the write happened twice: the failed attempt and the retry
    uid = event_uid(f"{turn_id}:s1")
    assert crash[0].written_uids == [uid, uid]
    assert [(e.uid, e.title, e.start) for e in events] == [(uid, "Crash test with Bob", start)]

"""calendar.* on a real Radicale: derived UIDs, availability, update and cancel by query."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from memoir.models import ExecuteRequest, ExecutionResult, PlanStep, ResolveRequest, StepResolution
from memoir.tools.calendar import CalendarTool, event_uid, free_slots

TZ = "Europe/Paris"


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def _base() -> datetime:
    """Tomorrow 08:00 UTC, whole hours: always upcoming."""
    now = datetime.now(UTC) + timedelta(days=1)
    return now.replace(hour=8, minute=0, second=0, microsecond=0)


async def _resolve(
    tool: CalendarTool, user: str, capability: str, args: dict[str, Any]
) -> StepResolution:
    step = PlanStep(id="s1", capability=capability, args=args, description=capability)
    return await tool.resolve(ResolveRequest(turn_id="t", user_id=user, step=step, timezone=TZ))


async def _execute(
    tool: CalendarTool, user: str, capability: str, args: dict[str, Any], key: str | None = None
) -> ExecutionResult:
    step = PlanStep(id="s1", capability=capability, args=args, description=capability)
    request = ExecuteRequest(
        turn_id="t",
        user_id=user,
        thread_id="th",
        step=step,
        args=args,
        idempotency_key=key or f"turn-{uuid.uuid4().hex[:8]}:s1",
        timezone=TZ,
    )
    return await tool.execute(request)


async def _schedule(
    tool: CalendarTool, user: str, title: str, start: datetime, key: str | None = None
) -> ExecutionResult:
    args = {"title": title, "start": start.isoformat(), "duration_minutes": 30, "attendees": []}
    resolved = await _resolve(tool, user, "calendar.schedule", args)
    assert resolved.status == "resolved"
    return await _execute(tool, user, "calendar.schedule", resolved.args, key)


async def _all(tool: CalendarTool, user: str) -> list[Any]:
    return await tool._events(user)


async def test_schedule_creates_one_event_with_the_derived_uid(
    calendar_tool: CalendarTool,
) -> None:
    user = _user()
    result = await _schedule(calendar_tool, user, "Dentist", _base(), key="turn-a:s1")
    assert result.success, result.error
    events = await _all(calendar_tool, user)
    assert [(e.uid, e.title, e.start) for e in events] == [
        (event_uid("turn-a:s1"), "Dentist", _base())
    ]
    assert result.latest_action is not None
    assert result.latest_action.capability == "calendar"
    assert result.latest_action.external_ids == {"uid": event_uid("turn-a:s1")}


async def test_the_same_key_twice_leaves_one_event(calendar_tool: CalendarTool) -> None:
    user = _user()
    first = await _schedule(calendar_tool, user, "Retro", _base(), key="turn-b:s1")
    again = await _schedule(calendar_tool, user, "Retro", _base(), key="turn-b:s1")
    assert first.success and again.success
    events = await _all(calendar_tool, user)
    assert [e.uid for e in events] == [event_uid("turn-b:s1")]


async def test_availability_reports_a_busy_slot(calendar_tool: CalendarTool) -> None:
    user = _user()
    base = _base()
    await _schedule(calendar_tool, user, "Standup", base + timedelta(hours=1))
    args = {"start": base.isoformat(), "end": (base + timedelta(hours=3)).isoformat()}
    resolved = await _resolve(calendar_tool, user, "calendar.availability", args)
    result = await _execute(calendar_tool, user, "calendar.availability", resolved.args)
    assert result.success, result.error
    assert [e["title"] for e in result.data["events"]] == ["Standup"]
    busy = result.data["busy"][0]
    assert datetime.fromisoformat(busy["start"]) == base + timedelta(hours=1)
    assert busy["start"].endswith("+01:00") or busy["start"].endswith("+02:00")  # Paris time
    free = [
        (datetime.fromisoformat(f["start"]), datetime.fromisoformat(f["end"]))
        for f in result.data["free"]
    ]
    assert free == [
        (base, base + timedelta(hours=1)),
        (base + timedelta(hours=1, minutes=30), base + timedelta(hours=3)),
    ]
    assert "busy: Standup" in result.summary


def test_free_slots_merge_overlaps() -> None:
    t0 = datetime(2030, 1, 1, 8, tzinfo=UTC)
    h = timedelta(hours=1)
    busy = [(t0 + h, t0 + 2 * h), (t0 + 90 * timedelta(minutes=1), t0 + 3 * h)]
    assert free_slots(t0, t0 + 4 * h, busy) == [(t0, t0 + h), (t0 + 3 * h, t0 + 4 * h)]


async def test_update_by_query_moves_the_event(calendar_tool: CalendarTool) -> None:
    user = _user()
    base = _base()
    created = await _schedule(calendar_tool, user, "Meeting with Bob", base)
    new_start = base + timedelta(hours=5)
    args = {"query": "the meeting with Bob", "start": new_start.isoformat()}
    resolved = await _resolve(calendar_tool, user, "calendar.update", args)
    assert resolved.status == "resolved"
    uid = created.data["uid"]
    assert resolved.args["uid"] == uid
    result = await _execute(calendar_tool, user, "calendar.update", resolved.args)
    assert result.success, result.error
    events = await _all(calendar_tool, user)
    assert [(e.uid, e.title, e.start, e.end) for e in events] == [
        (uid, "Meeting with Bob", new_start, new_start + timedelta(minutes=30))
    ]


async def test_update_shift_is_resolved_to_an_absolute_time(calendar_tool: CalendarTool) -> None:
    user = _user()
    base = _base()
    await _schedule(calendar_tool, user, "Budget review", base)
    resolved = await _resolve(
        calendar_tool, user, "calendar.update", {"query": "budget review", "shift_minutes": 60}
    )
    assert resolved.args["start"] == (base + timedelta(hours=1)).isoformat()
    for _ in range(2):  # a retried attempt moves it to the same time, not twice
        assert (await _execute(calendar_tool, user, "calendar.update", resolved.args)).success
    assert [e.start for e in await _all(calendar_tool, user)] == [base + timedelta(hours=1)]


async def test_cancel_by_query_deletes_the_event(calendar_tool: CalendarTool) -> None:
    user = _user()
    await _schedule(calendar_tool, user, "Lunch with Ann", _base())
    await _schedule(calendar_tool, user, "Dentist", _base() + timedelta(hours=3))
    resolved = await _resolve(calendar_tool, user, "calendar.cancel", {"query": "lunch with Ann"})
    assert resolved.status == "resolved"
    result = await _execute(calendar_tool, user, "calendar.cancel", resolved.args)
    assert result.success, result.error
    assert "Lunch with Ann" in result.summary
    assert [e.title for e in await _all(calendar_tool, user)] == ["Dentist"]
    again = await _execute(calendar_tool, user, "calendar.cancel", resolved.args)
    assert again.success  # a retry finding it gone counts as done


async def test_no_match_is_not_found(calendar_tool: CalendarTool) -> None:
    user = _user()
    await _schedule(calendar_tool, user, "Dentist", _base())
    resolved = await _resolve(calendar_tool, user, "calendar.cancel", {"query": "meeting with Zed"})
    assert resolved.status == "not_found"
    assert "meeting with Zed" in (resolved.message or "")


async def test_two_meetings_with_bob_give_two_candidates(calendar_tool: CalendarTool) -> None:
    user = _user()
    base = _base()
    first = await _schedule(calendar_tool, user, "Meeting with Bob", base)
    second = await _schedule(calendar_tool, user, "Meeting with Bob", base + timedelta(days=1))
    await _schedule(calendar_tool, user, "Meeting with Carol", base + timedelta(hours=2))
    args = {"query": "meeting with Bob", "start": (base + timedelta(hours=4)).isoformat()}
    resolved = await _resolve(calendar_tool, user, "calendar.update", args)
    assert resolved.status == "candidates"
    assert [c.id for c in resolved.candidates] == [first.data["uid"], second.data["uid"]]
    label = resolved.candidates[0].label
    assert label.startswith("Meeting with Bob — ") and "(Europe/Paris)" in label
    assert resolved.candidates[1].args["uid"] == second.data["uid"]

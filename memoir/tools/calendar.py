"""The `calendar.*` capability over CalDAV: availability, schedule, update, cancel.

Each user has one calendar, `memoir-{user_id}`, created on first use. A scheduled event's `UID`
is derived from the step's idempotency key, so a retried attempt writes the same event again
(overwriting it by UID) instead of a second one. Update and cancel find their event by a query
("the meeting with Bob"): none → not_found, one → resolved with its UID, several → candidates.

The `caldav` library is synchronous: every server round trip runs in a worker thread.
"""

import asyncio
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import caldav
import icalendar
from caldav.lib import error as dav_error

from memoir.models import (
    Candidate,
    ExecuteRequest,
    ExecutionResult,
    ResolveRequest,
    StepResolution,
)
from memoir.tools.base import failure, not_found, success

T = TypeVar("T")

DEFAULT_DURATION_MINUTES = 30
UID_NAMESPACE = uuid.UUID("6f1c2a9e-4b1d-4c55-9a57-6d656d6f6972")
_STOP_WORDS = frozenset(
    {"the", "a", "an", "my", "our", "with", "and", "to", "of", "on", "at", "for", "this", "that"}
)


def event_uid(idempotency_key: str) -> str:
    """The CalDAV UID of the event a step creates: the same for every attempt of that step."""
    return f"memoir-{uuid.uuid5(UID_NAMESPACE, idempotency_key)}"


def calendar_id(user_id: str) -> str:
    return "memoir-" + re.sub(r"[^A-Za-z0-9_-]", "-", user_id)


def local_time(moment: datetime, timezone: str) -> str:
    """'Mon 23 Nov 17:00 (Europe/Paris)'."""
    return f"{moment.astimezone(ZoneInfo(timezone)):%a %d %b %H:%M} ({timezone})"


@dataclass(frozen=True)
class CalendarEvent:
    uid: str
    title: str
    start: datetime
    end: datetime
    description: str = ""

    def label(self, timezone: str) -> str:
        return f"{self.title} — {local_time(self.start, timezone)}"

    def public(self, timezone: str) -> dict[str, str]:
        zone = ZoneInfo(timezone)
        return {
            "uid": self.uid,
            "title": self.title,
            "start": self.start.astimezone(zone).isoformat(),
            "end": self.end.astimezone(zone).isoformat(),
        }


class CalendarTool:
    def __init__(self, url: str, username: str | None = None, password: str | None = None) -> None:
        self._url = url
        self._username = username
        self._password = password
        self._known_calendars: set[str] = set()

    # ----- CalDAV (synchronous, run in a thread) ------------------------------------------------

    async def _run(self, user_id: str, work: Callable[[Any], T]) -> T:
        """Run `work(calendar)` on the user's calendar in a worker thread."""
        return await asyncio.to_thread(self._with_calendar, user_id, work)

    def _with_calendar(self, user_id: str, work: Callable[[Any], T]) -> T:
        with caldav.DAVClient(
            url=self._url, username=self._username, password=self._password, timeout=30
        ) as client:
            principal = client.principal()
            cal_id = calendar_id(user_id)
            calendar = principal.calendar(cal_id=cal_id)
            if cal_id not in self._known_calendars:
                if not any(str(c.url) == str(calendar.url) for c in principal.calendars()):
                    calendar = principal.make_calendar(name=cal_id, cal_id=cal_id)
                self._known_calendars.add(cal_id)
            return work(calendar)

    async def _events(self, user_id: str) -> list[CalendarEvent]:
        return await self._run(user_id, lambda cal: _parse_all(cal.events()))

    async def _event(self, user_id: str, uid: str) -> CalendarEvent | None:
        def find(cal: Any) -> CalendarEvent | None:
            try:
                found = _parse_all([cal.event_by_uid(uid)])
            except dav_error.NotFoundError:
                return None
            return found[0] if found else None

        return await self._run(user_id, find)

    # ----- resolve ------------------------------------------------------------------------------

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        action = request.step.capability.split(".", 1)[1]
        step_id = request.step.id
        args = dict(request.step.args)
        if action == "availability":
            return _resolve_range(step_id, args)
        if action == "schedule":
            return _resolve_schedule(step_id, args)
        if action in ("update", "cancel"):
            return await self._resolve_target(request, action, args)
        return not_found(step_id, f"calendar has no action '{action}'.")

    async def _resolve_target(
        self, request: ResolveRequest, action: str, args: dict[str, Any]
    ) -> StepResolution:
        step_id = request.step.id
        if action == "update" and not any(
            args.get(k) for k in ("start", "shift_minutes", "duration_minutes", "title")
        ):
            return not_found(step_id, "What should I change about the event: a new time?")
        if args.get("uid"):
            event = await self._event(request.user_id, str(args["uid"]))
            if event is not None:
                return _resolved_target(step_id, args, event, request.timezone)
        query = str(args.get("query", "")).strip()
        if not query:
            return not_found(step_id, "Which event? I need a few words of its title.")
        now = datetime.now(UTC)
        events = [e for e in await self._events(request.user_id) if e.end >= now]
        matches = sorted((e for e in events if _matches(query, e)), key=lambda e: e.start)
        if action == "cancel" and len(matches) > 1 and args.get("start"):
            at = _parse_time(args["start"])
            narrowed = [e for e in matches if at is not None and e.start == at]
            matches = narrowed or matches
        if not matches:
            return not_found(step_id, f"I couldn't find an upcoming event matching '{query}'.")
        if len(matches) == 1:
            return _resolved_target(step_id, args, matches[0], request.timezone)
        candidates = [
            Candidate(
                id=e.uid,
                label=e.label(request.timezone),
                args=_target_args(args, e),
            )
            for e in matches
        ]
        return StepResolution(
            step_id=step_id, status="candidates", args=args, candidates=candidates
        )

    # ----- execute ------------------------------------------------------------------------------

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        action = request.step.capability.split(".", 1)[1]
        try:
            if action == "availability":
                return await self._availability(request)
            if action == "schedule":
                return await self._schedule(request)
            if action == "update":
                return await self._update(request)
            if action == "cancel":
                return await self._cancel(request)
        except (dav_error.DAVError, KeyError, ValueError) as error:
            return failure(request, f"The calendar refused {request.step.capability}: {error}")
        return failure(request, f"calendar has no action '{action}'")

    async def _availability(self, request: ExecuteRequest) -> ExecutionResult:
        start = _require_time(request.args["start"])
        end = _require_time(request.args["end"])

        def search(cal: Any) -> list[CalendarEvent]:
            return _parse_all(cal.search(start=start, end=end, event=True, expand=True))

        events = sorted(
            (
                e
                for e in await self._run(request.user_id, search)
                if e.start < end and e.end > start
            ),
            key=lambda e: e.start,
        )
        free = free_slots(start, end, [(e.start, e.end) for e in events])
        tz = request.timezone
        zone = ZoneInfo(tz)
        busy_lines = [
            f"{e.title} — {e.start.astimezone(zone):%a %d %b %H:%M}–{e.end.astimezone(zone):%H:%M}"
            for e in events
        ]
        free_lines = [
            f"{a.astimezone(zone):%a %d %b %H:%M}–{b.astimezone(zone):%H:%M}" for a, b in free
        ]
        summary = (
            f"{len(events)} event(s) between {local_time(start, tz)} and {local_time(end, tz)}"
            + "".join(f"\n• busy: {line}" for line in busy_lines)
            + "".join(f"\n• free: {line}" for line in free_lines)
        )
        return ExecutionResult(
            step_id=request.step.id,
            capability=request.step.capability,
            success=True,
            summary=summary,
            data={
                "events": [e.public(tz) for e in events],
                "busy": [
                    {
                        "start": e.start.astimezone(zone).isoformat(),
                        "end": e.end.astimezone(zone).isoformat(),
                    }
                    for e in events
                ],
                "free": [
                    {"start": a.astimezone(zone).isoformat(), "end": b.astimezone(zone).isoformat()}
                    for a, b in free
                ],
            },
        )

    async def _schedule(self, request: ExecuteRequest) -> ExecutionResult:
        args = request.args
        start = _require_time(args["start"])
        end = _end_of(start, args)
        attendees = [str(a) for a in args.get("attendees") or []]
        event = CalendarEvent(
            uid=event_uid(request.idempotency_key),
            title=str(args.get("title") or "Meeting"),
            start=start,
            end=end,
            description=("With: " + ", ".join(attendees)) if attendees else "",
        )
        ical = _to_ical(event, attendees=attendees)

        def put(cal: Any) -> None:
            try:
                existing = cal.event_by_uid(event.uid)
            except dav_error.NotFoundError:
                cal.save_event(ical)
                return
            existing.data = ical  # a retried attempt: overwrite the same event, never duplicate
            existing.save()

        await self._run(request.user_id, put)
        when = local_time(start, request.timezone)
        return success(
            request,
            f"Scheduled “{event.title}” on {when}.",
            {"event": event.public(request.timezone), **event.public(request.timezone)},
            action="schedule",
            when=when,
            ids={"uid": event.uid},
        )

    async def _update(self, request: ExecuteRequest) -> ExecutionResult:
        args = request.args
        uid = str(args["uid"])
        current = await self._event(request.user_id, uid)
        if current is None:
            return failure(request, "That event no longer exists.")
        start = _new_start(current, args)
        duration = (
            timedelta(minutes=int(args["duration_minutes"]))
            if args.get("duration_minutes")
            else current.end - current.start
        )
        title = str(args.get("title") or current.title)
        moved = CalendarEvent(uid, title, start, start + duration, current.description)

        def put(cal: Any) -> None:
            existing = cal.event_by_uid(uid)
            component = existing.icalendar_component
            for key in ("dtstart", "dtend", "duration", "summary"):
                component.pop(key, None)
            component.add("dtstart", moved.start)
            component.add("dtend", moved.end)
            component.add("summary", moved.title)
            sequence = int(component.get("sequence", 0))
            component.pop("sequence", None)
            component.add("sequence", sequence + 1)
            existing.save()

        await self._run(request.user_id, put)
        when = local_time(moved.start, request.timezone)
        renamed = f" (renamed from “{current.title}”)" if title != current.title else ""
        return success(
            request,
            f"Moved “{moved.title}”{renamed} to {when}.",
            {
                "event": moved.public(request.timezone),
                "previous": current.public(request.timezone),
                **moved.public(request.timezone),
            },
            action="update",
            when=when,
            ids={"uid": uid},
        )

    async def _cancel(self, request: ExecuteRequest) -> ExecutionResult:
        uid = str(request.args["uid"])

        def delete(cal: Any) -> CalendarEvent | None:
            try:
                existing = cal.event_by_uid(uid)
            except dav_error.NotFoundError:
                return None  # a retry finding it gone: cancelled already (resolve saw it)
            parsed = _parse_all([existing])
            existing.delete()
            return parsed[0] if parsed else None

        gone = await self._run(request.user_id, delete)
        title = gone.title if gone else str(request.args.get("event_title") or "the event")
        data: dict[str, Any] = {"uid": uid, "title": title}
        when = None
        if gone is not None:
            data = {"event": gone.public(request.timezone), **gone.public(request.timezone)}
            when = local_time(gone.start, request.timezone)
        return success(
            request, f"Cancelled “{title}”.", data, action="cancel", when=when, ids={"uid": uid}
        )


# ----- pure helpers --------------------------------------------------------------------------


def free_slots(
    start: datetime, end: datetime, busy: list[tuple[datetime, datetime]]
) -> list[tuple[datetime, datetime]]:
    """The gaps in [start, end) not covered by any busy interval."""
    free: list[tuple[datetime, datetime]] = []
    cursor = start
    for a, b in sorted(busy):
        if a > cursor:
            free.append((cursor, min(a, end)))
        cursor = max(cursor, b)
        if cursor >= end:
            break
    if cursor < end:
        free.append((cursor, end))
    return [(a, b) for a, b in free if b > a]


def _words(text: str) -> set[str]:
    return {w.rstrip("s") if len(w) > 3 else w for w in re.findall(r"[\w']+", text.lower())}


def _matches(query: str, event: CalendarEvent) -> bool:
    wanted = _words(query) - _STOP_WORDS
    if not wanted:
        return False
    return wanted <= _words(f"{event.title} {event.description}")


def _parse_time(raw: object) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(raw))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _require_time(raw: object) -> datetime:
    moment = _parse_time(raw)
    if moment is None:
        raise ValueError(f"unreadable time '{raw}'")
    return moment


def _end_of(start: datetime, args: dict[str, Any]) -> datetime:
    if args.get("end"):
        return _require_time(args["end"])
    return start + timedelta(minutes=int(args.get("duration_minutes") or DEFAULT_DURATION_MINUTES))


def _new_start(event: CalendarEvent, args: dict[str, Any]) -> datetime:
    if args.get("start"):
        return _require_time(args["start"])
    if args.get("shift_minutes"):
        return event.start + timedelta(minutes=int(args["shift_minutes"]))
    return event.start


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time(), tzinfo=UTC)
    raise ValueError(f"not a time: {value!r}")


def _parse_all(objects: list[Any]) -> list[CalendarEvent]:
    events: list[CalendarEvent] = []
    for obj in objects:
        for component in obj.icalendar_instance.walk("VEVENT"):
            start = _as_datetime(component.decoded("dtstart"))
            if "dtend" in component:
                end = _as_datetime(component.decoded("dtend"))
            elif "duration" in component:
                end = start + component.decoded("duration")
            else:
                end = start
            events.append(
                CalendarEvent(
                    uid=str(component.get("uid", "")),
                    title=str(component.get("summary", "busy")),
                    start=start,
                    end=end,
                    description=str(component.get("description", "")),
                )
            )
    return events


def _to_ical(event: CalendarEvent, *, attendees: list[str]) -> str:
    cal = icalendar.Calendar()
    cal.add("prodid", "-//Memoir//calendar tool//EN")
    cal.add("version", "2.0")
    vevent = icalendar.Event()
    vevent.add("uid", event.uid)
    vevent.add("dtstamp", datetime.now(UTC))
    vevent.add("dtstart", event.start.astimezone(UTC))
    vevent.add("dtend", event.end.astimezone(UTC))
    vevent.add("summary", event.title)
    if event.description:
        vevent.add("description", event.description)
    if attendees:
        vevent.add("x-memoir-attendees", ", ".join(attendees))
    cal.add_component(vevent)
    return str(cal.to_ical().decode())


def _resolve_range(step_id: str, args: dict[str, Any]) -> StepResolution:
    start = _parse_time(args.get("start") or datetime.now(UTC).isoformat())
    if start is None:
        return not_found(step_id, f"I couldn't read the time '{args.get('start')}'.")
    end = _parse_time(args["end"]) if args.get("end") else start + timedelta(days=1)
    if end is None or end <= start:
        return not_found(step_id, "The end of the range must come after its start.")
    return StepResolution(
        step_id=step_id,
        status="resolved",
        args={**args, "start": start.isoformat(), "end": end.isoformat()},
    )


def _resolve_schedule(step_id: str, args: dict[str, Any]) -> StepResolution:
    title = str(args.get("title", "")).strip()
    if not title or not args.get("start"):
        return not_found(step_id, "An event needs a title and a start time.")
    start = _parse_time(args["start"])
    if start is None:
        return not_found(step_id, f"I couldn't read the time '{args['start']}'.")
    resolved: dict[str, Any] = {
        **args,
        "title": title,
        "start": start.isoformat(),
        "duration_minutes": int(args.get("duration_minutes") or DEFAULT_DURATION_MINUTES),
        "attendees": [str(a) for a in args.get("attendees") or []],
    }
    return StepResolution(step_id=step_id, status="resolved", args=resolved)


def _target_args(args: dict[str, Any], event: CalendarEvent) -> dict[str, Any]:
    """The event's UID and title; a relative move becomes an absolute start here, so a retried
    execution moves the event to the same time instead of shifting it twice."""
    resolved: dict[str, Any] = {"uid": event.uid, "event_title": event.title}
    if args.get("shift_minutes") and not args.get("start"):
        resolved["start"] = _new_start(event, args).isoformat()
    return resolved


def _resolved_target(
    step_id: str, args: dict[str, Any], event: CalendarEvent, timezone: str
) -> StepResolution:
    return StepResolution(
        step_id=step_id, status="resolved", args={**args, **_target_args(args, event)}
    )

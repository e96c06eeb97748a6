"""Time phrases in reminders: "in 10 minutes", "at 5pm", "tomorrow at 9", "on Monday at 10am".

`parse_when` turns the phrase into an aware datetime computed in the user's IANA timezone;
`strip_when` removes the phrase so what is left is the reminder's text. Both share one scanner,
so whatever `parse_when` understood is exactly what `strip_when` removes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

__all__ = [
    "TimeMatch",
    "clock_time",
    "duration_minutes",
    "find_time_phrases",
    "parse_when",
    "strip_when",
]

DEFAULT_HOUR = 9  # "tomorrow", "on Monday", "next week" without a time
DAYPART_HOURS = {"morning": 9, "afternoon": 15, "evening": 19, "night": 20, "tonight": 20}

NUMBER_WORDS: dict[str, float] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty five": 45,
    "forty-five": 45,
    "half a": 0.5,
    "half an": 0.5,
    "a couple of": 2,
    "a few": 3,
}
_WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}

_NUM = r"\d+(?:\.\d+)?|forty[- ]five|half\s+an?|a\s+couple\s+of|a\s+few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"  # noqa: E501
_HOURS_OR_MINUTES = r"minutes?|mins?|m|hours?|hrs?|hr|h"
_UNIT = rf"{_HOURS_OR_MINUTES}|days?|d|weeks?|wks?|w"
_AT = r"(?:(?:at|by|around|@)\s+)"
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WD_FULL = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WD_ABBR = "tues|tue|wed|thurs|thur|thu|fri|sat|sun|mon"

# Order matters: earlier kinds claim their span first, later overlapping matches are skipped.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("relative", re.compile(rf"\bin\s+(?P<n>{_NUM})\s*(?P<unit>{_UNIT})\b", re.I)),
    (
        "daypart",
        re.compile(
            r"\b(?:(?P<inthe>in\s+the)\s+|(?P<day>tomorrow|tmrw|today|this)\s+)?"
            r"(?P<part>tonight|morning|afternoon|evening|night)\b",
            re.I,
        ),
    ),
    ("iso", re.compile(r"\b(?:on\s+)?(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})\b", re.I)),
    (
        "monthday",
        re.compile(
            rf"\b(?:on\s+)?(?:(?:the\s+)?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            rf"(?P<mon2>{_MONTH})\.?|(?P<mon1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?)\b",
            re.I,
        ),
    ),
    (
        "ampm",
        re.compile(
            rf"(?<![\w:]){_AT}?(?P<h>\d{{1,2}})(?::(?P<m>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w)",
            re.I,
        ),
    ),
    ("hhmm", re.compile(rf"(?<![\w:]){_AT}?(?P<h>[01]?\d|2[0-3])[:h](?P<m>[0-5]\d)\b", re.I)),
    ("named", re.compile(rf"\b{_AT}?(?P<w>noon|midday|midnight)\b", re.I)),
    (
        "bare",
        re.compile(
            rf"\b{_AT}(?P<h>\d{{1,2}})(?:\s*o'?clock)?\b(?![:.]\d|\s*(?:%|/|{_UNIT})\b)", re.I
        ),
    ),
    (
        "day",
        re.compile(r"\b(?P<d>(?:the\s+)?day\s+after\s+tomorrow|today|tomorrow|tmrw|tmr)\b", re.I),
    ),
    (
        "weekday",
        re.compile(
            rf"\b(?:(?P<pre>on|next|this|coming)\s+)?(?P<wd>{_WD_FULL}|{_WD_ABBR})\b"
            rf"(?:\s+next\s+week)?",
            re.I,
        ),
    ),
    (
        "period",
        re.compile(
            r"\b(?P<p>next\s+week|next\s+month|next\s+weekend|this\s+weekend|"
            r"(?:on|at|over)\s+the\s+weekend)\b",
            re.I,
        ),
    ),
]


@dataclass(frozen=True)
class TimeMatch:
    """One time phrase found in a text: its kind, its span and its named groups."""

    kind: str
    start: int
    end: int
    text: str
    groups: dict[str, str | None]


def find_time_phrases(text: str) -> list[TimeMatch]:
    """All time phrases in `text`, in text order, without overlaps."""
    claimed: list[TimeMatch] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if kind == "daypart" and not _valid_daypart(m):
                continue
            if kind == "weekday" and not _valid_weekday(m):
                continue
            if any(m.start() < c.end and c.start < m.end() for c in claimed):
                continue
            claimed.append(TimeMatch(kind, m.start(), m.end(), m.group(0), m.groupdict()))
    return sorted(claimed, key=lambda c: c.start)


def _valid_daypart(m: re.Match[str]) -> bool:
    part = (m.group("part") or "").lower()
    day = (m.group("day") or "").lower()
    if part == "tonight":
        return True
    if m.group("inthe"):
        return True
    # A bare "morning" ("good morning") is not a time; "this night" is not said.
    return bool(day) and not (day == "this" and part == "night")


def _valid_weekday(m: re.Match[str]) -> bool:
    wd = m.group("wd").lower()
    return wd in _WD_FULL.split("|") or m.group("pre") is not None


def _number(word: str) -> float:
    word = re.sub(r"\s+", " ", word.lower().strip())
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    return float(word)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except Exception as exc:  # ZoneInfoNotFoundError, ValueError for odd keys
        raise ValueError(f"unknown timezone {tz!r}") from exc


def _at(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(hour % 24, minute), tzinfo=zone)


def parse_when(text: str, now: datetime, tz: str) -> datetime | None:
    """The moment a reminder phrase means, aware and in `tz`; None when `text` names no time.

    Relative phrases ("in 2 hours") count from `now`; clock and calendar phrases are read in the
    user's timezone. A bare time already past today ("at 9" at 10:00) rolls to the next day;
    dates without a time default to 09:00.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("parse_when needs an aware `now`")
    zone = _zone(tz)
    local_now = now.astimezone(zone).replace(microsecond=0)
    matches = find_time_phrases(text)
    if not matches:
        return None

    by_kind = {m.kind: m for m in reversed(matches)}  # first of each kind wins
    if "relative" in by_kind:
        rel = by_kind["relative"]
        amount = _number(rel.groups["n"] or "1")
        unit = (rel.groups["unit"] or "m").lower()
        if unit.startswith(("h",)):
            delta = timedelta(hours=amount)
        elif unit.startswith("d"):
            delta = timedelta(days=amount)
        elif unit.startswith("w"):
            delta = timedelta(weeks=amount)
        else:
            delta = timedelta(minutes=amount)
        if delta < timedelta(days=1):
            return (local_now.astimezone(UTC) + delta).astimezone(zone)
        # Days and weeks: a calendar offset, at the time given or at the same wall-clock time.
        target_day = (local_now + delta).date()
        clock = _clock(by_kind, has_date=True)
        if clock is None:
            return _at(target_day, local_now.hour, local_now.minute, zone)
        return _at(target_day, clock[0], clock[1], zone)

    day, explicit_day = _day(by_kind, local_now)
    clock = _clock(by_kind, has_date=explicit_day, now=local_now)
    if day is None and clock is None:
        return None
    if day is None:
        assert clock is not None
        result = _at(local_now.date(), clock[0], clock[1], zone)
        if result <= local_now:
            result = _at(local_now.date() + timedelta(days=1), clock[0], clock[1], zone)
        return result
    if clock is None:
        return _at(day, DEFAULT_HOUR, 0, zone)
    return _at(day, clock[0], clock[1], zone)


def _day(by_kind: dict[str, TimeMatch], now: datetime) -> tuple[date | None, bool]:
    """The calendar day named in the text, and whether one was named explicitly."""
    today = now.date()
    if "daypart" in by_kind:
        dp = by_kind["daypart"]
        day_word = (dp.groups["day"] or "").lower()
        if day_word in ("tomorrow", "tmrw"):
            return today + timedelta(days=1), True
        if day_word in ("today", "this") or (dp.groups["part"] or "").lower() == "tonight":
            return today, True
    if "iso" in by_kind:
        g = by_kind["iso"].groups
        try:
            return date(int(g["y"] or 0), int(g["mo"] or 0), int(g["d"] or 0)), True
        except ValueError:
            pass
    if "monthday" in by_kind:
        g = by_kind["monthday"].groups
        month = _MONTHS[(g["mon1"] or g["mon2"] or "").lower()]
        dom = int(g["d1"] or g["d2"] or 1)
        try:
            candidate = date(today.year, month, dom)
            if candidate < today:
                candidate = date(today.year + 1, month, dom)
            return candidate, True
        except ValueError:
            pass
    if "day" in by_kind:
        word = (by_kind["day"].groups["d"] or "").lower()
        if "after" in word:
            return today + timedelta(days=2), True
        if word == "today":
            return today, True
        return today + timedelta(days=1), True
    if "weekday" in by_kind:
        wm = by_kind["weekday"]
        target = _WEEKDAYS[(wm.groups["wd"] or "").lower()]
        if re.search(r"next\s+week$", wm.text, re.I):  # "Monday next week"
            return today + timedelta(days=7 - today.weekday() + target), True
        ahead = (target - today.weekday()) % 7 or 7
        if (wm.groups["pre"] or "").lower() == "this" and target == today.weekday():
            ahead = 0
        return today + timedelta(days=ahead), True
    if "period" in by_kind:
        p = re.sub(r"\s+", " ", (by_kind["period"].groups["p"] or "").lower())
        if p == "next week":
            return today + timedelta(days=7 - today.weekday()), True
        if p == "next month":
            first = today.replace(day=1)
            return (first + timedelta(days=32)).replace(day=1), True
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)
        if p == "next weekend":
            saturday += timedelta(days=7)
        return saturday, True
    return None, False


def _clock(
    by_kind: dict[str, TimeMatch], *, has_date: bool, now: datetime | None = None
) -> tuple[int, int] | None:
    """(hour, minute) named in the text, or None."""
    evening = False
    daypart_hour: int | None = None
    if "daypart" in by_kind:
        part = (by_kind["daypart"].groups["part"] or "").lower()
        daypart_hour = DAYPART_HOURS[part]
        evening = part in ("tonight", "evening", "night", "afternoon")
    if "ampm" in by_kind:
        g = by_kind["ampm"].groups
        hour = int(g["h"] or 0) % 12
        if (g["ap"] or "").lower().startswith("p"):
            hour += 12
        return hour, int(g["m"] or 0)
    if "hhmm" in by_kind:
        g = by_kind["hhmm"].groups
        hour, minute = int(g["h"] or 0), int(g["m"] or 0)
        if evening and hour < 12:
            hour += 12
        return hour, minute
    if "named" in by_kind:
        word = (by_kind["named"].groups["w"] or "").lower()
        return (0, 0) if word == "midnight" else (12, 0)
    if "bare" in by_kind:
        hour = int(by_kind["bare"].groups["h"] or 0)
        if hour > 23:
            return None
        if hour >= 12 or hour == 0:
            return hour, 0
        if evening:
            return hour + 12, 0
        if daypart_hour is not None:  # "tomorrow morning at 7"
            return hour, 0
        if has_date or now is None:
            return (hour + 12, 0) if hour <= 7 else (hour, 0)
        # No date: the next occurrence of h:00 or (h+12):00.
        for candidate in (hour, hour + 12):
            if (candidate, 0) > (now.hour, now.minute):
                return candidate, 0
        return hour, 0
    if daypart_hour is not None:
        tonight = (by_kind["daypart"].groups["part"] or "").lower() == "tonight"
        if now is not None and tonight and (daypart_hour, 0) <= (now.hour, now.minute):
            later = now + timedelta(hours=1)
            return (later.hour, later.minute) if later.date() == now.date() else (23, 59)
        return daypart_hour, 0
    return None


def clock_time(text: str) -> time | None:
    """The clock time `text` starts with ("9", "9.30", "10am", "17:00", "noon"), read as after a
    date: an hour of 1 to 7 alone is in the afternoon ("after 5": 17:00)."""
    said = re.sub(r"^(\d{1,2})\.([0-5]\d)\b", r"\1:\2", text.strip())
    first = next(iter(find_time_phrases(f"at {said}")), None)
    clock = _clock({first.kind: first}, has_date=True) if first and first.start == 0 else None
    return time(*clock) if clock else None


def duration_minutes(text: str) -> int | None:
    """The first duration in `text` in minutes ("45 min", "an hour"); "in 2 hours" is a time."""
    found = rf"(?<!\bin )\b(?P<n>{_NUM})\s*-?\s*(?P<unit>{_HOURS_OR_MINUTES})\b"
    if (m := re.search(found, text, re.I)) is None:
        return None
    return round(_number(m["n"]) * (60 if m["unit"].lower().startswith("h") else 1))


_DANGLING = re.compile(
    r"^(?:at|on|by|in|for|around|@)\b\s*|\s*\b(?:at|on|by|in|for|around|@)$", re.I
)


def strip_when(text: str) -> str:
    """`text` without its time phrases: "call mom at 5pm tomorrow" → "call mom"."""
    matches = find_time_phrases(text)
    out, last = [], 0
    for m in matches:
        out.append(text[last : m.start])
        last = m.end
    out.append(text[last:])
    cleaned = re.sub(r"\s+", " ", " ".join(out)).strip()
    cleaned = re.sub(r"\s+([,.!?;:])", r"\1", cleaned)
    previous = None
    while previous != cleaned:
        previous = cleaned
        cleaned = cleaned.strip(" ,;:-–—")
        cleaned = _DANGLING.sub("", cleaned).strip()
        cleaned = re.sub(r"\s*\b(?:and|then)$", "", cleaned, flags=re.I)
    return cleaned

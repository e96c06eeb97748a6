"""Typed readers of the response and calendar preference texts.

The texts stay free prose a person can edit; `read_response_style` and `read_calendar_rules`
read the common kinds from them (sign-off and tone of emails; meeting length, hours and days to
avoid, default attendees) with the declarative rules of `memoir/data/planner_preferences.yaml`.
The offline planner honours what they read, and the offline preference learner checks with them
that the lines it writes (the `line` forms of `memoir/data/preference_examples.yaml`, such as
`Meetings last 45 minutes.`) are understood.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import time
from typing import Any

from pydantic import BaseModel, Field

from memoir.llm.tables import table

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ResponseStyle(BaseModel):
    """What the response preferences say about writing emails."""

    sign_off: str | None = None
    greeting: str | None = Field(default=None, description='"Hey <name>,": <name> is replaced.')
    tone: str | None = Field(default=None, description='e.g. "warm", "formal", "brief and warm".')
    other: list[str] = Field(default_factory=list)


class CalendarRules(BaseModel):
    """What the calendar preferences say about scheduling meetings."""

    meeting_minutes: int | None = None
    avoid_before: time | None = None
    avoid_after: time | None = None
    avoid_days: list[str] = Field(default_factory=list, description="Weekday names, e.g. Friday.")
    default_attendees: list[str] = Field(default_factory=list, description="Email addresses.")
    other: list[str] = Field(default_factory=list)


def _quoted(text: str) -> str | None:
    m = re.search(r"[\"“]([^\"”]+)[\"”]|(?<!\w)'([^']+)'(?!\w)", text)
    if m:
        return (m.group(1) or m.group(2)).strip()
    m = re.search(r"\b(?:with|as)\s+([A-Z][^.;:!?]*(?:,\s*[A-Z][\w'-]*)?)", text)
    return m.group(1).strip() if m else None


def _tone(text: str) -> str | None:
    found: list[tuple[int, str]] = []
    for tone, words in table("planner_preferences")["tones"].items():
        spots = [m.start() for w in words for m in re.finditer(rf"\b{re.escape(w)}\b", text, re.I)]
        if spots:
            found.append((min(spots), tone))
    return " and ".join(tone for _, tone in sorted(found)) or None


_UNITS = r"(?:minutes?|mins?|m\b|hours?|hrs?|h\b)"


def minutes_in(text: str) -> int | None:
    """The first duration in `text` in minutes ("45 min", "an hour"; not "in 2 hours")."""
    m = re.search(rf"(?<!\bin )\b(\d+(?:\.\d+)?|an?|one|two|half an)\s*-?\s*({_UNITS})", text, re.I)
    if not m:
        return None
    amount = {"a": 1.0, "an": 1.0, "one": 1.0, "two": 2.0, "half an": 0.5}.get(m.group(1).lower())
    value = amount if amount is not None else float(m.group(1))
    return round(value * 60) if m.group(2).lower().startswith("h") else round(value)


def _time(text: str) -> time | None:
    if re.match(r"(?:12\s*)?(?:noon|midday)\b", text, re.I):
        return time(12)
    m = re.match(r"(\d{1,2})(?:[:.h](\d{2}))?\s*([ap])?\.?m?\.?\b", text, re.I)
    if not m or int(m.group(1)) > 23:
        return None
    hour, minute, half = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower()
    if half == "p" and hour < 12 or not half and 1 <= hour <= 7:  # "after 5": 17:00
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    return time(hour % 24, min(minute, 59))


def _weekdays(text: str) -> list[str] | None:
    days = [d for d in WEEKDAYS if re.search(rf"\b{d[:3]}(?:{d[3:-3]}day)?s?\b", text, re.I)]
    if re.search(r"\bweekends?\b", text, re.I):
        days += ["Saturday", "Sunday"]
    return list(dict.fromkeys(days)) or None


def _emails(text: str) -> list[str] | None:
    return re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text) or None


READERS: dict[str, Callable[[str], Any]] = {
    "quoted": _quoted,
    "tone": _tone,
    "minutes": minutes_in,
    "time": _time,
    "weekdays": _weekdays,
    "emails": _emails,
}


def _sentences(text: str) -> list[str]:
    """Lines, cut at sentence ends; list markers and "When replying, prefer:" heads dropped."""
    out = []
    for line in text.splitlines():
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z\"“'])", line.strip()):
            part = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", part).strip()
            if part:
                out.append(part)
    return out


def _read(text: str, rules: list[dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    """Field values from the sentences of `text` (later ones win), and the unread sentences."""
    values: dict[str, Any] = {}
    other: list[str] = []
    for sentence in _sentences(text):
        read_any = False
        for rule in rules:
            if not re.search(rule["cue"], sentence, re.I):
                continue
            if rule.get("unless") and re.search(rule["unless"], sentence, re.I):
                continue
            at = re.search(rule["at"], sentence, re.I) if rule.get("at") else None
            if rule.get("at") and at is None:
                continue
            value = READERS[rule["read"]](sentence[at.end() :] if at else sentence)
            if value is not None:
                values[rule["field"]] = value
                read_any = True
        if not read_any:
            other.append(sentence)
    return values, other


def read_response_style(text: str) -> ResponseStyle:
    """The sign-off, greeting and tone that the response preferences ask for."""
    values, other = _read(text, table("planner_preferences")["response_style"])
    return ResponseStyle(**values, other=other)


def read_calendar_rules(text: str) -> CalendarRules:
    """Meeting length, hours and days to avoid, and default attendees of the cal preferences."""
    values, other = _read(text, table("planner_preferences")["calendar_rules"])
    return CalendarRules(**values, other=other)

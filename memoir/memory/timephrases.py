"""Recall intent and time phrases for episodic retrieval (seed 003 "Retrieval Policy").

`has_recall_intent("what did we discuss last week?")` → True; `time_filter(text, now, tz)` turns
the first time phrase into a filter on the episodic metadata (`date_iso`, `week`, `year`,
stamped in the user's timezone) in the vector-store filter syntax:

- yesterday (last night), today, N days ago, on Monday (the most recent past Monday), the day
  before yesterday, on 3 May / May 3rd, 2023 (the latest such day not after today) →
  `{"date_iso": {"$gte": "YYYY-MM-DD", "$lte": "YYYY-MM-DD"}}`;
- last week, this week, N weeks ago → the ISO week: `{"week": W, "year": Y}` (ISO year);
- last weekend, last month, this month, in March (the most recent March), N months ago, last
  year, this year, N years ago, in 2019 → a `date_iso` range.

The same spans date the events a message tells of (the hot path resolves "yesterday" in a
message of 8 May 2023 to 2023-05-07); `span_phrase` says a span in words ("On 2023-05-07").
Every day is computed in the user's IANA timezone, by calendar arithmetic (DST-safe).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memoir.memory.speakers import split_speaker
from memoir.timeparse import NUMBER_WORDS

__all__ = [
    "TimeFilter",
    "asks_for_recap",
    "has_recall_intent",
    "local_date",
    "span_phrase",
    "time_filter",
]

_RECALL = re.compile(
    r"\bremember\s+(?:what|when|how)\s+we\b"
    r"|\bwhat\s+(?:did|have|had)\s+we\s+(?:talk|talked|discuss|discussed|decide|decided|do|done|"
    r"say|said|agree|agreed|cover|covered|chat|chatted|speak|spoke|plan|planned)\b"
    r"|\bwhat\s+did\s+i\s+(?:tell|say\s+to|ask)\s+you\b"
    r"|\bwhat\s+were\s+we\s+(?:talking|discussing|doing|saying)\b"
    r"|\bwhat\s+we\s+(?:talked|discussed|decided|did|said|agreed|covered)\b"
    r"|\blast\s+time\s+(?:we|you)\b"
    r"|\b(?:earlier|previously|before)\s+we\s+(?:talked|discussed|spoke|decided|said)\b"
    r"|\bwe\s+(?:talked|spoke|chatted)\s+about\b"
    r"|\bour\s+(?:last|previous|earlier)\s+(?:conversation|chat|discussion|talk)\b"
    r"|\b(?:recap|catch\s+me\s+up)\b",
    re.I,
)

_N = r"\d{1,3}|a\s+couple\s+of|a\s+few|an?|one|two|three|four|five|six|seven|eight|nine|ten"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))

_DAY = r"(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>(?:19|20)\d\d)"

_PHRASES: list[tuple[str, re.Pattern[str]]] = [
    (
        "date",
        re.compile(
            rf"\b(?:on\s+)?(?:{_DAY}\s+(?:of\s+)?(?P<mon>{_MONTH})|(?P<mon2>{_MONTH})\s+"
            rf"{_DAY.replace('<d>', '<d2>')})\b(?:,?\s+{_YEAR}\b)?",
            re.I,
        ),
    ),
    ("day_before_yesterday", re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I)),
    ("yesterday", re.compile(r"\b(?:yesterday|last\s+night)\b", re.I)),
    ("today", re.compile(r"\b(?:today|this\s+morning|this\s+afternoon|earlier\s+today)\b", re.I)),
    ("days_ago", re.compile(rf"\b(?P<n>{_N})\s+days?\s+ago\b", re.I)),
    ("weeks_ago", re.compile(rf"\b(?P<n>{_N})\s+weeks?\s+ago\b", re.I)),
    ("last_week", re.compile(r"\b(?:last|previous|past)\s+week\b", re.I)),
    ("this_week", re.compile(r"\bthis\s+week\b", re.I)),
    ("last_month", re.compile(r"\b(?:last|previous|past)\s+month\b", re.I)),
    ("this_month", re.compile(r"\bthis\s+month\b", re.I)),
    ("last_year", re.compile(r"\b(?:last|previous|past)\s+year\b", re.I)),
    ("months_ago", re.compile(rf"\b(?P<n>{_N})\s+months?\s+ago\b", re.I)),
    ("years_ago", re.compile(rf"\b(?P<n>{_N})\s+years?\s+ago\b", re.I)),
    ("weekend", re.compile(r"\b(?:last|this\s+past|past|over\s+the|on\s+the)\s+weekend\b", re.I)),
    ("year", re.compile(rf"\b(?:in|during|back\s+in)\s+{_YEAR}\b", re.I)),
    ("this_year", re.compile(r"\bthis\s+year\b", re.I)),
    (
        "weekday",
        re.compile(
            r"\b(?:on\s+|last\s+|this\s+past\s+|past\s+)?(?P<wd>" + "|".join(_WEEKDAYS) + r")\b",
            re.I,
        ),
    ),
    ("month", re.compile(rf"\b(?:in|during|last|back\s+in)\s+(?P<mon>{_MONTH})\b\.?", re.I)),
]


@dataclass(frozen=True)
class TimeFilter:
    """A time phrase read as a span of the user's calendar days, and its metadata filter."""

    phrase: str
    label: str
    start: date
    end: date
    filter: dict[str, Any]

    def contains(self, day: date) -> bool:
        """Whether `day` (a date bucket) falls in this span."""
        return self.start <= day <= self.end


def has_recall_intent(text: str) -> bool:
    """Whether the user asks to recall earlier conversations ("what did we discuss …")."""
    return _RECALL.search(text) is not None


_ASKING = re.compile(
    r"\?|^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:recap|catch\s+me\s+up|remind\s+me|"
    r"tell\s+me|summari[sz]e|go\s+over|list|remember)\b",
    re.I,
)


def asks_for_recap(text: str) -> bool:
    """Whether the user asks the assistant to recall earlier conversations: recall intent in a
    question or a request ("what did we discuss yesterday?", "recap our last chat"), not in a
    statement ("last time we met it rained") nor in a relayed line of someone else's
    conversation ("Maya: what did we talk about last time?" is Maya asking her friend)."""
    speaker, body = split_speaker(text)
    return speaker is None and has_recall_intent(body) and _ASKING.search(body) is not None


def local_date(now: datetime, timezone: str) -> date:
    """The user's calendar day at `now` (an aware datetime) in `timezone`."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("local_date needs an aware datetime")
    return now.astimezone(ZoneInfo(timezone)).date()


def _number(word: str) -> int:
    word = re.sub(r"\s+", " ", word.strip().lower())
    return int(NUMBER_WORDS[word]) if word in NUMBER_WORDS else int(word)


def _days(phrase: str, label: str, start: date, end: date | None = None) -> TimeFilter:
    end = end or start
    span = {"$gte": start.isoformat(), "$lte": end.isoformat()}
    return TimeFilter(phrase, label, start, end, {"date_iso": span})


def _week(phrase: str, label: str, day: date) -> TimeFilter:
    year, week, weekday = day.isocalendar()
    monday = day - timedelta(days=weekday - 1)
    return TimeFilter(
        phrase, label, monday, monday + timedelta(days=6), {"week": week, "year": year}
    )


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    following = date(year + (month == 12), month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _read(kind: str, m: re.Match[str], today: date) -> TimeFilter | None:
    phrase = m.group(0).strip()
    if kind == "day_before_yesterday":
        return _days(phrase, "the day before yesterday", today - timedelta(days=2))
    if kind == "yesterday":
        return _days(phrase, "yesterday", today - timedelta(days=1))
    if kind == "today":
        return _days(phrase, "today", today)
    if kind == "days_ago":
        n = _number(m.group("n"))
        return _days(phrase, f"{n} days ago", today - timedelta(days=n))
    if kind == "weeks_ago":
        n = _number(m.group("n"))
        return _week(phrase, f"{n} weeks ago", today - timedelta(weeks=n))
    if kind == "last_week":
        return _week(phrase, "last week", today - timedelta(weeks=1))
    if kind == "this_week":
        return _week(phrase, "this week", today)
    if kind == "last_month":
        year, month = (today.year, today.month - 1) if today.month > 1 else (today.year - 1, 12)
        return _days(phrase, "last month", *_month_span(year, month))
    if kind == "this_month":
        return _days(phrase, "this month", today.replace(day=1), today)
    if kind == "last_year":
        return _days(phrase, "last year", date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))
    if kind == "this_year":
        return _days(phrase, "this year", date(today.year, 1, 1), today)
    if kind == "weekday":
        target = _WEEKDAYS.index(m.group("wd").lower())
        # Strictly past: "on Monday" said on a Monday means a week ago.
        day = today - timedelta(days=(today.weekday() - target) % 7 or 7)
        return _days(phrase, f"{_WEEKDAYS[target].capitalize()} {day.isoformat()}", day)
    if kind == "month":
        month = _MONTHS[m.group("mon").lower()]
        year = today.year if month <= today.month else today.year - 1
        start, end = _month_span(year, month)
        return _days(phrase, f"{start:%B %Y}", start, min(end, today))
    return _read_more(kind, m, phrase, today)


def _read_more(kind: str, m: re.Match[str], phrase: str, today: date) -> TimeFilter | None:
    """Dates, weekends, months or years ago, and years (said of the past)."""
    if kind == "date":
        return _date(m, phrase, today)
    if kind == "weekend":
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
        return _days(phrase, "last weekend", saturday, min(saturday + timedelta(days=1), today))
    if kind == "months_ago":
        n = _number(m.group("n"))
        index = today.year * 12 + today.month - 1 - n
        start, end = _month_span(index // 12, index % 12 + 1)
        return _days(phrase, f"{start:%B %Y}", start, end)
    if kind == "years_ago":
        year = today.year - _number(m.group("n"))
        return _days(phrase, str(year), date(year, 1, 1), date(year, 12, 31))
    if kind == "year":
        year = int(m.group("y"))
        if year > today.year:
            return None
        return _days(phrase, str(year), date(year, 1, 1), min(date(year, 12, 31), today))
    return None


def _date(m: re.Match[str], phrase: str, today: date) -> TimeFilter | None:
    """ "on 3 May" / "May 3rd, 2023": that day (without a year, the latest one not after today)."""
    month = _MONTHS[(m.group("mon") or m.group("mon2")).lower()]
    day_of_month = int(m.group("d") or m.group("d2"))
    years = [int(m.group("y"))] if m.group("y") else [today.year, today.year - 1]
    for year in years:
        try:
            day = date(year, month, day_of_month)
        except ValueError:
            return None
        if m.group("y") or day <= today:
            return _days(phrase, day.isoformat(), day)
    return None


def span_phrase(start: date, end: date) -> str:
    """How a past span reads before an event: "On 2023-05-07", "On the weekend of 2023-05-06",
    "In the week of 2023-05-01", "In May 2023", "In 2022", else "Between 2023-05-01 and
    2023-05-09"."""
    if start == end:
        return f"On {start.isoformat()}"
    if start.weekday() == 5 and end - start == timedelta(days=1):
        return f"On the weekend of {start.isoformat()}"
    if start.weekday() == 0 and end - start == timedelta(days=6):
        return f"In the week of {start.isoformat()}"
    if start.day == 1 and _month_span(start.year, start.month)[1] == end:
        return f"In {start:%B %Y}"
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
        return f"In {start.year}"
    return f"Between {start.isoformat()} and {end.isoformat()}"


def time_filter(text: str, now: datetime, timezone: str) -> TimeFilter | None:
    """The first time phrase of `text` as a `TimeFilter` in the user's timezone, else None."""
    today = local_date(now, timezone)
    found: list[tuple[int, int, str, re.Match[str]]] = []
    for priority, (kind, pattern) in enumerate(_PHRASES):
        for m in pattern.finditer(text):
            found.append((m.start(), priority, kind, m))
    claimed: list[tuple[int, int]] = []
    for start, _priority, kind, m in sorted(found, key=lambda f: (f[0], f[1])):
        if any(start < end and s < m.end() for s, end in claimed):
            continue
        claimed.append((start, m.end()))
        result = _read(kind, m, today)
        if result is not None:
            return result
    return None

"""Recall intent and time phrases → filters on the episodic date buckets, in the user's timezone."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memoir.memory.timephrases import (
    asks_for_recap,
    has_recall_intent,
    local_date,
    span_phrase,
    time_filter,
)

# Wednesday 15 January 2025, 09:30 UTC.
NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)


def days(start: str, end: str | None = None) -> dict[str, object]:
    return {"date_iso": {"$gte": start, "$lte": end or start}}


@pytest.mark.parametrize(
    "text",
    [
        "Remember what we talked about yesterday?",
        "what did we discuss last week",
        "What did we decide about the offsite?",
        "Last time you said something about Luna",
        "can you recap our last conversation",
        "what were we talking about on Monday?",
        "What did I tell you about my sister?",
    ],
)
def test_recall_intent_is_detected(text: str) -> None:
    assert has_recall_intent(text)


@pytest.mark.parametrize(
    "text",
    [
        "Remind me to call mom tomorrow",
        "My dog Luna is 3",
        "What's the weather like?",
        "Schedule a meeting last thing on Friday",
        "Do you know my dog's name?",
    ],
)
def test_ordinary_messages_have_no_recall_intent(text: str) -> None:
    assert not has_recall_intent(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what did we discuss yesterday?", days("2025-01-14")),
        ("what did we do today", days("2025-01-15")),
        ("what did we talk about the day before yesterday", days("2025-01-13")),
        ("what did we discuss 3 days ago", days("2025-01-12")),
        ("what did we discuss two days ago", days("2025-01-13")),
        ("what did we discuss last week", {"week": 2, "year": 2025}),
        ("what did we discuss this week", {"week": 3, "year": 2025}),
        ("what did we discuss 2 weeks ago", {"week": 1, "year": 2025}),
        ("what did we discuss last month", days("2024-12-01", "2024-12-31")),
        ("what did we discuss this month", days("2025-01-01", "2025-01-15")),
        ("what did we discuss on Monday", days("2025-01-13")),
        ("what did we discuss last friday", days("2025-01-10")),
        ("what did we talk about in March", days("2024-03-01", "2024-03-31")),
        ("what did we discuss in January", days("2025-01-01", "2025-01-15")),
        ("what did we discuss last year", days("2024-01-01", "2024-12-31")),
    ],
)
def test_time_phrase_becomes_a_filter(text: str, expected: dict[str, object]) -> None:
    found = time_filter(text, NOW, "UTC")
    assert found is not None
    assert found.filter == expected


def test_on_a_weekday_said_that_weekday_means_a_week_ago() -> None:
    monday = datetime(2025, 1, 13, 12, 0, tzinfo=UTC)
    found = time_filter("what did we discuss on Monday?", monday, "UTC")
    assert found is not None and found.start == date(2025, 1, 6)


def test_no_time_phrase_gives_no_filter() -> None:
    assert time_filter("what did we talk about?", NOW, "UTC") is None


def test_the_first_phrase_wins() -> None:
    found = time_filter("yesterday or last week?", NOW, "UTC")
    assert found is not None and found.label == "yesterday"


def test_yesterday_is_the_users_yesterday_far_east_of_utc() -> None:
    # 23:30 UTC on 14 Jan is 13:30 on 15 Jan in Kiritimati (UTC+14).
    late = datetime(2025, 1, 14, 23, 30, tzinfo=UTC)
    assert local_date(late, "Pacific/Kiritimati") == date(2025, 1, 15)
    found = time_filter("what did we discuss yesterday", late, "Pacific/Kiritimati")
    assert found is not None and found.filter == days("2025-01-14")
    utc = time_filter("what did we discuss yesterday", late, "UTC")
    assert utc is not None and utc.filter == days("2025-01-13")


def test_last_week_crosses_midnight_into_a_new_iso_week_in_auckland() -> None:
    # Sunday 23:30 UTC = Monday 12:30 in Auckland (UTC+13 in January): a new ISO week there.
    sunday = datetime(2025, 1, 19, 23, 30, tzinfo=UTC)
    auckland = time_filter("what did we discuss last week", sunday, "Pacific/Auckland")
    utc = time_filter("what did we discuss last week", sunday, "UTC")
    assert auckland is not None and auckland.filter == {"week": 3, "year": 2025}
    assert utc is not None and utc.filter == {"week": 2, "year": 2025}


def test_days_ago_counts_calendar_days_across_a_dst_change() -> None:
    # US clocks went forward on Sunday 9 March 2025; 00:30 on 10 March in New York.
    after = datetime(2025, 3, 10, 4, 30, tzinfo=UTC)
    found = time_filter("what did we discuss 2 days ago", after, "America/New_York")
    assert found is not None and found.filter == days("2025-03-08")
    yesterday = time_filter("what did we discuss yesterday", after, "America/New_York")
    assert yesterday is not None and yesterday.filter == days("2025-03-09")


def test_last_week_uses_the_iso_year_at_new_year() -> None:
    # Monday 5 January 2026: last week is ISO week 1 of 2026 (29 Dec 2025 – 4 Jan 2026).
    found = time_filter("what did we discuss last week", datetime(2026, 1, 5, tzinfo=UTC), "UTC")
    assert found is not None
    assert found.filter == {"week": 1, "year": 2026}
    assert (found.start, found.end) == (date(2025, 12, 29), date(2026, 1, 4))


def test_a_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError):
        time_filter("yesterday", datetime(2025, 1, 1), "UTC")


# Monday 8 May 2023, 13:56 UTC: the message time events are dated against.
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end", "said"),
    [
        ("yesterday", "2023-05-07", "2023-05-07", "On 2023-05-07"),
        ("last night", "2023-05-07", "2023-05-07", "On 2023-05-07"),
        ("on 3 May", "2023-05-03", "2023-05-03", "On 2023-05-03"),
        ("May 10th", "2022-05-10", "2022-05-10", "On 2022-05-10"),  # not yet this year
        ("on the 2nd of April, 2021", "2021-04-02", "2021-04-02", "On 2021-04-02"),
        ("last weekend", "2023-05-06", "2023-05-07", "On the weekend of 2023-05-06"),
        ("last week", "2023-05-01", "2023-05-07", "In the week of 2023-05-01"),
        ("two months ago", "2023-03-01", "2023-03-31", "In March 2023"),
        ("3 years ago", "2020-01-01", "2020-12-31", "In 2020"),
        ("back in 2019", "2019-01-01", "2019-12-31", "In 2019"),
    ],
)
def test_past_spans_for_events(text: str, start: str, end: str, said: str) -> None:
    found = time_filter(text, MAY_8, "UTC")
    assert found is not None
    assert (found.start.isoformat(), found.end.isoformat()) == (start, end)
    assert span_phrase(found.start, found.end) == said


def test_a_year_still_to_come_is_no_span() -> None:
    assert time_filter("in 2031", MAY_8, "UTC") is None


def test_an_impossible_date_is_no_span() -> None:
    assert time_filter("on 31 February", MAY_8, "UTC") is None


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("What did we discuss yesterday?", True),
        ("Recap what we talked about last week", True),
        ("Last time you said something about Luna", False),  # recall, but no question
        ("Last time I went there it rained", False),
        ("Maya: what did we talk about last time?", False),  # Maya asks her friend
    ],
)
def test_a_recap_is_asked_for_only_in_a_question_or_request(text: str, asks: bool) -> None:
    assert asks_for_recap(text) is asks

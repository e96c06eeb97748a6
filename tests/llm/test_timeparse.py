"""parse_when / strip_when: reminder time phrases in the user's timezone; clock times and
durations of preference texts."""

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from memoir.timeparse import clock_time, duration_minutes, parse_when, strip_when

NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)  # Wed 10:30 in Paris
PARIS = ZoneInfo("Europe/Paris")


def paris(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2025, 1, day, hour, minute, tzinfo=PARIS)


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("in 10 minutes", paris(15, 10, 40)),
        ("in 2 hours", paris(15, 12, 30)),
        ("in half an hour", paris(15, 11, 0)),
        ("in 3 days", paris(18, 10, 30)),
        ("at 5pm", paris(15, 17)),
        ("at 17:30", paris(15, 17, 30)),
        ("tomorrow", paris(16, 9)),
        ("tomorrow at 9", paris(16, 9)),
        ("tonight", paris(15, 20)),
        ("on Monday at 10am", paris(20, 10)),
        ("next week", paris(20, 9)),
        ("at noon", paris(15, 12)),
        ("on Jan 20 at 3pm", paris(20, 15)),
    ],
)
def test_phrase_resolves_in_user_timezone(phrase: str, expected: datetime) -> None:
    result = parse_when(f"remind me to call mom {phrase}", NOW, "Europe/Paris")
    assert result == expected
    assert result is not None and result.tzinfo is not None


def test_results_are_aware_and_in_the_user_zone() -> None:
    result = parse_when("at 5pm", NOW, "America/New_York")
    assert result is not None
    assert result.utcoffset() == timedelta(hours=-5)
    assert (result.hour, result.minute) == (17, 0)


def test_bare_time_in_the_past_rolls_to_next_day() -> None:
    assert parse_when("at 9am", NOW, "Europe/Paris") == paris(16, 9)


def test_bare_hour_without_am_pm_takes_next_occurrence() -> None:
    # 10:30 now: "at 9" means 21:00 today, not 09:00 tomorrow.
    assert parse_when("at 9", NOW, "Europe/Paris") == paris(15, 21)


def test_far_east_timezone_tomorrow_is_computed_after_local_midnight() -> None:
    # 11:30 UTC on the 15th is already 01:30 on the 16th in Kiritimati (UTC+14).
    now = datetime(2025, 1, 15, 11, 30, tzinfo=UTC)
    result = parse_when("tomorrow at 9", now, "Pacific/Kiritimati")
    assert result == datetime(2025, 1, 17, 9, 0, tzinfo=ZoneInfo("Pacific/Kiritimati"))
    assert result.astimezone(UTC) == datetime(2025, 1, 16, 19, 0, tzinfo=UTC)


def test_far_west_timezone_today_is_still_the_previous_utc_day() -> None:
    # 06:30 UTC on the 15th is 20:30 on the 14th in Honolulu (UTC-10).
    now = datetime(2025, 1, 15, 6, 30, tzinfo=UTC)
    result = parse_when("at 10pm", now, "Pacific/Honolulu")
    assert result == datetime(2025, 1, 14, 22, 0, tzinfo=ZoneInfo("Pacific/Honolulu"))


def test_relative_time_crosses_midnight_in_local_time() -> None:
    now = datetime(2025, 1, 15, 22, 50, tzinfo=UTC)  # 23:50 in Paris
    assert parse_when("in 20 minutes", now, "Europe/Paris") == paris(16, 0, 10)


def test_text_without_time_gives_none() -> None:
    assert parse_when("call mom and enjoy the sun", NOW, "Europe/Paris") is None


def test_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError):
        parse_when("at 5pm", datetime(2025, 1, 15, 9, 30), "Europe/Paris")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("remind me to call mom at 5pm tomorrow", "remind me to call mom"),
        ("in 10 minutes take the pizza out", "take the pizza out"),
        ("water the plants on Monday at 10am", "water the plants"),
        ("pay rent next week", "pay rent"),
        ("call Dan at 17:30, then", "call Dan"),
    ],
)
def test_strip_when_keeps_only_the_reminder_text(text: str, expected: str) -> None:
    assert strip_when(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9", time(9)),
        ("9am and after 5pm", time(9)),
        ("9.30", time(9, 30)),
        ("7:30", time(7, 30)),
        ("10h30", time(10, 30)),
        ("5 pm", time(17)),
        ("5", time(17)),
        ("12 noon", time(12)),
        ("midday", time(12)),
        ("11 a.m.", time(11)),
        ("10 and 17:00", time(10)),
    ],
)
def test_clock_time_reads_the_time_a_text_starts_with(text: str, expected: time) -> None:
    assert clock_time(text) == expected


@pytest.mark.parametrize("text", ["5 minutes, so nothing was done", "24", "Friday", "soon"])
def test_clock_time_is_none_for_what_is_no_clock_time(text: str) -> None:
    assert clock_time(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Meetings last 45 minutes.", 45),
        ("15-minute meetings", 15),
        ("an hour", 60),
        ("half an hour", 30),
        ("1.5 hrs", 90),
        ("a few minutes", 3),
        ("three hours", 180),
    ],
)
def test_duration_minutes_reads_the_first_duration(text: str, expected: int) -> None:
    assert duration_minutes(text) == expected


@pytest.mark.parametrize("text", ["remind me in 2 hours", "<a href='x'>link</a>", "at 5pm"])
def test_duration_minutes_is_none_without_a_duration(text: str) -> None:
    assert duration_minutes(text) is None

"""Episodic capture's pure rules: cooldowns, the daily cap, novelty, date buckets, the sentence."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from memoir.memory.episodic import (
    DateBucket,
    date_bucket,
    describe_action,
    episode_sentence,
    merge_phrases,
    novelty,
    outcome_signals,
)
from memoir.memory.episodic_state import (
    EpisodicState,
    after_write,
    cooldown_reason,
    daily_cap_reason,
)
from memoir.models import ExecutionResult, UserProfile
from tests.memory.support import NOW, remember, reminder_result

USER = UserProfile(user_id="u1", name="Ana")


def state(
    turns: int, minutes_ago: float | None, day: date | None = None, count: int = 0
) -> EpisodicState:
    last = NOW - timedelta(minutes=minutes_ago) if minutes_ago is not None else None
    return EpisodicState(turns, last, day, count)


@pytest.mark.parametrize(
    ("turns", "minutes_ago", "cooling"),
    [
        (0, None, False),  # never wrote an episode: no cooldown
        (1, 2, True),  # 1 turn and 2 minutes: both short
        (2, 9.9, True),
        (3, 1, False),  # enough turns
        (1, 10, False),  # enough minutes
        (5, 60, False),
    ],
)
def test_cooldown_needs_enough_turns_or_enough_minutes(
    turns: int, minutes_ago: float | None, cooling: bool
) -> None:
    reason = cooldown_reason(state(turns, minutes_ago), NOW, turns=3, minutes=10)
    assert (reason is not None) == cooling


def test_cooldown_of_zero_turns_never_holds() -> None:
    assert cooldown_reason(state(0, 0), NOW, turns=0, minutes=10) is None


def test_daily_cap_counts_only_the_users_current_day() -> None:
    today = date(2025, 1, 15)
    assert daily_cap_reason(state(0, 1, today, 5), today, max_per_day=5) is not None
    assert daily_cap_reason(state(0, 1, today, 4), today, max_per_day=5) is None
    yesterday = today - timedelta(days=1)
    assert daily_cap_reason(state(0, 1, yesterday, 5), today, max_per_day=5) is None


def test_after_write_restarts_the_cooldown_and_counts_creates_only() -> None:
    today = date(2025, 1, 15)
    before = state(4, 30, today, 2)
    assert after_write(before, NOW, today, created=True) == EpisodicState(0, NOW, today, 3)
    assert after_write(before, NOW, today, created=False) == EpisodicState(0, NOW, today, 2)
    new_day = today + timedelta(days=1)
    assert after_write(before, NOW, new_day, created=True).day_count == 1


def test_novelty_is_one_minus_the_best_similarity() -> None:
    assert novelty(None) == 1.0
    assert novelty(0.8) == pytest.approx(0.2)
    assert novelty(1.2) == 0.0


def test_the_summary_sentence_is_exact() -> None:
    bucket = DateBucket(date(2025, 1, 5), 1, 2025)
    sentence = episode_sentence(bucket, "a reminder to call your mom.", "set a reminder")
    assert sentence == (
        "On 2025-01-05 (W01, 2025) we discussed a reminder to call your mom. "
        "Approach: set a reminder."
    )


def test_date_bucket_is_the_users_local_day_and_iso_week() -> None:
    # 23:30 UTC on Sunday 29 Dec 2024 is Monday 30 Dec in Auckland: ISO week 1 of 2025.
    late = datetime(2024, 12, 29, 23, 30, tzinfo=UTC)
    assert date_bucket(late, "Pacific/Auckland") == DateBucket(date(2024, 12, 30), 1, 2025)
    assert date_bucket(late, "UTC") == DateBucket(date(2024, 12, 29), 52, 2024)


def test_actions_are_described_in_the_past_with_local_times() -> None:
    result = reminder_result("call my mom", "2025-01-15T17:00:00+00:00")
    assert describe_action(result, "Europe/Lisbon") == (
        "set a reminder to call your mom for 2025-01-15 17:00"
    )
    failed = ExecutionResult(
        step_id="s1", capability="email.send", success=False, summary="", error="SMTP down"
    )
    assert describe_action(failed, "UTC") == "email.send failed: SMTP down"


def test_outcome_signals_are_actions_or_a_recap() -> None:
    assert outcome_signals(remember(USER, "hi there")) == []
    assert outcome_signals(remember(USER, "remind me", results=[reminder_result("x")])) == [
        "reminders.create: ok"
    ]
    assert outcome_signals(remember(USER, "what did we discuss yesterday?")) == ["recap asked for"]


def test_merged_phrases_keep_both_without_repeating() -> None:
    assert merge_phrases("a reminder", "a reminder", "; ") == "a reminder"
    assert merge_phrases("email to Dan", "email to Dan about Q3", "; ") == "email to Dan about Q3"
    assert merge_phrases("set A", "set B", "; then ") == "set A; then set B"

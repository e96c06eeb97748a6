"""Episodic capture bookkeeping (`episodic_state`): cooldowns and the daily cap, as pure rules.

A user's state counts the turns since the last episode, when it was written, and how many were
created on their current local day. `cooldown_reason` and `daily_cap_reason` decide from a state
alone; `EpisodicStateStore` reads and writes the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from memoir.db import Pool
from memoir.stores._common import require_aware, user_must_exist

__all__ = [
    "EpisodicState",
    "EpisodicStateStore",
    "after_write",
    "cooldown_reason",
    "daily_cap_reason",
    "episodes_today",
]


@dataclass(frozen=True)
class EpisodicState:
    """Turns since the last episode (this one included), when it was written, today's count."""

    turns_since_last: int = 0
    last_created_at: datetime | None = None
    day_iso: date | None = None
    day_count: int = 0


def cooldown_reason(
    state: EpisodicState, now: datetime, *, turns: int, minutes: float
) -> str | None:
    """Why this turn is still in cooldown, or None.

    Seed 003: an episode needs ≥ `turns` turns or ≥ `minutes` minutes since the last one; the
    cooldown holds only while both are short. The first episode has no cooldown.
    """
    if state.last_created_at is None:
        return None
    elapsed = (now - state.last_created_at).total_seconds() / 60.0
    if state.turns_since_last < turns and elapsed < minutes:
        return (
            f"cooldown: {state.turns_since_last} turn(s) < {turns} and {elapsed:.1f} min < "
            f"{minutes:g} min since the last episode"
        )
    return None


def episodes_today(state: EpisodicState, today: date) -> int:
    """Episodes created on the user's local day `today` (another day's count is stale)."""
    return state.day_count if state.day_iso == today else 0


def daily_cap_reason(state: EpisodicState, today: date, *, max_per_day: int) -> str | None:
    """Why today's cap is reached, or None."""
    count = episodes_today(state, today)
    if count >= max_per_day:
        return f"daily cap: {count} episode(s) on {today.isoformat()} ≥ {max_per_day}"
    return None


def after_write(
    state: EpisodicState, now: datetime, today: date, *, created: bool
) -> EpisodicState:
    """The state once an episode is written (a merge restarts the cooldown, adds nothing)."""
    count = episodes_today(state, today) + (1 if created else 0)
    return EpisodicState(turns_since_last=0, last_created_at=now, day_iso=today, day_count=count)


def _state(row: Mapping[str, Any] | None) -> EpisodicState:
    if row is None:
        return EpisodicState()
    return EpisodicState(
        turns_since_last=row["turns_since_last"],
        last_created_at=row["last_created_at"],
        day_iso=row["day_iso"],
        day_count=row["day_count"],
    )


class EpisodicStateStore:
    """The `episodic_state` row of each user."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def get(self, user_id: str) -> EpisodicState:
        """The user's state (all zero before their first turn)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute("SELECT * FROM episodic_state WHERE user_id = %s", (user_id,))
            return _state(await cur.fetchone())

    async def count_turn(self, user_id: str, turn_id: str) -> EpisodicState:
        """Count this turn since the last episode, once (a retry of the same turn adds nothing)."""
        async with self.pool.connection() as conn, user_must_exist(user_id):
            cur = await conn.execute(
                "INSERT INTO episodic_state AS s (user_id, turns_since_last, last_turn_id)"
                " VALUES (%s, 1, %s)"
                " ON CONFLICT (user_id) DO UPDATE SET turns_since_last = s.turns_since_last"
                " + CASE WHEN s.last_turn_id IS DISTINCT FROM EXCLUDED.last_turn_id"
                " THEN 1 ELSE 0 END,"
                " last_turn_id = EXCLUDED.last_turn_id, updated_at = now()"
                " RETURNING *",
                (user_id, turn_id),
            )
            return _state(await cur.fetchone())

    async def record_write(
        self, user_id: str, now: datetime, today: date, *, created: bool
    ) -> EpisodicState:
        """An episode was created (or merged) now: restart the cooldown, count today's."""
        require_aware(now, "now")
        async with self.pool.connection() as conn, user_must_exist(user_id):
            cur = await conn.execute(
                "INSERT INTO episodic_state AS s (user_id, turns_since_last, last_created_at,"
                " day_iso, day_count) VALUES (%s, 0, %s, %s, %s)"
                " ON CONFLICT (user_id) DO UPDATE SET turns_since_last = 0,"
                " last_created_at = EXCLUDED.last_created_at, day_iso = EXCLUDED.day_iso,"
                " day_count = CASE WHEN s.day_iso = EXCLUDED.day_iso"
                " THEN s.day_count + %s ELSE %s END, updated_at = now()"
                " RETURNING *",
                (user_id, now, today, int(created), int(created), int(created)),
            )
            return _state(await cur.fetchone())

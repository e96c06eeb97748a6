"""The episodic_state row: turns counted once each, even when a capture is retried."""

from memoir.db import Pool
from memoir.memory.episodic_state import EpisodicStateStore
from memoir.models import UserProfile


async def test_each_turn_counts_once(pool: Pool, user: UserProfile) -> None:
    states = EpisodicStateStore(pool)
    await states.count_turn(user.user_id, "turn:a")
    state = await states.count_turn(user.user_id, "turn:b")
    assert state.turns_since_last == 2


async def test_a_retried_capture_does_not_count_its_turn_twice(
    pool: Pool, user: UserProfile
) -> None:
    states = EpisodicStateStore(pool)
    await states.count_turn(user.user_id, "turn:a")
    state = await states.count_turn(user.user_id, "turn:a")
    assert state.turns_since_last == 1

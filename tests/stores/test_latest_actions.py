"""LatestActionStore: seed 002 LatestActions contract (FIFO 10, 12 h, newest first, last 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoir.models import LatestAction, UserProfile
from memoir.stores import Stores

NOW = datetime(2030, 5, 17, 12, 0, tzinfo=UTC)


def _action(i: int, at: datetime) -> LatestAction:
    return LatestAction(
        created_at=at,
        capability="reminders.create",
        action="create",
        summary=f"reminder {i}",
        when="tomorrow 5pm" if i % 2 else None,
        external_ids={"reminder_id": f"rem_{i}"},
    )


async def _push_n(stores: Stores, user: UserProfile, n: int, thread: str = "t1") -> None:
    for i in range(n):
        at = NOW - timedelta(minutes=n - i)  # i grows with time: the last pushed is the newest
        await stores.latest_actions.push(
            user.user_id, thread, _action(i, at), key=f"{user.user_id}:{thread}:{i}"
        )


async def test_latest_returns_last_three_newest_first(stores: Stores, user: UserProfile) -> None:
    await _push_n(stores, user, 5)
    latest = await stores.latest_actions.latest(user.user_id, "t1", now=NOW)
    assert [a.summary for a in latest] == ["reminder 4", "reminder 3", "reminder 2"]


async def test_latest_action_round_trips_all_fields(stores: Stores, user: UserProfile) -> None:
    action = _action(1, NOW - timedelta(minutes=1))
    await stores.latest_actions.push(user.user_id, "t1", action, key=f"{user.user_id}:rt")
    (stored,) = await stores.latest_actions.latest(user.user_id, "t1", now=NOW)
    assert stored == action


async def test_thread_keeps_only_the_newest_ten(stores: Stores, user: UserProfile) -> None:
    await _push_n(stores, user, 13)
    kept = await stores.latest_actions.latest(user.user_id, "t1", now=NOW, limit=100)
    assert [a.summary for a in kept] == [f"reminder {i}" for i in range(12, 2, -1)]


async def test_max_per_thread_is_configurable(stores: Stores, user: UserProfile) -> None:
    for i in range(4):
        await stores.latest_actions.push(
            user.user_id,
            "t1",
            _action(i, NOW - timedelta(minutes=10 - i)),
            key=f"{user.user_id}:m{i}",
            max_per_thread=2,
        )
    kept = await stores.latest_actions.latest(user.user_id, "t1", now=NOW, limit=100)
    assert [a.summary for a in kept] == ["reminder 3", "reminder 2"]


async def test_actions_older_than_twelve_hours_are_not_returned(
    stores: Stores, user: UserProfile
) -> None:
    uid = user.user_id
    await stores.latest_actions.push(
        uid, "t1", _action(0, NOW - timedelta(hours=13)), key=f"{uid}:old"
    )
    await stores.latest_actions.push(
        uid, "t1", _action(1, NOW - timedelta(hours=11)), key=f"{uid}:recent"
    )
    latest = await stores.latest_actions.latest(uid, "t1", now=NOW)
    assert [a.summary for a in latest] == ["reminder 1"]
    wider = await stores.latest_actions.latest(uid, "t1", now=NOW, within_hours=24)
    assert len(wider) == 2


async def test_push_is_idempotent_on_key(stores: Stores, user: UserProfile) -> None:
    action = _action(0, NOW - timedelta(minutes=1))
    for _ in range(3):
        await stores.latest_actions.push(user.user_id, "t1", action, key=f"{user.user_id}:same")
    assert len(await stores.latest_actions.latest(user.user_id, "t1", now=NOW)) == 1


async def test_threads_are_separate(stores: Stores, user: UserProfile) -> None:
    await _push_n(stores, user, 2, thread="t1")
    await _push_n(stores, user, 12, thread="t2")
    assert len(await stores.latest_actions.latest(user.user_id, "t1", now=NOW, limit=50)) == 2


async def test_naive_datetimes_are_rejected(stores: Stores, user: UserProfile) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        await stores.latest_actions.latest(user.user_id, "t1", now=datetime(2030, 1, 1))

"""Postgres stores: one small class per table family, every query scoped by `user_id`."""

from __future__ import annotations

from dataclasses import dataclass

from memoir.db import Pool
from memoir.stores._common import UnknownUserError
from memoir.stores.interactions import InteractionStore
from memoir.stores.latest_actions import LatestActionStore
from memoir.stores.preferences import DEFAULT_PREFERENCES, PreferenceStore, PreferenceVersion
from memoir.stores.reminders import Reminder, ReminderStore
from memoir.stores.users import UserExistsError, UserStore


@dataclass(frozen=True, slots=True)
class Stores:
    """Every store over one pool."""

    pool: Pool
    users: UserStore
    interactions: InteractionStore
    latest_actions: LatestActionStore
    preferences: PreferenceStore
    reminders: ReminderStore

    @classmethod
    def from_pool(cls, pool: Pool) -> Stores:
        """One of each store over `pool`."""
        return cls(
            pool=pool,
            users=UserStore(pool),
            interactions=InteractionStore(pool),
            latest_actions=LatestActionStore(pool),
            preferences=PreferenceStore(pool),
            reminders=ReminderStore(pool),
        )


__all__ = [
    "DEFAULT_PREFERENCES",
    "InteractionStore",
    "LatestActionStore",
    "PreferenceStore",
    "PreferenceVersion",
    "Reminder",
    "ReminderStore",
    "Stores",
    "UnknownUserError",
    "UserExistsError",
    "UserStore",
]

"""Postgres stores: one small class per table family, every query scoped by `user_id`."""

from __future__ import annotations

from dataclasses import dataclass

from memoir.db import Pool
from memoir.settings import Settings
from memoir.stores._common import UnknownUserError
from memoir.stores.contacts import Contact, ContactStore
from memoir.stores.interactions import InteractionStore
from memoir.stores.latest_actions import LatestActionStore
from memoir.stores.memories import DuplicateMemoryKeyError, MemoryStore
from memoir.stores.messages import MessageRecord, MessageRecordStore, ScoredRecord
from memoir.stores.preferences import DEFAULT_PREFERENCES, PreferenceStore, PreferenceVersion
from memoir.stores.reminders import Reminder, ReminderStore
from memoir.stores.user_context import UserContext, UserContextStore
from memoir.stores.users import UserExistsError, UserStore
from memoir.vectors.base import VectorStore
from memoir.vectors.factory import vector_store
from memoir.vectors.pgvector import PgVectorStore


@dataclass(frozen=True, slots=True)
class Stores:
    """Every store over one pool."""

    pool: Pool
    users: UserStore
    interactions: InteractionStore
    latest_actions: LatestActionStore
    preferences: PreferenceStore
    reminders: ReminderStore
    memories: MemoryStore
    messages: MessageRecordStore
    user_context: UserContextStore
    contacts: ContactStore

    @classmethod
    def from_pool(cls, pool: Pool, vectors: VectorStore | None = None) -> Stores:
        """One of each store over `pool`; memory vectors in `vectors` (default: pgvector)."""
        return cls(
            pool=pool,
            users=UserStore(pool),
            interactions=InteractionStore(pool),
            latest_actions=LatestActionStore(pool),
            preferences=PreferenceStore(pool),
            reminders=ReminderStore(pool),
            memories=MemoryStore(pool, vectors if vectors is not None else PgVectorStore(pool)),
            messages=MessageRecordStore(pool),
            user_context=UserContextStore(pool),
            contacts=ContactStore(pool),
        )

    @classmethod
    def configured(cls, pool: Pool, settings: Settings) -> Stores:
        """The stores with the vector backend the settings choose (MEMOIR_VECTOR_BACKEND)."""
        return cls.from_pool(pool, vector_store(settings, pool))


__all__ = [
    "Contact",
    "ContactStore",
    "DEFAULT_PREFERENCES",
    "DuplicateMemoryKeyError",
    "InteractionStore",
    "LatestActionStore",
    "MemoryStore",
    "MessageRecord",
    "MessageRecordStore",
    "PreferenceStore",
    "PreferenceVersion",
    "Reminder",
    "ReminderStore",
    "ScoredRecord",
    "Stores",
    "UnknownUserError",
    "UserContext",
    "UserContextStore",
    "UserExistsError",
    "UserStore",
]

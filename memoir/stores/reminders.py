"""Reminders: created once per idempotency key, found by text, delivered at most once."""

from __future__ import annotations

import builtins
import hashlib
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from memoir.db import Pool
from memoir.models import ReminderDue
from memoir.stores._common import require_aware, user_must_exist

ReminderStatus = Literal["pending", "completed", "deleted", "delivered"]

SIMILARITY_MIN = 0.3  # pg_trgm similarity(text, query)
WORD_SIMILARITY_MIN = 0.5  # pg_trgm word_similarity(query, text): typos of a word
# Words that say nothing about which reminder is meant.
_STOPWORDS = frozenset(
    {"the", "and", "for", "about", "that", "this", "with", "from", "into", "please"}
    | {"remind", "reminder", "reminders"}
)


class Reminder(BaseModel):
    """One reminder row."""

    reminder_id: str
    idempotency_key: str
    user_id: str
    thread_id: str
    text: str
    due_at: datetime
    status: ReminderStatus
    created_at: datetime
    completed_at: datetime | None = None
    delivered_at: datetime | None = None

    def due(self) -> ReminderDue:
        """What the reminder timer workflow needs."""
        return ReminderDue(
            reminder_id=self.reminder_id,
            user_id=self.user_id,
            thread_id=self.thread_id,
            text=self.text,
            due_at=self.due_at,
        )


def reminder_id_for(idempotency_key: str) -> str:
    """The reminder id derived from an idempotency key: `rem_` + 16 hex of its sha256."""
    return "rem_" + hashlib.sha256(idempotency_key.encode("utf-8")).hexdigest()[:16]


def _like_patterns(query: str) -> list[str]:
    """ILIKE patterns (`%word%`, escaped) for the meaningful words of a query."""
    words = [w for w in re.findall(r"\w+", query.lower()) if len(w) >= 3 and w not in _STOPWORDS]
    escaped = (re.sub(r"([\\%_])", r"\\\1", w) for w in dict.fromkeys(words))
    return [f"%{w}%" for w in escaped]


def _reminder(row: dict[str, Any]) -> Reminder:
    return Reminder.model_validate(row)


_COLUMNS = (
    "reminder_id, idempotency_key, user_id, thread_id, text, due_at, status,"
    " created_at, completed_at, delivered_at"
)


class ReminderStore:
    """A user's reminders."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def _one(self, sql: str, params: dict[str, Any]) -> Reminder | None:
        async with self.pool.connection() as conn:
            cur = await conn.execute(sql, params)
            row = await cur.fetchone()
        return _reminder(row) if row else None

    async def create(
        self,
        *,
        user_id: str,
        thread_id: str,
        text: str,
        due_at: datetime,
        idempotency_key: str,
    ) -> Reminder:
        """Create a pending reminder; a retry with the same key returns the row stored first."""
        require_aware(due_at, "due_at")
        text = text.strip()
        if not text:
            raise ValueError("reminder text must not be empty")
        params = {
            "rid": reminder_id_for(idempotency_key),
            "key": idempotency_key,
            "u": user_id,
            "t": thread_id,
            "text": text,
            "due": due_at,
        }
        async with self.pool.connection() as conn, user_must_exist(user_id):
            cur = await conn.execute(
                "INSERT INTO reminders (reminder_id, idempotency_key, user_id, thread_id, text,"
                " due_at) VALUES (%(rid)s, %(key)s, %(u)s, %(t)s, %(text)s, %(due)s)"
                f" ON CONFLICT DO NOTHING RETURNING {_COLUMNS}",
                params,
            )
            row = await cur.fetchone()
            if row is None:
                cur = await conn.execute(
                    f"SELECT {_COLUMNS} FROM reminders"
                    " WHERE idempotency_key = %(key)s AND user_id = %(u)s",
                    params,
                )
                row = await cur.fetchone()
        if row is None:
            raise ValueError(f"idempotency key {idempotency_key!r} belongs to another user")
        return _reminder(row)

    async def list(
        self, user_id: str, *, status: ReminderStatus | None = "pending"
    ) -> builtins.list[Reminder]:
        """The user's reminders with `status` (all when None), soonest due first."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM reminders WHERE user_id = %(u)s"
                " AND (%(s)s::text IS NULL OR status = %(s)s)"
                " ORDER BY due_at, created_at, reminder_id",
                {"u": user_id, "s": status},
            )
            rows = await cur.fetchall()
        return [_reminder(r) for r in rows]

    async def get(self, user_id: str, reminder_id: str) -> Reminder | None:
        """One of the user's reminders, or None."""
        return await self._one(
            f"SELECT {_COLUMNS} FROM reminders WHERE user_id = %(u)s AND reminder_id = %(r)s",
            {"u": user_id, "r": reminder_id},
        )

    async def find(self, user_id: str, query: str) -> builtins.list[Reminder]:
        """Pending reminders whose text matches `query`, best match first.

        A reminder matches when it contains one of the query's words (ILIKE), when its trigram
        similarity to the query exceeds 0.3, or when the query is close to a part of it (pg_trgm
        word similarity >= 0.5: typos). Ranking: most words contained, then similarity.
        """
        query = query.strip()
        if not query:
            return []
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM ("
                f" SELECT {_COLUMNS},"
                "  (SELECT count(*) FROM unnest(%(p)s::text[]) AS p WHERE text ILIKE p) AS hits,"
                "  similarity(text, %(q)s) AS sim,"
                "  word_similarity(%(q)s, text) AS word_sim"
                " FROM reminders WHERE user_id = %(u)s AND status = 'pending'"
                ") AS r WHERE hits > 0 OR sim > %(min)s OR word_sim >= %(word_min)s"
                " ORDER BY hits DESC, greatest(sim, word_sim) DESC, sim DESC, due_at",
                {
                    "u": user_id,
                    "q": query,
                    "p": _like_patterns(query),
                    "min": SIMILARITY_MIN,
                    "word_min": WORD_SIMILARITY_MIN,
                },
            )
            rows = await cur.fetchall()
        return [_reminder(r) for r in rows]

    async def complete(self, user_id: str, reminder_id: str) -> Reminder | None:
        """Mark a pending or delivered reminder completed (idempotent); None if unknown/deleted."""
        return await self._one(
            "UPDATE reminders SET status = 'completed',"
            " completed_at = coalesce(completed_at, now())"
            " WHERE user_id = %(u)s AND reminder_id = %(r)s"
            " AND status IN ('pending', 'delivered', 'completed')"
            f" RETURNING {_COLUMNS}",
            {"u": user_id, "r": reminder_id},
        )

    async def delete(self, user_id: str, reminder_id: str) -> Reminder | None:
        """Soft-delete a reminder (status `deleted`, idempotent); None if unknown."""
        return await self._one(
            "UPDATE reminders SET status = 'deleted'"
            f" WHERE user_id = %(u)s AND reminder_id = %(r)s RETURNING {_COLUMNS}",
            {"u": user_id, "r": reminder_id},
        )

    async def mark_delivered(
        self, reminder_id: str, *, user_id: str | None = None
    ) -> Reminder | None:
        """Mark a still-pending reminder delivered and return it; None otherwise.

        Only the first call returns the reminder, so its delivery happens once. Pass `user_id`
        to scope the update to that user.
        """
        return await self._one(
            "UPDATE reminders SET status = 'delivered', delivered_at = now()"
            " WHERE reminder_id = %(r)s AND status = 'pending'"
            " AND (%(u)s::text IS NULL OR user_id = %(u)s)"
            f" RETURNING {_COLUMNS}",
            {"u": user_id, "r": reminder_id},
        )

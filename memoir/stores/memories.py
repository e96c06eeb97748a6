"""Semantic and episodic memories (seeds 001, 003): rows in `memories`, vectors in a VectorStore.

A row is written before its vector (pgvector's `memory_vectors` references it) and deleted
before it (Pinecone has no cascade, so the store deletes the vector itself). A search whose
vector outlived its row skips it. Every change of a summary comes with its new embedding.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from psycopg import errors
from psycopg.types.json import Jsonb

from memoir.db import Pool
from memoir.memory.models import Memory, MemoryKind
from memoir.stores._common import require_aware, user_must_exist
from memoir.vectors.base import Filter, VectorStore

MEMORY_ID_PREFIX = "mem_"


class _Unset(Enum):
    UNSET = "unset"


UNSET = _Unset.UNSET  # "leave as it is" for arguments where None has a meaning of its own


class DuplicateMemoryKeyError(ValueError):
    """Another memory of this user already has this deterministic key."""


@runtime_checkable
class MetadataUpdatable(Protocol):
    """A vector store that can change a vector's metadata without its values."""

    async def update_metadata(self, user_id: str, memory_id: str, metadata: dict[str, Any]) -> None:
        """Set these metadata keys on one vector of this user."""
        ...


def new_memory_id() -> str:
    """A new memory id: `mem_` and a uuid4 in hex."""
    return MEMORY_ID_PREFIX + uuid.uuid4().hex


def new_memory(
    *,
    user_id: str,
    kind: MemoryKind,
    category: str,
    summary: str,
    importance: float,
    key: str | None = None,
    pinned: bool = False,
    source_message_ids: Iterable[str] = (),
    date_iso: date | None = None,
    week: int | None = None,
    year: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> Memory:
    """A Memory with a new id and created/updated times of `now` (default: the current time)."""
    at = require_aware(now, "now") if now is not None else datetime.now(UTC)
    return Memory(
        memory_id=new_memory_id(),
        user_id=user_id,
        kind=kind,
        category=category,
        summary=summary,
        importance=importance,
        key=key,
        pinned=pinned,
        source_message_ids=_unique(source_message_ids),
        created_at=at,
        updated_at=at,
        date_iso=date_iso,
        week=week,
        year=year,
        metadata=dict(metadata or {}),
    )


def vector_metadata(memory: Memory) -> dict[str, Any]:
    """The filterable metadata stored with a memory's vector (no nulls)."""
    meta: dict[str, Any] = {
        "kind": memory.kind.value,
        "category": memory.category,
        "pinned": memory.pinned,
    }
    if memory.date_iso is not None:
        meta["date_iso"] = memory.date_iso.isoformat()
    if memory.week is not None:
        meta["week"] = memory.week
    if memory.year is not None:
        meta["year"] = memory.year
    return meta


def _unique(ids: Iterable[str]) -> builtins.list[str]:
    return list(dict.fromkeys(i for i in ids if i))


def _memory(row: Mapping[str, Any]) -> Memory:
    return Memory(
        memory_id=row["memory_id"],
        user_id=row["user_id"],
        kind=MemoryKind(row["kind"]),
        category=row["category"],
        summary=row["summary"],
        # `real` is float4: 0.7 comes back as 0.699999988; six places restore what was stored.
        importance=round(float(row["importance"]), 6),
        key=row["key"],
        pinned=row["pinned"],
        source_message_ids=list(row["source_message_ids"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        last_accessed=row["last_accessed"],
        last_verified_at=row["last_verified_at"],
        date_iso=row["date_iso"],
        week=row["week"],
        year=row["year"],
        metadata=dict(row["metadata"] or {}),
    )


def _kind(kind: MemoryKind | None) -> str | None:
    return kind.value if kind is not None else None


def _duplicate_key(memory_key: str | None) -> DuplicateMemoryKeyError:
    return DuplicateMemoryKeyError(f"another memory of this user has the key {memory_key!r}")


class MemoryStore:
    """Memories of each user: rows in Postgres, embeddings in `vectors`."""

    def __init__(self, pool: Pool, vectors: VectorStore) -> None:
        self.pool = pool
        self.vectors = vectors

    async def add(self, memory: Memory, embedding: Sequence[float]) -> Memory:
        """Store a memory and its vector; a retry with the same memory_id returns the stored one.

        Raises `DuplicateMemoryKeyError` when the user has another memory with its key, and
        `UnknownUserError` for an unknown user.
        """
        require_aware(memory.created_at, "created_at")
        require_aware(memory.updated_at, "updated_at")
        try:
            async with self.pool.connection() as conn, user_must_exist(memory.user_id):
                cur = await conn.execute(
                    "INSERT INTO memories (memory_id, user_id, kind, category, summary,"
                    " importance, key, pinned, source_message_ids, created_at, updated_at,"
                    " last_accessed, last_verified_at, date_iso, week, year, metadata)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (memory_id) DO NOTHING RETURNING *",
                    (
                        memory.memory_id,
                        memory.user_id,
                        memory.kind.value,
                        memory.category,
                        memory.summary,
                        memory.importance,
                        memory.key,
                        memory.pinned,
                        _unique(memory.source_message_ids),
                        memory.created_at,
                        memory.updated_at,
                        memory.last_accessed,
                        memory.last_verified_at,
                        memory.date_iso,
                        memory.week,
                        memory.year,
                        Jsonb(memory.metadata),
                    ),
                )
                row = await cur.fetchone()
        except errors.UniqueViolation as exc:
            raise _duplicate_key(memory.key) from exc
        if row is None:  # a retry: the row exists; make sure its vector does too
            existing = await self.get(memory.user_id, memory.memory_id)
            if existing is None:
                raise ValueError(f"memory_id {memory.memory_id!r} belongs to another user")
            await self._write_vector(existing, embedding)
            return existing
        stored = _memory(row)
        try:
            await self._write_vector(stored, embedding)
        except Exception:
            async with self.pool.connection() as conn:  # no row without its vector
                await conn.execute(
                    "DELETE FROM memories WHERE user_id = %s AND memory_id = %s",
                    (stored.user_id, stored.memory_id),
                )
            raise
        return stored

    async def _write_vector(self, memory: Memory, embedding: Sequence[float]) -> None:
        await self.vectors.upsert(
            memory.user_id, [(memory.memory_id, embedding, vector_metadata(memory))]
        )

    async def get(self, user_id: str, memory_id: str) -> Memory | None:
        """One memory of this user, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND memory_id = %s",
                (user_id, memory_id),
            )
            row = await cur.fetchone()
        return _memory(row) if row else None

    async def update(
        self,
        user_id: str,
        memory_id: str,
        *,
        summary: str | None = None,
        embedding: Sequence[float] | None = None,
        importance: float | None = None,
        key: str | None | _Unset = UNSET,
        source_message_ids: Iterable[str] | None = None,
        last_verified_at: datetime | None = None,
    ) -> Memory | None:
        """Change a memory in place (None: unchanged; `key=None` clears it); None if unknown.

        `source_message_ids` are appended (deduplicated, order kept). A new `summary` needs its
        `embedding`; a given embedding re-writes the vector. `updated_at` becomes now.
        Raises `DuplicateMemoryKeyError` when another memory of the user has the new key.
        """
        if summary is not None and embedding is None:
            raise ValueError("a new summary needs its new embedding (re-embed on every change)")
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise ValueError(f"importance must be between 0 and 1, got {importance}")
        if last_verified_at is not None:
            require_aware(last_verified_at, "last_verified_at")
        try:
            async with self.pool.connection() as conn, conn.transaction():
                cur = await conn.execute(
                    "SELECT * FROM memories WHERE user_id = %s AND memory_id = %s FOR UPDATE",
                    (user_id, memory_id),
                )
                current = await cur.fetchone()
                if current is None:
                    return None
                sources = list(current["source_message_ids"])
                if source_message_ids is not None:
                    sources = _unique([*sources, *source_message_ids])
                cur = await conn.execute(
                    "UPDATE memories SET summary = %s, importance = %s, key = %s,"
                    " source_message_ids = %s, last_verified_at = %s, updated_at = now()"
                    " WHERE user_id = %s AND memory_id = %s RETURNING *",
                    (
                        current["summary"] if summary is None else summary,
                        current["importance"] if importance is None else importance,
                        current["key"] if isinstance(key, _Unset) else key,
                        sources,
                        current["last_verified_at"]
                        if last_verified_at is None
                        else last_verified_at,
                        user_id,
                        memory_id,
                    ),
                )
                row = await cur.fetchone()
        except errors.UniqueViolation as exc:
            raise _duplicate_key(None if isinstance(key, _Unset) else key) from exc
        assert row is not None
        updated = _memory(row)
        if embedding is not None:
            await self._write_vector(updated, embedding)
        return updated

    async def delete(self, user_id: str, memory_id: str) -> bool:
        """Delete the memory's row and its vector; False when the user has no such memory."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "DELETE FROM memories WHERE user_id = %s AND memory_id = %s",
                (user_id, memory_id),
            )
            existed = cur.rowcount > 0
        await self.vectors.delete(user_id, [memory_id])
        return existed

    async def list(
        self, user_id: str, *, kind: MemoryKind | None = None, limit: int = 50, offset: int = 0
    ) -> builtins.list[Memory]:
        """The user's memories, newest first, optionally of one kind."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND (%s::text IS NULL OR kind = %s)"
                " ORDER BY created_at DESC, memory_id LIMIT %s OFFSET %s",
                (user_id, _kind(kind), _kind(kind), limit, offset),
            )
            rows = await cur.fetchall()
        return [_memory(r) for r in rows]

    async def by_key(self, user_id: str, key: str) -> Memory | None:
        """The user's memory with this deterministic key, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND key = %s", (user_id, key)
            )
            row = await cur.fetchone()
        return _memory(row) if row else None

    async def search(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        kind: MemoryKind | None,
        top_k: int,
        filter: Filter | None = None,
    ) -> builtins.list[tuple[Memory, float]]:
        """The user's memories nearest to `embedding`, best first, with their cosine similarity."""
        query_filter: Filter = dict(filter or {})
        if kind is not None:
            query_filter["kind"] = kind.value
        hits = await self.vectors.query(
            user_id, embedding, top_k=top_k, filter=query_filter or None
        )
        if not hits:
            return []
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND memory_id = ANY(%s)",
                (user_id, [h.id for h in hits]),
            )
            rows = {r["memory_id"]: _memory(r) for r in await cur.fetchall()}
        return [(rows[h.id], h.score) for h in hits if h.id in rows]

    async def recent(
        self,
        user_id: str,
        *,
        kind: MemoryKind | None,
        since: datetime | None = None,
        limit: int = 10,
    ) -> builtins.list[Memory]:
        """The user's memories created at or after `since`, newest first."""
        if since is not None:
            require_aware(since, "since")
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s"
                " AND (%s::text IS NULL OR kind = %s)"
                " AND (%s::timestamptz IS NULL OR created_at >= %s)"
                " ORDER BY created_at DESC, memory_id LIMIT %s",
                (user_id, _kind(kind), _kind(kind), since, since, limit),
            )
            rows = await cur.fetchall()
        return [_memory(r) for r in rows]

    async def touch(self, user_id: str, ids: Iterable[str]) -> int:
        """Set `last_accessed` to now on these memories of the user; returns how many."""
        wanted = _unique(ids)
        if not wanted:
            return 0
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE memories SET last_accessed = now()"
                " WHERE user_id = %s AND memory_id = ANY(%s)",
                (user_id, wanted),
            )
            return cur.rowcount

    async def set_pinned(self, user_id: str, memory_id: str, pinned: bool) -> Memory | None:
        """Pin or unpin a memory (row and vector metadata); None if unknown."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE memories SET pinned = %s, updated_at = now()"
                " WHERE user_id = %s AND memory_id = %s RETURNING *",
                (pinned, user_id, memory_id),
            )
            row = await cur.fetchone()
        if row is None:
            return None
        if isinstance(self.vectors, MetadataUpdatable):
            await self.vectors.update_metadata(user_id, memory_id, {"pinned": pinned})
        return _memory(row)

    async def delete_user(self, user_id: str) -> int:
        """Delete every memory of the user, rows and vectors; returns how many rows."""
        async with self.pool.connection() as conn:
            cur = await conn.execute("DELETE FROM memories WHERE user_id = %s", (user_id,))
            count = cur.rowcount
        await self.vectors.delete_user(user_id)
        return count

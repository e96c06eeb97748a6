"""Semantic and episodic memories (seeds 001, 003): rows in `memories`, vectors in a VectorStore.

A memory is never listed without a vector that finds it:

- pgvector (`TransactionalVectorStore`): the row and its vector are written, re-embedded and
  deleted in one transaction, so they commit or roll back together (a failure or a cancelled
  task in between leaves neither).
- Pinecone (any other store): the row is written with its embedding in `vector_pending`, in the
  same transaction; the upsert follows the commit and clears the mark. An upsert that fails
  leaves the mark, and the vector is written again before the user's next search (or by
  `retry_pending`). Deletes remove the row first; a vector that outlives its row is skipped by
  searches, which also delete it.

Every change of a summary comes with its new embedding.
"""

from __future__ import annotations

import builtins
import logging
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from psycopg import errors
from psycopg.types.json import Jsonb

from memoir.db import Connection, Pool
from memoir.memory.models import Memory, MemoryKind
from memoir.stores._common import require_aware, user_must_exist
from memoir.vectors.base import Filter, TransactionalVectorStore, VectorStore

_log = logging.getLogger(__name__)

MEMORY_ID_PREFIX = "mem_"
PENDING_BATCH = 100  # marked rows written per retry, oldest first
VectorItem = tuple[str, list[float], dict[str, Any]]


class _Unset(Enum):
    UNSET = "unset"


UNSET = _Unset.UNSET  # "leave as it is" for arguments where None has a meaning of its own


class DuplicateMemoryKeyError(ValueError):
    """Another memory of this user already has this deterministic key."""


class MemoryReplacedError(RuntimeError):
    """The memory to replace was replaced (or deleted) by another change meanwhile: merge again
    with what is there now (a retry does)."""


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


def _finite(embedding: Sequence[float]) -> builtins.list[float]:
    """The embedding as floats; ValueError unless every value is a finite number."""
    values = [float(x) for x in embedding]
    if not all(math.isfinite(x) for x in values):
        raise ValueError("embedding values must be finite numbers")
    return values


def _item(memory: Memory, vector: builtins.list[float]) -> VectorItem:
    """The (id, vector, metadata) a vector store holds for this memory."""
    return (memory.memory_id, vector, vector_metadata(memory))


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

    def _in_database(self) -> TransactionalVectorStore | None:
        """The vector store when its writes can join our transactions (pgvector), else None."""
        return self.vectors if isinstance(self.vectors, TransactionalVectorStore) else None

    async def add(self, memory: Memory, embedding: Sequence[float]) -> Memory:
        """Store a memory and its vector; a retry with the same memory_id returns the stored one.

        Raises `DuplicateMemoryKeyError` when the user has another memory with its key, and
        `UnknownUserError` for an unknown user.
        """
        require_aware(memory.created_at, "created_at")
        require_aware(memory.updated_at, "updated_at")
        vector = _finite(embedding)
        try:
            async with (
                self.pool.connection() as conn,
                conn.transaction(),
                user_must_exist(memory.user_id),
            ):
                stored = await self._insert_or_existing(conn, memory)
                await self._stage_vector(conn, stored, vector)
        except errors.UniqueViolation as exc:
            raise _duplicate_key(memory.key) from exc
        await self._flush_vector(stored, vector)
        return stored

    async def replace(self, old: Memory, new: Memory, embedding: Sequence[float]) -> Memory:
        """Put `new` (with its vector) in place of `old` in one step: a merge that recreates.

        Nothing changes when it fails; `new` may take `old`'s key. A retry returns the stored
        `new`. Raises `DuplicateMemoryKeyError` when another memory of the user has new's key,
        and `MemoryReplacedError` when `old` is gone and `new` is not stored: two turns merging
        into one memory at once would otherwise each keep a copy of it.
        """
        if old.user_id != new.user_id:
            raise ValueError("a memory can only replace a memory of the same user")
        require_aware(new.created_at, "created_at")
        require_aware(new.updated_at, "updated_at")
        vector, in_db = _finite(embedding), self._in_database()
        try:
            async with (
                self.pool.connection() as conn,
                conn.transaction(),
                user_must_exist(new.user_id),
            ):
                if in_db is not None:
                    await in_db.delete_in(conn, old.user_id, [old.memory_id])
                deleted = await conn.execute(
                    "DELETE FROM memories WHERE user_id = %s AND memory_id = %s",
                    (old.user_id, old.memory_id),
                )
                if deleted.rowcount == 0 and not await self._stored(conn, new):
                    raise MemoryReplacedError(f"memory {old.memory_id} was replaced meanwhile")
                stored = await self._insert_or_existing(conn, new)
                await self._stage_vector(conn, stored, vector)
        except errors.UniqueViolation as exc:
            raise _duplicate_key(new.key) from exc
        await self._flush_vector(stored, vector)
        if in_db is None:
            await self._forget_vectors(old.user_id, [old.memory_id])
        return stored

    async def _stored(self, conn: Connection, memory: Memory) -> bool:
        cur = await conn.execute(
            "SELECT 1 FROM memories WHERE user_id = %s AND memory_id = %s",
            (memory.user_id, memory.memory_id),
        )
        return await cur.fetchone() is not None

    async def _insert_or_existing(self, conn: Connection, memory: Memory) -> Memory:
        """Insert the row; on a retry (the id exists) the stored row, locked for this change."""
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
        if row is None:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND memory_id = %s FOR UPDATE",
                (memory.user_id, memory.memory_id),
            )
            row = await cur.fetchone()
        if row is None:
            raise ValueError(f"memory_id {memory.memory_id!r} belongs to another user")
        return _memory(row)

    async def _stage_vector(
        self, conn: Connection, memory: Memory, vector: builtins.list[float]
    ) -> None:
        """In the row's transaction: write the vector (pgvector), or mark the row pending."""
        in_db = self._in_database()
        if in_db is not None:
            await in_db.upsert_in(conn, memory.user_id, [_item(memory, vector)])
            return
        await conn.execute(
            "UPDATE memories SET vector_pending = %s::real[] WHERE user_id = %s AND memory_id = %s",
            (vector, memory.user_id, memory.memory_id),
        )

    async def _flush_vector(self, memory: Memory, vector: builtins.list[float]) -> None:
        """After the commit, for an external store: upsert the vector and clear the mark.

        A failure is logged and leaves the mark: the vector is retried before the next search.
        """
        if self._in_database() is not None:
            return
        try:
            await self.vectors.upsert(memory.user_id, [_item(memory, vector)])
        except Exception:
            _log.warning(
                "vector of memory %s not written yet; it stays vector_pending and is retried",
                memory.memory_id,
                exc_info=True,
            )
            return
        await self._clear_pending(memory.user_id, memory.memory_id, vector)

    async def _clear_pending(
        self, user_id: str, memory_id: str, vector: builtins.list[float]
    ) -> None:
        """Clear the mark if it still holds `vector` (a newer embedding keeps its own mark)."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE memories SET vector_pending = NULL WHERE user_id = %s"
                " AND memory_id = %s AND vector_pending = %s::real[]",
                (user_id, memory_id, vector),
            )

    async def _forget_vectors(self, user_id: str, ids: builtins.list[str]) -> None:
        """Delete vectors whose rows are gone from an external store; a failure is logged (a
        search skips such a vector, and deletes it when it meets it)."""
        try:
            await self.vectors.delete(user_id, ids)
        except Exception:
            _log.warning("vectors %s outlive their memories for now", ids, exc_info=True)

    async def pending_ids(self, user_id: str) -> builtins.list[str]:
        """Ids of the user's memories whose vector is not written yet (external stores only)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT memory_id FROM memories WHERE user_id = %s"
                " AND vector_pending IS NOT NULL ORDER BY updated_at, memory_id",
                (user_id,),
            )
            return [row["memory_id"] for row in await cur.fetchall()]

    async def retry_pending(self, user_id: str) -> int:
        """Write the user's pending vectors (oldest first, up to `PENDING_BATCH`); how many now
        written. A failure is logged and leaves them pending."""
        if self._in_database() is not None:
            return 0
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM memories WHERE user_id = %s AND vector_pending IS NOT NULL"
                " ORDER BY updated_at, memory_id LIMIT %s",
                (user_id, PENDING_BATCH),
            )
            rows = await cur.fetchall()
        items = [_item(_memory(r), [float(x) for x in r["vector_pending"]]) for r in rows]
        if not items:
            return 0
        try:
            await self.vectors.upsert(user_id, items)
        except Exception:
            _log.warning("%d pending vectors of user %s still not written", len(items), user_id)
            return 0
        for memory_id, vector, _meta in items:
            await self._clear_pending(user_id, memory_id, vector)
        return len(items)

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
        `embedding`; a given embedding re-writes the vector, with the row (see the module).
        `updated_at` becomes now. Raises `DuplicateMemoryKeyError` when another memory of the
        user has the new key.
        """
        if summary is not None and embedding is None:
            raise ValueError("a new summary needs its new embedding (re-embed on every change)")
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise ValueError(f"importance must be between 0 and 1, got {importance}")
        if last_verified_at is not None:
            require_aware(last_verified_at, "last_verified_at")
        vector = _finite(embedding) if embedding is not None else None
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
                assert row is not None
                updated = _memory(row)
                if vector is not None:
                    await self._stage_vector(conn, updated, vector)
        except errors.UniqueViolation as exc:
            raise _duplicate_key(None if isinstance(key, _Unset) else key) from exc
        if vector is not None:
            await self._flush_vector(updated, vector)
        return updated

    async def delete(self, user_id: str, memory_id: str) -> bool:
        """Delete the memory's row and its vector; False when the user has no such memory."""
        in_db = self._in_database()
        async with self.pool.connection() as conn, conn.transaction():
            if in_db is not None:
                await in_db.delete_in(conn, user_id, [memory_id])
            cur = await conn.execute(
                "DELETE FROM memories WHERE user_id = %s AND memory_id = %s",
                (user_id, memory_id),
            )
            existed = cur.rowcount > 0
        if in_db is None:
            await self._forget_vectors(user_id, [memory_id])
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
        """The user's memories nearest to `embedding`, best first, with their cosine similarity.

        With an external store, pending vectors are written first and vectors without a row
        are deleted.
        """
        external = self._in_database() is None
        if external:
            await self.retry_pending(user_id)
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
        orphans = [h.id for h in hits if h.id not in rows]
        if external and orphans:
            await self._forget_vectors(user_id, orphans)
        return [(rows[h.id], h.score) for h in hits if h.id in rows]

    async def lexical(
        self,
        user_id: str,
        text: str,
        *,
        kind: MemoryKind | None,
        top_k: int,
        episode_days: tuple[date, date] | None = None,
    ) -> builtins.list[tuple[Memory, float]]:
        """The user's memories sharing words with `text`, by full-text rank, best first.

        An OR of the query's lexemes (as message records' lexical search), ranked by
        `ts_rank_cd`; `episode_days` (first, last) keeps only episodes dated in that span
        (facts are left out then, having no date bucket).
        """
        params: list[Any] = [text, user_id, _kind(kind), _kind(kind)]
        days = ""
        if episode_days is not None:
            days = " AND kind = 'episodic' AND date_iso BETWEEN %s AND %s"
            params.extend(episode_days)
        params.append(top_k)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "WITH q AS (SELECT nullif(replace(plainto_tsquery('english', %s)::text, '&', '|'),"
                " '')::tsquery AS query)"
                " SELECT m.*, ts_rank_cd(m.tsv, q.query) AS rank FROM memories m, q"
                " WHERE m.user_id = %s AND m.tsv @@ q.query"
                f" AND (%s::text IS NULL OR m.kind = %s){days}"
                " ORDER BY rank DESC, m.updated_at DESC, m.summary, m.memory_id LIMIT %s",
                params,
            )
            rows = await cur.fetchall()
        return [(_memory(r), float(r["rank"])) for r in rows]

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
        """Pin or unpin a memory, row and vector metadata together; None if unknown."""
        in_db = self._in_database()
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE memories SET pinned = %s, updated_at = now()"
                " WHERE user_id = %s AND memory_id = %s RETURNING *",
                (pinned, user_id, memory_id),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            if in_db is not None:
                await in_db.update_metadata_in(conn, user_id, memory_id, {"pinned": pinned})
            elif isinstance(self.vectors, MetadataUpdatable):  # before the commit: all or none
                await self.vectors.update_metadata(user_id, memory_id, {"pinned": pinned})
        return _memory(row)

    async def delete_user(self, user_id: str) -> int:
        """Delete every memory of the user, rows and vectors; returns how many rows."""
        in_db = self._in_database()
        async with self.pool.connection() as conn, conn.transaction():
            if in_db is not None:
                await in_db.delete_user_in(conn, user_id)
            cur = await conn.execute("DELETE FROM memories WHERE user_id = %s", (user_id,))
            count = cur.rowcount
        if in_db is None:
            await self.vectors.delete_user(user_id)
        return count

"""A memory is never listed without a vector that finds it, even when the vector write fails.

pgvector: the row and its vector commit or roll back together (a failure injected after the
vector statement ran, or a cancelled task, leaves neither). Pinecone (the local stand-in): the
row is kept, marked `vector_pending`, and a retry (explicit, or before the next search) writes it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from memoir.db import Connection, Pool
from memoir.memory.models import Memory, MemoryKind
from memoir.models import UserProfile
from memoir.stores import MemoryStore
from memoir.stores.memories import new_memory
from memoir.vectors.pgvector import PgVectorStore
from memoir.vectors.pinecone import PineconeVectorStore
from tests.vectors.pinecone_standin import StandIn, serve_standin

DIM = 384
Items = Sequence[tuple[str, Sequence[float], dict[str, Any]]]


class VectorStoreDown(RuntimeError):
    """The injected failure."""


def toward(angle_deg: float) -> list[float]:
    """A unit vector at `angle_deg` from axis 0, toward axis 1."""
    v = [0.0] * DIM
    v[0], v[1] = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    return v


LISBON, PORTO = toward(0), toward(90)


class FailingPgVectors(PgVectorStore):
    """pgvector whose writes fail on demand, after their statements ran (or hang instead)."""

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self.failing: set[str] = set()
        self.hang = False

    async def upsert_in(self, conn: Connection, user_id: str, items: Items) -> None:
        await super().upsert_in(conn, user_id, items)
        if self.hang:
            await asyncio.Event().wait()
        if "upsert" in self.failing:
            raise VectorStoreDown("upsert")

    async def delete_in(self, conn: Connection, user_id: str, ids: Sequence[str]) -> None:
        await super().delete_in(conn, user_id, ids)
        if "delete" in self.failing:
            raise VectorStoreDown("delete")


class FlakyPinecone(PineconeVectorStore):
    """The Pinecone store over the stand-in; its upserts and deletes fail while `down`."""

    down = False

    async def upsert(self, user_id: str, items: Items) -> None:
        if self.down:
            raise VectorStoreDown("upsert")
        await super().upsert(user_id, items)

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        if self.down:
            raise VectorStoreDown("delete")
        await super().delete(user_id, ids)


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """A Pinecone stand-in for this module."""
    with serve_standin(dimension=DIM) as running:
        yield running


@pytest.fixture
def pg_vectors(pool: Pool) -> FailingPgVectors:
    """pgvector with failure injection."""
    return FailingPgVectors(pool)


@pytest.fixture
def pinecone(standin: StandIn) -> Iterator[FlakyPinecone]:
    """Pinecone (stand-in) with failure injection."""
    store = FlakyPinecone(api_key=standin.api_key, host=standin.url)
    try:
        yield store
    finally:
        store.close()


def _lisbon(user: UserProfile, key: str | None = "profile:city") -> Memory:
    return new_memory(
        user_id=user.user_id,
        kind=MemoryKind.SEMANTIC,
        category="profile",
        summary="User lives in Lisbon.",
        importance=0.8,
        key=key,
        source_message_ids=["msg-1"],
    )


async def _vector_rows(pool: Pool, memory_id: str) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) AS n FROM memory_vectors WHERE memory_id = %s", (memory_id,)
        )
        row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


async def _found(memories: MemoryStore, user: UserProfile, vector: list[float]) -> list[str]:
    hits = await memories.search(user.user_id, vector, kind=None, top_k=5)
    return [m.summary for m, score in hits if score > 0.99]


# pgvector: one transaction


async def test_pgvector_add_whose_vector_write_fails_leaves_no_row(
    pool: Pool, pg_vectors: FailingPgVectors, user: UserProfile
) -> None:
    memories, memory = MemoryStore(pool, pg_vectors), _lisbon(user)
    pg_vectors.failing.add("upsert")
    with pytest.raises(VectorStoreDown):
        await memories.add(memory, LISBON)
    assert await memories.list(user.user_id) == []
    assert await _vector_rows(pool, memory.memory_id) == 0


async def test_pgvector_add_cancelled_after_the_vector_write_leaves_no_row(
    pool: Pool, pg_vectors: FailingPgVectors, user: UserProfile
) -> None:
    memories, memory = MemoryStore(pool, pg_vectors), _lisbon(user)
    pg_vectors.hang = True
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(memories.add(memory, LISBON), timeout=1.0)
    assert await memories.list(user.user_id) == []
    assert await _vector_rows(pool, memory.memory_id) == 0


async def test_pgvector_update_whose_vector_write_fails_keeps_the_old_summary(
    pool: Pool, pg_vectors: FailingPgVectors, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pg_vectors)
    memory = await memories.add(_lisbon(user), LISBON)
    pg_vectors.failing.add("upsert")
    with pytest.raises(VectorStoreDown):
        await memories.update(
            user.user_id, memory.memory_id, summary="User lives in Porto.", embedding=PORTO
        )
    assert await _found(memories, user, LISBON) == ["User lives in Lisbon."]


async def test_pgvector_replace_whose_vector_write_fails_keeps_the_old_memory(
    pool: Pool, pg_vectors: FailingPgVectors, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pg_vectors)
    old = await memories.add(_lisbon(user), LISBON)
    porto = new_memory(
        user_id=user.user_id,
        kind=MemoryKind.SEMANTIC,
        category="profile",
        summary="User lives in Porto.",
        importance=0.8,
        key="profile:city",
    )
    pg_vectors.failing.add("upsert")
    with pytest.raises(VectorStoreDown):
        await memories.replace(old, porto, PORTO)
    assert await memories.list(user.user_id) == [old]
    assert await _found(memories, user, LISBON) == ["User lives in Lisbon."]


async def test_pgvector_delete_whose_vector_delete_fails_keeps_the_memory_searchable(
    pool: Pool, pg_vectors: FailingPgVectors, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pg_vectors)
    memory = await memories.add(_lisbon(user), LISBON)
    pg_vectors.failing.add("delete")
    with pytest.raises(VectorStoreDown):
        await memories.delete(user.user_id, memory.memory_id)
    assert await _found(memories, user, LISBON) == ["User lives in Lisbon."]


# Pinecone: marked, then retried


async def test_pinecone_add_whose_upsert_fails_keeps_the_row_marked_pending(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    pinecone.down = True
    stored = await memories.add(_lisbon(user), LISBON)
    assert await memories.list(user.user_id) == [stored]
    assert await memories.pending_ids(user.user_id) == [stored.memory_id]


async def test_pinecone_add_that_succeeds_leaves_no_mark(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    await memories.add(_lisbon(user), LISBON)
    assert await memories.pending_ids(user.user_id) == []


async def test_pinecone_retry_pending_makes_a_failed_memory_searchable(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    pinecone.down = True
    stored = await memories.add(_lisbon(user), LISBON)
    pinecone.down = False
    assert await memories.retry_pending(user.user_id) == 1
    assert await memories.pending_ids(user.user_id) == []
    [hit] = await pinecone.query(user.user_id, LISBON, top_k=5)
    assert hit.id == stored.memory_id
    assert hit.metadata == {"kind": "semantic", "category": "profile", "pinned": False}


async def test_pinecone_retry_while_still_down_keeps_the_mark(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    pinecone.down = True
    stored = await memories.add(_lisbon(user), LISBON)
    assert await memories.retry_pending(user.user_id) == 0
    assert await memories.pending_ids(user.user_id) == [stored.memory_id]


async def test_pinecone_search_writes_pending_vectors_first(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    pinecone.down = True
    await memories.add(_lisbon(user), LISBON)
    pinecone.down = False
    assert await _found(memories, user, LISBON) == ["User lives in Lisbon."]


async def test_pinecone_failed_re_embed_is_found_by_its_new_vector_after_a_retry(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    memory = await memories.add(_lisbon(user), LISBON)
    pinecone.down = True
    await memories.update(
        user.user_id, memory.memory_id, summary="User lives in Porto.", embedding=PORTO
    )
    pinecone.down = False
    assert await _found(memories, user, PORTO) == ["User lives in Porto."]


async def test_pinecone_search_deletes_a_vector_whose_row_is_gone(
    pool: Pool, pinecone: FlakyPinecone, user: UserProfile
) -> None:
    memories = MemoryStore(pool, pinecone)
    memory = await memories.add(_lisbon(user), LISBON)
    pinecone.down = True
    assert await memories.delete(user.user_id, memory.memory_id) is True
    pinecone.down = False
    assert [h.id for h in await pinecone.query(user.user_id, LISBON, top_k=5)] == [memory.memory_id]
    assert await memories.search(user.user_id, LISBON, kind=None, top_k=5) == []
    assert await pinecone.query(user.user_id, LISBON, top_k=5) == []

"""The VectorStore contract, run on both backends: pgvector and Pinecone (a local stand-in).

`vector_store` is parametrised over both backends through the `backend` fixture; the test
classes in test_pgvector.py and test_pinecone.py inherit `VectorStoreContract` and pin
`backend` to their own.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import pytest

from memoir.db import Pool
from memoir.memory.models import VectorHit
from memoir.stores import Stores
from memoir.vectors.base import VectorStore
from memoir.vectors.pgvector import PgVectorStore
from memoir.vectors.pinecone import PineconeVectorStore
from tests.vectors.pinecone_standin import StandIn, serve_standin

DIM = 384
Item = tuple[str, list[float], dict[str, Any]]
Put = Callable[[str, Sequence[Item]], Awaitable[None]]


def unit(i: int) -> list[float]:
    """The unit vector along axis `i`."""
    v = [0.0] * DIM
    v[i] = 1.0
    return v


def toward(i: int, j: int, angle_deg: float) -> list[float]:
    """A unit vector `angle_deg` away from axis i, toward axis j: cosine to unit(i) = cos(angle)."""
    v = [0.0] * DIM
    v[i] = math.cos(math.radians(angle_deg))
    v[j] = math.sin(math.radians(angle_deg))
    return v


@pytest.fixture(scope="session")
def pinecone_standin() -> Iterator[StandIn]:
    """One Pinecone stand-in for the session (tests isolate by user namespace)."""
    with serve_standin(dimension=DIM) as standin:
        yield standin


@pytest.fixture(params=["pgvector", "pinecone"])
def backend(request: pytest.FixtureRequest) -> str:
    """The vector backend under test."""
    return str(request.param)


@pytest.fixture
def vector_store(backend: str, pool: Pool, request: pytest.FixtureRequest) -> Iterator[VectorStore]:
    """A VectorStore of `backend`: PgVectorStore over the test pool, or Pinecone's stand-in."""
    if backend == "pgvector":
        yield PgVectorStore(pool)
        return
    standin: StandIn = request.getfixturevalue("pinecone_standin")
    store = PineconeVectorStore(api_key=standin.api_key, host=standin.url)
    try:
        yield store
    finally:
        store.close()


async def _new_user(stores: Stores) -> str:
    profile, _token = await stores.users.create_user("Vector User")
    return profile.user_id


@pytest.fixture
async def user(stores: Stores) -> str:
    """A new user's id."""
    return await _new_user(stores)


@pytest.fixture
async def other_user(stores: Stores) -> str:
    """A second new user's id."""
    return await _new_user(stores)


@pytest.fixture
def put(pool: Pool, vector_store: VectorStore) -> Put:
    """Upsert items for a user, first inserting the `memories` rows pgvector's vectors need.

    Memory ids are global in Postgres, so each item's name becomes `key(name, user_id)`.
    """

    async def _put(user_id: str, items: Sequence[Item]) -> None:
        items = [(key(name, user_id), vector, meta) for name, vector, meta in items]
        async with pool.connection() as conn:
            for memory_id, _vector, meta in items:
                await conn.execute(
                    "INSERT INTO memories (memory_id, user_id, kind, category, summary,"
                    " importance) VALUES (%s, %s, %s, %s, %s, 0.5)"
                    " ON CONFLICT (memory_id) DO NOTHING",
                    (
                        memory_id,
                        user_id,
                        meta.get("kind", "semantic"),
                        meta.get("category", "topic"),
                        f"memory {memory_id}",
                    ),
                )
        await vector_store.upsert(user_id, items)

    return _put


def key(name: str, user_id: str) -> str:
    """The memory id `put` stores the item `name` of a user under."""
    return f"{name}.{user_id}"


def ids(hits: Sequence[VectorHit]) -> list[str]:
    """The item names of hits, in order (ids without their user suffix)."""
    return [h.id.split(".", 1)[0] for h in hits]


def meta(kind: str = "semantic", category: str = "topic", **more: Any) -> dict[str, Any]:
    """Vector metadata as MemoryStore writes it."""
    return {"kind": kind, "category": category, "pinned": False, **more}


class VectorStoreContract:
    """Behaviour every VectorStore backend must show (subclassed per backend)."""

    @pytest.fixture
    async def seeded(self, user: str, put: Put) -> str:
        """Four memories at known angles from unit(0), with date buckets and categories."""
        await put(
            user,
            [
                (
                    "m_far",
                    toward(0, 1, 80),
                    meta("episodic", "trip", week=2, year=2025, date_iso="2025-01-08"),
                ),
                ("m_near", toward(0, 1, 10), meta("semantic", "pet", pinned=True)),
                (
                    "m_mid",
                    toward(0, 1, 40),
                    meta("episodic", "work", week=3, year=2025, date_iso="2025-01-15"),
                ),
                ("m_same", unit(0), meta("semantic", "profile")),
            ],
        )
        return user

    async def test_query_returns_nearest_first_with_cosine_scores(
        self, vector_store: VectorStore, seeded: str
    ) -> None:
        hits = await vector_store.query(seeded, unit(0), top_k=10)
        assert ids(hits) == ["m_same", "m_near", "m_mid", "m_far"]
        expected = [1.0, math.cos(math.radians(10)), math.cos(math.radians(40))]
        expected.append(math.cos(math.radians(80)))
        assert [h.score for h in hits] == pytest.approx(expected, abs=1e-5)

    async def test_query_returns_at_most_top_k(
        self, vector_store: VectorStore, seeded: str
    ) -> None:
        assert ids(await vector_store.query(seeded, unit(0), top_k=2)) == ["m_same", "m_near"]

    async def test_hits_carry_their_metadata(self, vector_store: VectorStore, seeded: str) -> None:
        found = await vector_store.query(seeded, unit(0), top_k=10)
        hits = dict(zip(ids(found), found, strict=True))
        assert hits["m_mid"].metadata == {
            "kind": "episodic",
            "category": "work",
            "pinned": False,
            "week": 3,
            "year": 2025,
            "date_iso": "2025-01-15",
        }
        assert hits["m_near"].metadata["pinned"] is True

    async def test_upsert_replaces_the_vector_and_its_metadata(
        self, vector_store: VectorStore, seeded: str, put: Put
    ) -> None:
        await put(seeded, [("m_far", unit(0), meta("semantic", "pet"))])
        hits = await vector_store.query(seeded, unit(0), top_k=10)
        assert len(hits) == 4
        far = hits[ids(hits).index("m_far")]
        assert far.score == pytest.approx(1.0, abs=1e-5)
        assert far.metadata["category"] == "pet"
        assert "week" not in far.metadata

    async def test_filter_by_equality(self, vector_store: VectorStore, seeded: str) -> None:
        hits = await vector_store.query(seeded, unit(0), top_k=10, filter={"kind": "episodic"})
        assert ids(hits) == ["m_mid", "m_far"]
        hits = await vector_store.query(
            seeded, unit(0), top_k=10, filter={"kind": {"$eq": "semantic"}, "category": "pet"}
        )
        assert ids(hits) == ["m_near"]

    async def test_filter_by_in(self, vector_store: VectorStore, seeded: str) -> None:
        hits = await vector_store.query(
            seeded, unit(0), top_k=10, filter={"category": {"$in": ["trip", "profile"]}}
        )
        assert ids(hits) == ["m_same", "m_far"]

    async def test_filter_by_number_range(self, vector_store: VectorStore, seeded: str) -> None:
        hits = await vector_store.query(
            seeded, unit(0), top_k=10, filter={"year": 2025, "week": {"$gte": 3, "$lte": 4}}
        )
        assert ids(hits) == ["m_mid"]

    async def test_filter_by_date_range_and_date_equality(
        self, vector_store: VectorStore, seeded: str
    ) -> None:
        in_range = await vector_store.query(
            seeded,
            unit(0),
            top_k=10,
            filter={"date_iso": {"$gte": "2025-01-01", "$lte": "2025-01-10"}},
        )
        assert ids(in_range) == ["m_far"]
        same_day = await vector_store.query(
            seeded, unit(0), top_k=10, filter={"date_iso": "2025-01-15"}
        )
        assert ids(same_day) == ["m_mid"]

    async def test_filter_by_pinned(self, vector_store: VectorStore, seeded: str) -> None:
        hits = await vector_store.query(seeded, unit(0), top_k=10, filter={"pinned": True})
        assert ids(hits) == ["m_near"]

    async def test_delete_removes_only_the_given_ids(
        self, vector_store: VectorStore, seeded: str
    ) -> None:
        names = ["m_same", "m_mid", "m_never_existed"]
        await vector_store.delete(seeded, [key(n, seeded) for n in names])
        assert ids(await vector_store.query(seeded, unit(0), top_k=10)) == ["m_near", "m_far"]

    async def test_delete_user_removes_every_vector_of_that_user_only(
        self, vector_store: VectorStore, seeded: str, other_user: str, put: Put
    ) -> None:
        await put(other_user, [("o_same", unit(0), meta())])
        await vector_store.delete_user(seeded)
        assert await vector_store.query(seeded, unit(0), top_k=10) == []
        assert ids(await vector_store.query(other_user, unit(0), top_k=10)) == ["o_same"]

    async def test_deleting_for_a_user_without_vectors_is_not_an_error(
        self, vector_store: VectorStore, user: str
    ) -> None:
        await vector_store.delete(user, ["m_none"])
        await vector_store.delete_user(user)
        assert await vector_store.query(user, unit(0), top_k=5) == []

    async def test_a_query_for_one_user_never_returns_another_users_memory(
        self, vector_store: VectorStore, seeded: str, other_user: str, put: Put
    ) -> None:
        await put(other_user, [("o_exact", unit(0), meta("semantic", "pet", pinned=True))])
        mine = await vector_store.query(seeded, unit(0), top_k=100)
        mine_pinned = await vector_store.query(seeded, unit(0), top_k=100, filter={"pinned": True})
        theirs = await vector_store.query(other_user, unit(0), top_k=100)
        assert "o_exact" not in ids(mine) and "o_exact" not in ids(mine_pinned)
        assert ids(theirs) == ["o_exact"]
        await vector_store.delete(seeded, [key("o_exact", other_user)])  # not theirs: untouched
        assert ids(await vector_store.query(other_user, unit(0), top_k=100)) == ["o_exact"]

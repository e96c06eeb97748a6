"""PgVectorStore: the shared contract, plus what is particular to `memory_vectors`."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memoir.db import Pool, open_pool
from memoir.memory.models import MemoryKind
from memoir.stores import Stores
from memoir.vectors.pgvector import (
    DEFAULT_DIM,
    DEFAULT_EF_SEARCH,
    EF_SEARCH_MAX,
    MissingMemoryError,
    PgVectorStore,
    filter_sql,
    nearest_rows,
    vector_literal,
)
from tests.vectors.conftest import Put, VectorStoreContract, ids, key, meta, unit


@pytest.fixture
def backend() -> str:
    """Every test here runs on pgvector."""
    return "pgvector"


class TestPgVectorContract(VectorStoreContract):
    """The VectorStore contract on pgvector."""


@pytest.fixture
def store(pool: Pool) -> PgVectorStore:
    """A PgVectorStore over the test pool."""
    return PgVectorStore(pool)


async def test_upsert_without_a_memory_row_is_refused(store: PgVectorStore, user: str) -> None:
    with pytest.raises(MissingMemoryError, match="add the memories row"):
        await store.upsert(user, [("mem_missing", unit(0), meta())])


async def test_upsert_onto_another_users_memory_is_refused(
    store: PgVectorStore, user: str, other_user: str, put: Put
) -> None:
    await put(user, [("m_owned", unit(0), meta())])
    with pytest.raises(MissingMemoryError):
        await store.upsert(other_user, [(key("m_owned", user), unit(1), meta())])
    hits = await store.query(user, unit(0), top_k=1)
    assert ids(hits) == ["m_owned"] and hits[0].score == pytest.approx(1.0)


async def test_metadata_left_out_of_an_upsert_comes_from_the_memory_row(
    store: PgVectorStore, user: str, pool: Pool
) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO memories (memory_id, user_id, kind, category, summary, importance,"
            " pinned, week, year) VALUES ('m_row', %s, 'episodic', 'trip', 's', 0.5, true, 7,"
            " 2025)",
            (user,),
        )
    await store.upsert(user, [("m_row", unit(0), {})])
    [hit] = await store.query(user, unit(0), top_k=1)
    assert hit.metadata == {
        "kind": "episodic",
        "category": "trip",
        "pinned": True,
        "week": 7,
        "year": 2025,
    }


async def test_a_vector_of_the_wrong_dimension_is_rejected(store: PgVectorStore, user: str) -> None:
    with pytest.raises(ValueError, match="384 dimensions"):
        await store.query(user, [1.0, 0.0, 0.0], top_k=1)


async def test_unknown_filter_keys_and_operators_are_rejected(
    store: PgVectorStore, user: str
) -> None:
    with pytest.raises(ValueError, match="cannot filter on 'colour'"):
        await store.query(user, unit(0), top_k=1, filter={"colour": "red"})
    with pytest.raises(ValueError, match="unsupported filter operator"):
        await store.query(user, unit(0), top_k=1, filter={"week": {"$near": 3}})


def test_filters_become_parameterised_sql() -> None:
    params: list[object] = []
    clause = filter_sql({"kind": "episodic", "week": {"$gte": 3}, "pinned": True}, params)
    text = clause.as_string(None)
    assert text == '("kind" = %s AND "week" >= %s AND "pinned" = %s)'
    assert params == ["episodic", 3, True]


async def test_deleting_the_memory_row_deletes_its_vector(
    store: PgVectorStore, user: str, put: Put, pool: Pool
) -> None:
    await put(user, [("m_cascade", unit(0), meta())])
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM memories WHERE memory_id = %s", (key("m_cascade", user),))
        cur = await conn.execute(
            "SELECT count(*) AS n FROM memory_vectors WHERE user_id = %s", (user,)
        )
        row = await cur.fetchone()
    assert row is not None and row["n"] == 0


async def test_update_metadata_changes_pinned_without_the_embedding(
    store: PgVectorStore, user: str, put: Put
) -> None:
    await put(user, [("m_pin", unit(0), meta())])
    await store.update_metadata(user, key("m_pin", user), {"pinned": True})
    hits = await store.query(user, unit(0), top_k=1, filter={"pinned": True})
    assert ids(hits) == ["m_pin"] and hits[0].score == pytest.approx(1.0)


HNSW_SETTINGS = (
    "SELECT current_setting('hnsw.ef_search') AS ef_search,"
    " current_setting('hnsw.iterative_scan') AS iterative_scan"
)


async def test_a_default_search_runs_with_the_stores_hnsw_settings(database_url: str) -> None:
    one = await open_pool(database_url, min_size=1, max_size=1)
    try:
        rows = await nearest_rows(one, DEFAULT_EF_SEARCH, HNSW_SETTINGS, ())
    finally:
        await one.close()
    assert rows == [{"ef_search": str(DEFAULT_EF_SEARCH), "iterative_scan": "strict_order"}]


async def test_another_ef_search_holds_for_its_own_query_only(database_url: str) -> None:
    one = await open_pool(database_url, min_size=1, max_size=1)
    try:
        await nearest_rows(one, DEFAULT_EF_SEARCH, HNSW_SETTINGS, ())
        wider = await nearest_rows(one, 600, HNSW_SETTINGS, ())
        after = await nearest_rows(one, DEFAULT_EF_SEARCH, HNSW_SETTINGS, ())
    finally:
        await one.close()
    assert wider == [{"ef_search": "600", "iterative_scan": "strict_order"}]
    assert after == [{"ef_search": str(DEFAULT_EF_SEARCH), "iterative_scan": "strict_order"}]


def test_ef_search_grows_with_top_k_within_pgvectors_bounds(pool: Pool) -> None:
    store = PgVectorStore(pool)
    assert store.ef_search_for(10) == DEFAULT_EF_SEARCH
    assert store.ef_search_for(300) == 600
    assert store.ef_search_for(5000) == EF_SEARCH_MAX


async def test_erasing_the_user_erases_their_vectors(
    stores: Stores, store: PgVectorStore, user: str, put: Put
) -> None:
    await put(user, [("m_gone", unit(0), meta())])
    assert await stores.users.delete_user(user)
    assert await store.query(user, unit(0), top_k=5) == []


async def test_enum_filter_values_match_by_value(store: PgVectorStore, user: str, put: Put) -> None:
    await put(user, [("m_enum", unit(0), meta("episodic"))])
    hits = await store.query(user, unit(0), top_k=5, filter={"kind": MemoryKind.EPISODIC})
    assert ids(hits) == ["m_enum"]


def test_a_vector_literal_carries_float32_values_exactly() -> None:
    vector = np.random.default_rng(7).standard_normal(DEFAULT_DIM).astype(np.float32)
    literal = vector_literal(vector.tolist())
    parsed = np.array([float(x) for x in literal[1:-1].split(",")], dtype=np.float32)
    assert np.array_equal(parsed, vector)


@pytest.mark.parametrize(
    "vector", [[0.5] * (DEFAULT_DIM - 1), [math.nan] + [0.0] * (DEFAULT_DIM - 1)]
)
def test_a_vector_of_the_wrong_length_or_not_finite_has_no_literal(vector: list[float]) -> None:
    with pytest.raises(ValueError):
        vector_literal(vector)

"""PineconeVectorStore through the official SDK against the local stand-in, and the factory."""

from __future__ import annotations

import pytest
from pinecone import Index
from pinecone.errors import PineconeError, UnauthorizedError

from memoir.db import Pool
from memoir.settings import Settings
from memoir.vectors.factory import VectorConfigError, vector_store
from memoir.vectors.pgvector import PgVectorStore
from memoir.vectors.pinecone import (
    PineconeVectorStore,
    from_pinecone_metadata,
    namespace_for,
    to_pinecone_filter,
    to_pinecone_metadata,
)
from tests.vectors.conftest import Put, VectorStoreContract, ids, key, meta, toward, unit
from tests.vectors.pinecone_standin import StandIn


@pytest.fixture
def backend() -> str:
    """Every test here runs on Pinecone (the stand-in)."""
    return "pinecone"


class TestPineconeContract(VectorStoreContract):
    """The VectorStore contract on Pinecone."""


@pytest.fixture
def store(pinecone_standin: StandIn) -> PineconeVectorStore:
    """A PineconeVectorStore on the stand-in."""
    return PineconeVectorStore(api_key=pinecone_standin.api_key, host=pinecone_standin.url)


async def test_each_user_has_a_namespace_of_their_own(
    store: PineconeVectorStore, pinecone_standin: StandIn, user: str, other_user: str, put: Put
) -> None:
    await put(user, [("m_a", unit(0), meta())])
    await put(other_user, [("m_b", unit(0), meta())])
    namespaces = pinecone_standin.state.namespaces
    assert set(namespaces[f"user:{user}"]) == {key("m_a", user)}
    assert set(namespaces[f"user:{other_user}"]) == {key("m_b", other_user)}
    assert namespace_for(user) == f"user:{user}"


async def test_date_iso_is_stored_as_a_number_and_comes_back_as_a_date(
    store: PineconeVectorStore, pinecone_standin: StandIn, user: str
) -> None:
    await store.upsert(user, [("m_day", unit(0), meta("episodic", date_iso="2025-03-09"))])
    stored = pinecone_standin.state.namespaces[f"user:{user}"]["m_day"].metadata
    assert stored["date_iso"] == 20250309.0
    [hit] = await store.query(user, unit(0), top_k=1)
    assert hit.metadata["date_iso"] == "2025-03-09"


def test_pinecone_rejects_range_filters_on_strings_so_dates_are_translated(
    pinecone_standin: StandIn, user: str
) -> None:
    index = Index(host=pinecone_standin.url, api_key=pinecone_standin.api_key)
    with pytest.raises(PineconeError, match="must be followed by a number"):
        index.query(
            top_k=1,
            vector=unit(0),
            namespace=namespace_for(user),
            filter={"date_iso": {"$gte": "2025-01-01"}},
        )
    assert to_pinecone_filter({"date_iso": {"$gte": "2025-01-01"}, "kind": "episodic"}) == {
        "date_iso": {"$gte": 20250101},
        "kind": "episodic",
    }


def test_metadata_drops_nulls_and_restores_whole_numbers() -> None:
    converted = to_pinecone_metadata({"kind": "semantic", "week": None, "year": 2025})
    assert converted == {"kind": "semantic", "year": 2025}
    assert from_pinecone_metadata({"year": 2025.0, "week": 3.0, "date_iso": 20250102.0}) == {
        "year": 2025,
        "week": 3,
        "date_iso": "2025-01-02",
    }
    with pytest.raises(ValueError, match="Pinecone stores no dict"):
        to_pinecone_metadata({"nested": {"a": 1}})


async def test_large_upserts_are_sent_in_batches(
    store: PineconeVectorStore, pinecone_standin: StandIn, user: str
) -> None:
    before = pinecone_standin.state.requests.count("POST /vectors/upsert")
    items = [(f"m_{i}", toward(0, 1 + i % 300, 45), meta()) for i in range(250)]
    await store.upsert(user, items)
    assert pinecone_standin.state.requests.count("POST /vectors/upsert") - before == 3
    assert len(await store.query(user, unit(0), top_k=1000)) == 250


async def test_update_metadata_changes_pinned_without_the_values(
    store: PineconeVectorStore, user: str
) -> None:
    await store.upsert(user, [("m_pin", toward(0, 1, 30), meta())])
    await store.update_metadata(user, "m_pin", {"pinned": True})
    await store.update_metadata(user, "m_absent", {"pinned": True})
    [hit] = await store.query(user, unit(0), top_k=1, filter={"pinned": True})
    assert hit.id == "m_pin" and hit.score == pytest.approx(0.8660254, abs=1e-6)


async def test_a_wrong_api_key_is_an_error(pinecone_standin: StandIn, user: str) -> None:
    store = PineconeVectorStore(api_key="wrong-key", host=pinecone_standin.url)
    with pytest.raises(UnauthorizedError):
        await store.query(user, unit(0), top_k=1)


async def test_an_orphan_vector_is_only_visible_to_its_user(
    store: PineconeVectorStore, user: str, other_user: str
) -> None:
    await store.upsert(user, [("m_orphan", unit(0), meta())])
    assert ids(await store.query(other_user, unit(0), top_k=10)) == []


def test_factory_chooses_pgvector_by_default(pool: Pool) -> None:
    assert isinstance(vector_store(Settings(vector_backend="pgvector"), pool), PgVectorStore)


def test_factory_chooses_pinecone_with_key_and_host(pool: Pool, pinecone_standin: StandIn) -> None:
    settings = Settings(
        vector_backend="pinecone",
        pinecone_api_key=pinecone_standin.api_key,
        pinecone_host=pinecone_standin.url,
    )
    store = vector_store(settings, pool)
    assert isinstance(store, PineconeVectorStore)
    assert store.index.host == pinecone_standin.url


def test_factory_explains_a_missing_pinecone_key_or_host(pool: Pool) -> None:
    settings = Settings(vector_backend="pinecone", pinecone_api_key=None, pinecone_host=None)
    with pytest.raises(VectorConfigError, match="PINECONE_API_KEY and PINECONE_HOST"):
        vector_store(settings, pool)
    settings = Settings(vector_backend="pinecone", pinecone_api_key="k", pinecone_host=None)
    with pytest.raises(VectorConfigError, match="needs PINECONE_HOST"):
        vector_store(settings, pool)


def test_factory_refuses_a_dimension_pgvector_does_not_hold(pool: Pool) -> None:
    with pytest.raises(VectorConfigError, match="vector\\(384\\)"):
        vector_store(Settings(vector_backend="pgvector", embedding_dim=1536), pool)


def test_the_standin_answers_fetch_and_stats_in_the_sdks_shapes(
    pinecone_standin: StandIn, user: str
) -> None:
    index = Index(host=pinecone_standin.url, api_key=pinecone_standin.api_key)
    namespace = namespace_for(user)
    index.upsert(vectors=[("m_1", unit(0), {"kind": "semantic", "week": 3})], namespace=namespace)
    fetched = index.fetch(ids=["m_1", "m_none"], namespace=namespace)
    assert set(fetched.vectors) == {"m_1"}
    assert fetched.vectors["m_1"].metadata == {"kind": "semantic", "week": 3.0}
    stats = index.describe_index_stats(filter={"week": {"$gte": 3}})
    assert stats.dimension == 384 and stats.namespaces[namespace].vector_count == 1
    index.delete(delete_all=True, namespace=namespace)
    assert namespace not in index.describe_index_stats().namespaces
    index.close()

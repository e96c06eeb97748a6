"""MemoryStore: rows and vectors together, on both vector backends (pgvector, Pinecone stand-in)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from memoir.db import Pool
from memoir.memory.models import Memory, MemoryKind
from memoir.models import UserProfile
from memoir.stores import DuplicateMemoryKeyError, MemoryStore, Stores, UnknownUserError
from memoir.stores.memories import MemoryReplacedError, new_memory, new_memory_id
from memoir.vectors.pgvector import PgVectorStore
from memoir.vectors.pinecone import PineconeVectorStore
from tests.vectors.pinecone_standin import StandIn, serve_standin

DIM = 384
T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def toward(angle_deg: float, axis: int = 1) -> list[float]:
    """A unit vector at `angle_deg` from axis 0 (cosine to axis 0 = cos(angle))."""
    v = [0.0] * DIM
    v[0] = math.cos(math.radians(angle_deg))
    v[axis] = math.sin(math.radians(angle_deg))
    return v


AXIS0 = toward(0)


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """A Pinecone stand-in for this module."""
    with serve_standin(dimension=DIM) as running:
        yield running


@pytest.fixture(params=["pgvector", "pinecone"])
def memories(request: pytest.FixtureRequest, pool: Pool) -> Iterator[MemoryStore]:
    """A MemoryStore whose vectors live in pgvector or in Pinecone."""
    if request.param == "pgvector":
        yield MemoryStore(pool, PgVectorStore(pool))
        return
    running: StandIn = request.getfixturevalue("standin")
    vectors = PineconeVectorStore(api_key=running.api_key, host=running.url)
    try:
        yield MemoryStore(pool, vectors)
    finally:
        vectors.close()


def _memory(
    user: UserProfile,
    summary: str = "My dog Luna is 3",
    *,
    kind: MemoryKind = MemoryKind.SEMANTIC,
    category: str = "pet",
    key: str | None = None,
    at: datetime = T0,
    **fields: object,
) -> Memory:
    return new_memory(
        user_id=user.user_id,
        kind=kind,
        category=category,
        summary=summary,
        importance=0.7,
        key=key,
        source_message_ids=["msg-1"],
        now=at,
        **fields,  # type: ignore[arg-type]
    )


async def _other_user(stores: Stores) -> UserProfile:
    profile, _token = await stores.users.create_user("Other User")
    return profile


def test_new_memory_ids_are_mem_and_a_uuid4_in_hex() -> None:
    memory_id = new_memory_id()
    assert memory_id.startswith("mem_") and len(memory_id) == 36
    int(memory_id[4:], 16)
    assert new_memory_id() != memory_id


async def test_add_then_get_returns_the_memory(memories: MemoryStore, user: UserProfile) -> None:
    memory = _memory(user, key="profile:pet:luna:age", date_iso=date(2025, 5, 1), week=18)
    stored = await memories.add(memory, AXIS0)
    assert stored == memory
    assert await memories.get(user.user_id, memory.memory_id) == memory


async def test_add_writes_the_vector_with_its_metadata(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user, kind=MemoryKind.EPISODIC, year=2025), AXIS0)
    [hit] = await memories.vectors.query(user.user_id, AXIS0, top_k=5)
    assert hit.id == memory.memory_id
    assert hit.metadata == {"kind": "episodic", "category": "pet", "pinned": False, "year": 2025}


async def test_add_retried_with_the_same_id_returns_the_stored_memory(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = _memory(user)
    first = await memories.add(memory, AXIS0)
    again = await memories.add(memory.model_copy(update={"summary": "changed"}), AXIS0)
    assert again == first
    assert len(await memories.list(user.user_id)) == 1


async def test_add_refuses_a_second_memory_with_the_same_key(
    memories: MemoryStore, user: UserProfile
) -> None:
    await memories.add(_memory(user, key="profile:pet:luna:age"), AXIS0)
    with pytest.raises(DuplicateMemoryKeyError, match="profile:pet:luna:age"):
        await memories.add(_memory(user, "Luna is four", key="profile:pet:luna:age"), AXIS0)
    assert len(await memories.list(user.user_id)) == 1


async def test_add_for_an_unknown_user_raises(memories: MemoryStore, user: UserProfile) -> None:
    ghost = user.model_copy(update={"user_id": "nobody-000000"})
    with pytest.raises(UnknownUserError):
        await memories.add(_memory(ghost), AXIS0)


async def test_add_leaves_no_row_when_the_vector_cannot_be_written(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = _memory(user)
    with pytest.raises(ValueError, match="finite"):
        await memories.add(memory, [math.nan] * DIM)
    assert await memories.get(user.user_id, memory.memory_id) is None


async def test_update_re_embeds_and_rewrites_the_vector(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    updated = await memories.update(
        user.user_id,
        memory.memory_id,
        summary="My dog Luna is 4",
        embedding=toward(90),
        last_verified_at=T0 + timedelta(days=1),
    )
    assert updated is not None
    assert updated.summary == "My dog Luna is 4"
    assert updated.last_verified_at == T0 + timedelta(days=1)
    assert updated.updated_at > memory.updated_at
    [(found, score)] = await memories.search(
        user.user_id, toward(90), kind=MemoryKind.SEMANTIC, top_k=1
    )
    assert found == updated and score == pytest.approx(1.0, abs=1e-5)
    [(_, old_score)] = await memories.search(user.user_id, AXIS0, kind=None, top_k=1)
    assert old_score == pytest.approx(0.0, abs=1e-5)


async def test_update_refuses_a_new_summary_without_its_embedding(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    with pytest.raises(ValueError, match="re-embed"):
        await memories.update(user.user_id, memory.memory_id, summary="Luna is 4")


async def test_update_appends_source_message_ids_without_duplicates(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    updated = await memories.update(
        user.user_id, memory.memory_id, source_message_ids=["msg-2", "msg-1", "msg-3", "msg-2"]
    )
    assert updated is not None
    assert updated.source_message_ids == ["msg-1", "msg-2", "msg-3"]
    assert updated.summary == memory.summary and updated.importance == memory.importance


async def test_update_sets_and_clears_the_key_and_importance(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    keyed = await memories.update(
        user.user_id, memory.memory_id, key="profile:pet:luna:age", importance=0.9
    )
    assert keyed is not None and keyed.key == "profile:pet:luna:age" and keyed.importance == 0.9
    cleared = await memories.update(user.user_id, memory.memory_id, key=None)
    assert cleared is not None and cleared.key is None and cleared.importance == 0.9


async def test_update_to_a_key_another_memory_holds_is_refused(
    memories: MemoryStore, user: UserProfile
) -> None:
    await memories.add(_memory(user, key="profile:city"), AXIS0)
    other = await memories.add(_memory(user, "Works at Acme", category="work"), toward(45))
    with pytest.raises(DuplicateMemoryKeyError):
        await memories.update(user.user_id, other.memory_id, key="profile:city")


async def test_update_of_an_unknown_memory_returns_none(
    memories: MemoryStore, user: UserProfile
) -> None:
    assert await memories.update(user.user_id, "mem_missing", importance=0.5) is None


async def test_delete_removes_the_row_and_the_vector(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    kept = await memories.add(_memory(user, "Likes jazz", category="music"), toward(30))
    assert await memories.delete(user.user_id, memory.memory_id) is True
    assert await memories.get(user.user_id, memory.memory_id) is None
    hits = await memories.vectors.query(user.user_id, AXIS0, top_k=10)
    assert [h.id for h in hits] == [kept.memory_id]
    assert await memories.delete(user.user_id, memory.memory_id) is False


async def test_replace_swaps_the_old_memory_for_the_new_one_with_its_key(
    memories: MemoryStore, user: UserProfile
) -> None:
    old = await memories.add(_memory(user, key="profile:pet:luna:age"), AXIS0)
    new = await memories.replace(
        old, _memory(user, "My dog Luna is 4", key="profile:pet:luna:age"), toward(90)
    )
    assert await memories.list(user.user_id) == [new]
    assert await memories.by_key(user.user_id, "profile:pet:luna:age") == new
    hits = await memories.vectors.query(user.user_id, AXIS0, top_k=10)
    assert [h.id for h in hits] == [new.memory_id]


async def test_replace_retried_returns_the_stored_new_memory(
    memories: MemoryStore, user: UserProfile
) -> None:
    old = await memories.add(_memory(user), AXIS0)
    new = _memory(user, "My dog Luna is 4")
    first = await memories.replace(old, new, toward(90))
    assert await memories.replace(old, new, toward(90)) == first
    assert await memories.list(user.user_id) == [first]


async def test_replacing_a_memory_another_change_replaced_is_refused(
    memories: MemoryStore, user: UserProfile
) -> None:
    old = await memories.add(_memory(user), AXIS0)
    first = await memories.replace(old, _memory(user, "My dog Luna is 4"), toward(90))
    with pytest.raises(MemoryReplacedError):
        await memories.replace(old, _memory(user, "My dog Luna is 5"), toward(60))
    assert await memories.list(user.user_id) == [first]


async def test_two_merges_into_one_memory_at_once_keep_one_memory(
    memories: MemoryStore, user: UserProfile
) -> None:
    """Keyless memories too: the later transaction finds the old memory gone and is refused."""
    old = await memories.add(_memory(user), AXIS0)
    merges = [
        memories.replace(old, _memory(user, f"My dog Luna is {n}"), toward(90)) for n in (4, 5)
    ]
    outcomes = await asyncio.gather(*merges, return_exceptions=True)
    assert sorted(type(o).__name__ for o in outcomes) == ["Memory", "MemoryReplacedError"]
    assert len(await memories.list(user.user_id)) == 1


async def test_by_key_finds_the_memory_of_this_user_only(
    memories: MemoryStore, user: UserProfile, stores: Stores
) -> None:
    memory = await memories.add(_memory(user, key="profile:pet:luna:age"), AXIS0)
    other = await _other_user(stores)
    assert await memories.by_key(user.user_id, "profile:pet:luna:age") == memory
    assert await memories.by_key(other.user_id, "profile:pet:luna:age") is None
    assert await memories.by_key(user.user_id, "profile:pet:rex:age") is None


async def test_list_filters_by_kind_newest_first_with_paging(
    memories: MemoryStore, user: UserProfile
) -> None:
    old = await memories.add(_memory(user, "old fact", at=T0), toward(10))
    episode = await memories.add(
        _memory(user, "we planned a trip", kind=MemoryKind.EPISODIC, at=T0 + timedelta(hours=1)),
        toward(20),
    )
    new = await memories.add(_memory(user, "new fact", at=T0 + timedelta(hours=2)), toward(30))
    assert await memories.list(user.user_id) == [new, episode, old]
    assert await memories.list(user.user_id, kind=MemoryKind.SEMANTIC) == [new, old]
    assert await memories.list(user.user_id, kind=MemoryKind.EPISODIC) == [episode]
    assert await memories.list(user.user_id, limit=1, offset=1) == [episode]


async def test_search_keeps_the_vector_order_and_the_kind(
    memories: MemoryStore, user: UserProfile
) -> None:
    far = await memories.add(_memory(user, "far", category="a"), toward(60))
    await memories.add(_memory(user, "near", category="b"), toward(5))
    await memories.add(_memory(user, "episode", kind=MemoryKind.EPISODIC), AXIS0)
    found = await memories.search(user.user_id, AXIS0, kind=MemoryKind.SEMANTIC, top_k=5)
    assert [m.summary for m, _ in found] == ["near", "far"]
    assert [s for _, s in found] == pytest.approx([math.cos(math.radians(5)), 0.5], abs=1e-5)
    only_a = await memories.search(
        user.user_id, AXIS0, kind=MemoryKind.SEMANTIC, top_k=5, filter={"category": "a"}
    )
    assert [m for m, _ in only_a] == [far]


async def test_search_never_returns_another_users_memory(
    memories: MemoryStore, user: UserProfile, stores: Stores
) -> None:
    other = await _other_user(stores)
    theirs = await memories.add(_memory(other, "their secret"), AXIS0)
    mine = await memories.add(_memory(user, "my fact"), toward(45))
    found = await memories.search(user.user_id, AXIS0, kind=None, top_k=10)
    assert [m for m, _ in found] == [mine]
    assert await memories.get(user.user_id, theirs.memory_id) is None
    assert await memories.delete(user.user_id, theirs.memory_id) is False
    assert await memories.get(other.user_id, theirs.memory_id) == theirs


async def test_recent_returns_memories_since_a_time_newest_first(
    memories: MemoryStore, user: UserProfile
) -> None:
    kind = MemoryKind.EPISODIC
    await memories.add(_memory(user, "e1", kind=kind, at=T0 - timedelta(days=3)), toward(1))
    e2 = await memories.add(_memory(user, "e2", kind=kind, at=T0 - timedelta(hours=5)), toward(2))
    e3 = await memories.add(_memory(user, "e3", kind=kind, at=T0), toward(3))
    await memories.add(_memory(user, "fact", at=T0), toward(4))
    since = T0 - timedelta(days=1)
    assert await memories.recent(user.user_id, kind=kind, since=since, limit=10) == [e3, e2]
    assert await memories.recent(user.user_id, kind=kind, since=None, limit=1) == [e3]


async def test_touch_sets_last_accessed_to_now(memories: MemoryStore, user: UserProfile) -> None:
    a = await memories.add(_memory(user, "a"), toward(1))
    b = await memories.add(_memory(user, "b"), toward(2))
    assert a.last_accessed is None
    before = datetime.now(UTC) - timedelta(seconds=5)
    assert await memories.touch(user.user_id, [a.memory_id, "mem_missing"]) == 1
    touched = await memories.get(user.user_id, a.memory_id)
    assert touched is not None and touched.last_accessed is not None
    assert touched.last_accessed >= before
    untouched = await memories.get(user.user_id, b.memory_id)
    assert untouched is not None and untouched.last_accessed is None


async def test_set_pinned_updates_the_row_and_the_vector_metadata(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    await memories.add(_memory(user, "other"), toward(10))
    pinned = await memories.set_pinned(user.user_id, memory.memory_id, True)
    assert pinned is not None and pinned.pinned is True
    found = await memories.search(
        user.user_id, toward(10), kind=None, top_k=5, filter={"pinned": True}
    )
    assert [m.memory_id for m, _ in found] == [memory.memory_id]
    assert await memories.set_pinned(user.user_id, "mem_missing", True) is None


async def test_delete_user_removes_their_rows_and_vectors_only(
    memories: MemoryStore, user: UserProfile, stores: Stores
) -> None:
    other = await _other_user(stores)
    await memories.add(_memory(user, "a"), AXIS0)
    await memories.add(_memory(user, "b", kind=MemoryKind.EPISODIC), toward(20))
    theirs = await memories.add(_memory(other, "c"), AXIS0)
    assert await memories.delete_user(user.user_id) == 2
    assert await memories.list(user.user_id) == []
    assert await memories.vectors.query(user.user_id, AXIS0, top_k=10) == []
    assert [h.id for h in await memories.vectors.query(other.user_id, AXIS0, top_k=10)] == [
        theirs.memory_id
    ]


async def test_concurrent_updates_keep_every_source_message(
    memories: MemoryStore, user: UserProfile
) -> None:
    memory = await memories.add(_memory(user), AXIS0)
    await asyncio.gather(
        *(
            memories.update(user.user_id, memory.memory_id, source_message_ids=[f"m{i}"])
            for i in range(4)
        )
    )
    stored = await memories.get(user.user_id, memory.memory_id)
    assert stored is not None
    assert sorted(stored.source_message_ids) == ["m0", "m1", "m2", "m3", "msg-1"]


def test_stores_from_pool_has_memories_over_pgvector_by_default(pool: Pool) -> None:
    stores = Stores.from_pool(pool)
    assert isinstance(stores.memories.vectors, PgVectorStore)
    vectors = PineconeVectorStore(api_key="k", host="http://127.0.0.1:9")
    assert Stores.from_pool(pool, vectors=vectors).memories.vectors is vectors

"""Stage 3 on Postgres + pgvector: semantic first, a few episodes, recall intent, time phrases."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from memoir.llm import OfflineChatModel
from memoir.memory.episodic import date_bucket, episode_sentence
from memoir.memory.models import Memory, MemoryKind
from memoir.models import UserProfile
from memoir.stores import Stores
from memoir.stores.memories import new_memory
from tests.memory.conftest import EngineFactory
from tests.memory.support import NOW, turn


class Seeder:
    """Adds memories with real embeddings of their summaries."""

    def __init__(self, stores: Stores, user: UserProfile, embedder: object) -> None:
        self.stores, self.user, self.embedder = stores, user, embedder

    async def fact(self, summary: str, **kw: object) -> Memory:
        return await self._add(MemoryKind.SEMANTIC, summary, kw.pop("category", "profile"), **kw)

    async def episode(self, topic: str, approach: str, at: datetime, **kw: object) -> Memory:
        bucket = date_bucket(at, "UTC")
        return await self._add(
            MemoryKind.EPISODIC,
            episode_sentence(bucket, topic, approach),
            "episode",
            date_iso=bucket.date_iso,
            week=bucket.week,
            year=bucket.year,
            now=at,
            **kw,
        )

    async def _add(self, kind: MemoryKind, summary: str, category: object, **kw: object) -> Memory:
        memory = new_memory(
            user_id=self.user.user_id,
            kind=kind,
            category=str(category),
            summary=summary,
            importance=float(kw.pop("importance", 0.7)),  # type: ignore[arg-type]
            source_message_ids=kw.pop("sources", ["src-1"]),  # type: ignore[arg-type]
            now=kw.pop("now", NOW - timedelta(days=1)),  # type: ignore[arg-type]
            **kw,  # type: ignore[arg-type]
        )
        vector = self.embedder.embed([summary])[0]  # type: ignore[attr-defined]
        return await self.stores.memories.add(memory, vector)


async def test_semantic_facts_come_first_on_a_normal_turn(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    seed = Seeder(stores, user, local_embedder)
    await seed.fact("User's dog Luna is 4 years old.", category="pet")
    await seed.episode("a reminder to walk Luna", "set a reminder", NOW - timedelta(days=1))
    result = await make_engine(offline).run_context(turn(user, "How old is my dog Luna?"))
    assert not result.recall
    assert result.selected[0].kind is MemoryKind.SEMANTIC
    assert result.bullets[0] == "[2025-01-14] User's dog Luna is 4 years old. [sources: src-1]"


async def test_recall_intent_boosts_episodes(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    seed = Seeder(stores, user, local_embedder)
    await seed.fact("User's dog Luna is 4 years old.", category="pet")
    await seed.episode("your dog Luna's vet visit", "scheduled “Vet”", NOW - timedelta(days=1))
    engine = make_engine(offline)
    normal = await engine.run_context(turn(user, "Tell me about my dog Luna"))
    recall = await engine.run_context(turn(user, "What did we talk about regarding my dog Luna?"))
    assert normal.selected[0].kind is MemoryKind.SEMANTIC
    assert recall.recall
    assert recall.selected[0].kind is MemoryKind.EPISODIC


async def test_a_time_phrase_filters_the_episodes(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    seed = Seeder(stores, user, local_embedder)
    yesterday = await seed.episode("a reminder to call your mom", "set it", NOW - timedelta(days=1))
    await seed.episode("an email to Dan", "sent it", NOW - timedelta(days=5))
    result = await make_engine(offline).run_context(turn(user, "What did we discuss yesterday?"))
    assert result.time_filter is not None and result.time_filter.start == date(2025, 1, 14)
    episodes = [s.memory.memory_id for s in result.selected if s.memory and s.kind == "episodic"]
    assert episodes == [yesterday.memory_id]


async def test_a_normal_turn_shows_at_most_three_episodes(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    seed = Seeder(stores, user, local_embedder)
    for i in range(5):
        await seed.episode(f"reminder number {i}", "set a reminder", NOW - timedelta(hours=i + 1))
    engine = make_engine(offline)
    normal = await engine.run_context(turn(user, "reminders"))
    recall = await engine.run_context(turn(user, "what did we discuss about reminders?"))
    count = sum(1 for s in normal.selected if s.kind is MemoryKind.EPISODIC)
    assert count == 3
    assert sum(1 for s in recall.selected if s.kind is MemoryKind.EPISODIC) == 5


async def test_pinned_memories_are_always_included(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    seed = Seeder(stores, user, local_embedder)
    for i in range(4):
        await seed.fact(f"User's dog Luna likes toy number {i}.", category="pet")
    pinned = await seed.fact("User never works on Fridays.", importance=0.3)
    await stores.memories.set_pinned(user.user_id, pinned.memory_id, True)
    engine = make_engine(offline, MEMORY_CONTEXT_TOPN=2)
    result = await engine.run_context(turn(user, "What toys does Luna like?"))
    assert len(result.selected) == 2
    assert f"memory:{pinned.memory_id}" in {s.key for s in result.selected}


async def test_retrieved_memories_are_touched(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    fact = await Seeder(stores, user, local_embedder).fact("User lives in Lisbon.")
    assert fact.last_accessed is None
    await make_engine(offline).context(turn(user, "Where do I live?"))
    touched = await stores.memories.get(user.user_id, fact.memory_id)
    assert touched is not None and touched.last_accessed is not None


async def test_the_now_line_is_in_the_users_timezone(
    make_engine: EngineFactory, offline: OfflineChatModel, make_user: object
) -> None:
    kiritimati = await make_user("Kiri", timezone="Pacific/Kiritimati")  # type: ignore[operator]
    late = datetime(2025, 1, 14, 23, 30, tzinfo=NOW.tzinfo)
    result = await make_engine(offline).context(turn(kiritimati, "hello", now=late))
    assert result.now_line == "Now: Wednesday 2025-01-15 13:30 Pacific/Kiritimati"
    assert result.bullets == []


async def test_another_users_memories_never_appear(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    make_user: object,
    local_embedder: object,
) -> None:
    other = await make_user("Someone Else")  # type: ignore[operator]
    await Seeder(stores, other, local_embedder).fact("User's dog Luna is 4 years old.")
    result = await make_engine(offline).context(turn(user, "How old is Luna?"))
    assert result.bullets == []

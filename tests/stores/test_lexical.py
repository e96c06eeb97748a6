"""Full-text search over memories (migration 014) and the word counts of message records."""

from __future__ import annotations

from datetime import UTC, date, datetime

from memoir.memory.models import MemoryKind
from memoir.models import UserProfile
from memoir.stores import MessageRecord, Stores
from memoir.stores.memories import new_memory

T0 = datetime(2025, 1, 14, 9, 0, tzinfo=UTC)
FLAT = [1.0] + [0.0] * 383


async def _memory(
    stores: Stores, user: UserProfile, kind: MemoryKind, summary: str, day: int
) -> str:
    memory = new_memory(
        user_id=user.user_id,
        kind=kind,
        category="pet" if kind is MemoryKind.SEMANTIC else "episode",
        summary=summary,
        importance=0.7,
        date_iso=date(2025, 1, day) if kind is MemoryKind.EPISODIC else None,
        now=T0,
    )
    return (await stores.memories.add(memory, FLAT)).memory_id


async def test_memories_are_found_by_their_words_per_kind_and_user(
    stores: Stores, user: UserProfile, other_user: UserProfile
) -> None:
    fact = await _memory(
        stores, user, MemoryKind.SEMANTIC, "User's greyhound is called Biscuit.", 1
    )
    episode = await _memory(
        stores, user, MemoryKind.EPISODIC, "On 2025-01-10 we discussed the greyhound's vet.", 10
    )
    await _memory(stores, other_user, MemoryKind.SEMANTIC, "User has a greyhound.", 1)
    both = await stores.memories.lexical(user.user_id, "Which greyhound?", kind=None, top_k=5)
    facts = await stores.memories.lexical(
        user.user_id, "greyhound", kind=MemoryKind.SEMANTIC, top_k=5
    )
    assert {m.memory_id for m, _rank in both} == {fact, episode}
    assert [m.memory_id for m, _rank in facts] == [fact]


async def test_a_day_span_keeps_only_the_episodes_dated_in_it(
    stores: Stores, user: UserProfile
) -> None:
    await _memory(stores, user, MemoryKind.SEMANTIC, "User likes the plumber.", 1)
    await _memory(stores, user, MemoryKind.EPISODIC, "We discussed the plumber.", 3)
    inside = await _memory(stores, user, MemoryKind.EPISODIC, "We called the plumber.", 13)
    found = await stores.memories.lexical(
        user.user_id,
        "plumber",
        kind=None,
        top_k=5,
        episode_days=(date(2025, 1, 12), date(2025, 1, 14)),
    )
    assert [m.memory_id for m, _rank in found] == [inside]


async def test_word_counts_say_how_many_records_hold_each_word(
    stores: Stores, user: UserProfile
) -> None:
    for n, text in enumerate(["Maya: I work at the hospital", "Maya: my dog", "Jonas: hi"]):
        record = MessageRecord(
            record_id=f"{user.user_id}:{n}",
            user_id=user.user_id,
            thread_id="t1",
            message_id=f"m{n}",
            speaker="user",
            text=text,
            said_at=T0,
        )
        await stores.messages.add(record, FLAT)
    counts = await stores.messages.word_counts(user.user_id, "Which hospital does Maya's team use?")
    assert counts.records == 3
    assert counts.counts == {"hospital": 1, "maya": 2, "team": 0, "use": 0}
    assert counts.share("Maya") == 2 / 3


async def test_interactions_written_in_a_failed_transaction_are_rolled_back(
    stores: Stores, user: UserProfile
) -> None:
    try:
        async with stores.pool.connection() as conn, conn.transaction():
            await stores.interactions.save_interaction_in(
                conn, key="k1", user_id=user.user_id, thread_id="t1", actor="user", content="hi"
            )
            raise RuntimeError("after the write")
    except RuntimeError:
        pass
    assert await stores.interactions.recent_messages(user.user_id, "t1") == []

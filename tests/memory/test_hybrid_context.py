"""Stage 3 over message records too: found by words or by meaning, fused, bounded, attributed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from memoir.embeddings import LocalEmbedder
from memoir.llm import OfflineChatModel
from memoir.memory.context import estimate_tokens
from memoir.memory.models import MemoryKind
from memoir.memory.retrieval import DENSE, LEXICAL, has_recency_intent
from memoir.models import UserProfile
from memoir.stores import MessageRecord, Stores
from memoir.stores.memories import new_memory
from tests.memory.conftest import EngineFactory
from tests.memory.support import NOW, DesignedEmbedder, turn, unit_toward

MAY_7 = datetime(2023, 5, 7, 18, 30, tzinfo=UTC)


class Said:
    """Keeps messages of one user as records, embedded by `embed` (text → vector)."""

    def __init__(self, stores: Stores, user: UserProfile, embed: object) -> None:
        self.stores, self.user, self.embed = stores, user, embed
        self.n = 0

    async def __call__(
        self,
        text: str,
        *,
        at: datetime = MAY_7,
        speaker_name: str | None = "Maya",
        thread: str = "old",
        vector: Sequence[float] | None = None,
    ) -> MessageRecord:
        self.n += 1
        record = MessageRecord(
            record_id=f"turn:{self.user.user_id}:{thread}:D{self.n}:user",
            user_id=self.user.user_id,
            thread_id=thread,
            message_id=f"D{self.n}",
            speaker="user",
            speaker_name=speaker_name,
            text=text,
            said_at=at,
        )
        embedding = vector if vector is not None else self.embed.embed([text])[0]  # type: ignore[attr-defined]
        await self.stores.messages.add(record, embedding)
        return record


def keys(result: object) -> list[str]:
    return [item.key for item in result.selected]  # type: ignore[attr-defined]


async def test_an_old_message_is_found_by_its_words_alone(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    question = "Which breed is the greyhound?"
    embedder = DesignedEmbedder({question: unit_toward(1.0, 1)})
    said = Said(stores, user, embedder)
    for i in range(6):  # nearer in meaning, no shared word
        await said(f"filler number {i}", vector=unit_toward(0.9, 2 + i))
    target = await said("We adopted a retired racing greyhound", vector=unit_toward(0.0, 9))
    engine = make_engine(offline, embedder=embedder, MEMORY_CONTEXT_TOPK=5)
    result = await engine.run_context(turn(user, question))
    [found] = [item for item in result.selected if item.record == target]
    assert found.ranks == {LEXICAL: 1}  # the dense ranking (top 5) never reached it


async def test_an_old_message_is_found_by_its_meaning_alone(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    target = await said("I lost my job as a banker yesterday")
    await said("We went hiking in the Alps last summer")
    await said("My sister is learning pottery on Tuesdays")
    result = await make_engine(offline).run_context(turn(user, "Was I ever fired?"))
    assert result.selected[0].record == target
    assert set(result.selected[0].ranks) == {DENSE}  # no word in common


async def test_bullets_say_when_and_by_whom(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    await said("Maya: I lost my job as a banker yesterday")  # a transcript line's own prefix
    await said("Is that the bank on Park Road?", speaker_name=None)
    result = await make_engine(offline).run_context(turn(user, "Did Maya lose her job?"))
    assert (
        result.bullets[0] == "[2023-05-07, Maya] I lost my job as a banker yesterday [sources: D1]"
    )
    assert "[2023-05-07, user] Is that the bank on Park Road? [sources: D2]" in result.bullets


async def test_the_token_budget_bounds_the_bullets(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    for i in range(12):
        await said(f"Story {i} about our garden: the tomatoes, the beans and the slugs again.")
    engine = make_engine(offline, MEMORY_CONTEXT_TOKENS=100)
    result = await engine.run_context(turn(user, "How is the garden doing?"))
    assert 2 <= len(result.bullets) < 12
    assert result.tokens == sum(estimate_tokens(b) for b in result.bullets) <= 100


async def test_recency_counts_only_when_the_question_asks_for_it(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    plain, latest = "Which vehicle?", "Which is my latest vehicle?"
    embedder = DesignedEmbedder({plain: unit_toward(1.0, 1), latest: unit_toward(1.0, 1)})
    said = Said(stores, user, embedder)
    old = await said("Toyota Camry", at=MAY_7, vector=unit_toward(0.9, 2))
    new = await said("Honda Civic", at=MAY_7 + timedelta(days=300), vector=unit_toward(0.85, 3))
    engine = make_engine(offline, embedder=embedder)
    normal = await engine.run_context(turn(user, plain))
    asked = await engine.run_context(turn(user, latest))
    assert not normal.recent and asked.recent
    assert [i.record for i in normal.selected] == [old, new]
    assert [i.record for i in asked.selected] == [new, old]


def test_recency_intent_is_read_from_the_question() -> None:
    assert has_recency_intent("Is she still a nurse?")
    assert has_recency_intent("What does he drive currently?")
    assert has_recency_intent("what did we talk about last time we spoke?")
    assert not has_recency_intent("When did Maya adopt Biscuit?")


async def test_a_message_a_chosen_fact_states_is_left_out(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    three = await said("My dog Luna is 3 years old", speaker_name=None)
    four = await said("Luna turned 4 last week", speaker_name=None)
    fact = new_memory(
        user_id=user.user_id,
        kind=MemoryKind.SEMANTIC,
        category="pet",
        summary="User's dog Luna is 4 years old.",
        importance=0.8,
        source_message_ids=[three.message_id, four.message_id],
        now=NOW - timedelta(days=1),
    )
    summary = fact.summary
    await stores.memories.add(fact, local_embedder.embed([summary])[0])
    result = await make_engine(offline).run_context(turn(user, "How old is my dog Luna?"))
    assert keys(result) == [f"memory:{fact.memory_id}"]
    assert not any("3 years" in b for b in result.bullets)


async def test_messages_the_turn_already_shows_are_left_out(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    await said("I want to repaint the kitchen green", thread="t1")
    earlier = await said("I want to repaint the kitchen green", thread="other")
    ask = turn(
        user, "Which colour for the kitchen?", recent=["I want to repaint the kitchen green"]
    )
    result = await make_engine(offline).run_context(ask)
    assert [item.record for item in result.selected] == [earlier]


async def test_recall_intent_with_a_time_phrase_keeps_only_that_days_messages(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: LocalEmbedder,
) -> None:
    said = Said(stores, user, local_embedder)
    yesterday = await said("the plumber comes on Friday", at=NOW - timedelta(days=1))
    await said("the plumber fixed the sink", at=NOW - timedelta(days=5))
    result = await make_engine(offline).run_context(
        turn(user, "What did we talk about yesterday about the plumber?")
    )
    assert result.recall and result.time_filter is not None
    assert [item.record for item in result.selected] == [yesterday]


async def test_a_time_phrase_without_recall_intent_lifts_that_time_without_hiding_others(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    question = "Which concert in March?"
    embedder = DesignedEmbedder({question: unit_toward(1.0, 1)})
    said = Said(stores, user, embedder)
    january = await said("a show", at=datetime(2025, 1, 5, tzinfo=UTC), vector=unit_toward(0.9, 2))
    march = await said("a gig", at=datetime(2024, 3, 9, tzinfo=UTC), vector=unit_toward(0.8, 3))
    result = await make_engine(offline, embedder=embedder).run_context(turn(user, question))
    assert not result.recall
    assert [item.record for item in result.selected] == [march, january]


async def test_another_users_messages_never_appear(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    make_user: object,
    local_embedder: LocalEmbedder,
) -> None:
    other = await make_user("Someone Else")  # type: ignore[operator]
    await Said(stores, other, local_embedder)("I lost my job as a banker yesterday")
    result = await make_engine(offline).context(turn(user, "Did I lose my job as a banker?"))
    assert result.bullets == []

"""Stage 2 end to end on Postgres + pgvector: gate, candidate, neighbours, bands, merge modes."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from memoir import logging_hygiene
from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.memory import events
from memoir.memory.models import Memory, MemoryKind
from memoir.memory.schemas import (
    ComposedSummary,
    HotpathDecision,
    MemoryCandidate,
    MemoryExtraction,
    ProfileUpdate,
    SameFact,
)
from memoir.models import Channel, EmailMessage, IncomingMessage, UserProfile
from memoir.stores import Stores
from memoir.stores.memories import new_memory
from tests.memory.conftest import EngineFactory
from tests.memory.support import (
    AXIS0,
    NOW,
    CountingVectors,
    DesignedEmbedder,
    turn,
    unit_toward,
)


async def semantic(stores: Stores, user: UserProfile) -> list[Memory]:
    return await stores.memories.list(user.user_id, kind=MemoryKind.SEMANTIC)


@pytest.mark.parametrize("mode", ["recreate", "update"])
async def test_luna_turned_4_leaves_one_memory_saying_4(
    mode: str,
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
) -> None:
    engine = make_engine(offline, MEMORY_MERGE_MODE=mode)
    first = await engine.run_hotpath(turn(user, "my dog Luna is 3", message_id="m1"))
    assert first.action == "create"
    later = NOW + timedelta(days=30)
    second = await engine.run_hotpath(
        turn(user, "Luna turned 4", message_id="m2", now=later, recent=["my dog Luna is 3"])
    )
    assert second.action == "update" and second.match is not None
    assert second.match.by == "key"
    [luna] = await semantic(stores, user)
    assert luna.summary == "User's dog Luna is 4 years old."
    assert luna.key == "profile:pet:luna:age"
    assert luna.source_message_ids == ["m1", "m2"]
    assert luna.last_verified_at == later
    assert first.memory is not None
    if mode == "recreate":
        assert luna.memory_id != first.memory.memory_id
        assert await stores.memories.get(user.user_id, first.memory.memory_id) is None
    else:
        assert luna.memory_id == first.memory.memory_id
    assert await stores.memories.list(user.user_id, kind=MemoryKind.EPISODIC) == []


async def test_the_merged_memory_is_re_embedded(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    local_embedder: object,
) -> None:
    engine = make_engine(offline)
    await engine.run_hotpath(turn(user, "my dog Luna is 3", message_id="m1"))
    await engine.run_hotpath(turn(user, "Luna turned 4", message_id="m2"))
    query = local_embedder.embed(["User's dog Luna is 4 years old."])[0]  # type: ignore[attr-defined]
    [(found, score)] = await stores.memories.search(
        user.user_id, query, kind=MemoryKind.SEMANTIC, top_k=1
    )
    assert found.summary == "User's dog Luna is 4 years old." and score > 0.99


@pytest.mark.parametrize(
    "phrasings",
    [
        ("I prefer short replies", "Please keep your answers brief", "I like concise responses"),
        ("I live in Lisbon", "I'm based in Lisbon", "My city is Lisbon"),
        ("I love sushi", "I really love sushi!", "i love sushi"),
    ],
)
async def test_the_same_fact_phrased_three_ways_stays_one_memory(
    phrasings: tuple[str, ...],
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
) -> None:
    engine = make_engine(offline)
    for i, text in enumerate(phrasings, start=1):
        await engine.run_hotpath(turn(user, text, message_id=f"m{i}"))
    [memory] = await semantic(stores, user)
    assert memory.source_message_ids == ["m1", "m2", "m3"]


def scripted(
    *, importance: float = 0.8, same: tuple[bool, ...] = (), category: str = "pet"
) -> ScriptedChatModel:
    llm = ScriptedChatModel(on_exhausted="raise")
    llm.script(HotpathDecision, HotpathDecision(reasoning="a fact", should_create=True))
    llm.script(
        MemoryExtraction,
        MemoryExtraction(
            reasoning="one fact",
            memories=[
                MemoryCandidate(category=category, summary="CANDIDATE", importance=importance)
            ],
        ),
    )
    llm.script(SameFact, *[SameFact(reasoning="test", same_fact=s) for s in same])
    llm.script(ComposedSummary, ComposedSummary(reasoning="test", summary="MERGED"))
    llm.script(ProfileUpdate, ProfileUpdate(reasoning="test", changes={}))
    return llm


@pytest.mark.parametrize(
    ("scores", "importance", "same", "action", "merged", "classifier_calls"),
    [
        # best ≥ MEMORY_MERGE_AUTO_UPDATE (0.85): merge with it, no classifier
        ((0.92, 0.7), 0.8, (), "update", "n0", 0),
        # between the bands: classifier in order, first match wins (early exit)
        ((0.80, 0.70, 0.65), 0.8, (False, True), "update", "n1", 2),
        # between the bands, no match: create
        ((0.80, 0.70), 0.8, (False, False), "create", None, 2),
        # below MEMORY_MERGE_CHECK_LOW (0.60): create without asking
        ((0.55, 0.30), 0.8, (), "create", None, 0),
        # below MEMORY_SEMANTIC_MIN_IMPORTANCE (0.4) and nothing to update: skip
        ((0.55,), 0.2, (), "skip", None, 0),
        # low importance still updates a matching fact
        ((0.90,), 0.2, (), "update", "n0", 0),
    ],
)
async def test_score_bands_decide_merge_create_or_skip(
    scores: tuple[float, ...],
    importance: float,
    same: tuple[bool, ...],
    action: str,
    merged: str | None,
    classifier_calls: int,
    make_engine: EngineFactory,
    stores: Stores,
    user: UserProfile,
) -> None:
    embedder = DesignedEmbedder({"CANDIDATE": AXIS0, "MERGED": AXIS0})
    engine = make_engine(scripted(importance=importance, same=same), embedder)
    ids = {}
    for i, score in enumerate(scores):
        m = new_memory(
            user_id=user.user_id,
            kind=MemoryKind.SEMANTIC,
            category="pet",
            summary=f"neighbour {i}",
            importance=0.5,
            source_message_ids=[f"old{i}"],
            now=NOW,
        )
        await stores.memories.add(m, unit_toward(score, axis=i + 1))
        ids[f"n{i}"] = m.memory_id
    # Closer than all of them, but in another category: never a neighbour.
    other = new_memory(
        user_id=user.user_id,
        kind=MemoryKind.SEMANTIC,
        category="profile",
        summary="elsewhere",
        importance=0.5,
        now=NOW,
    )
    await stores.memories.add(other, AXIS0)

    result = await engine.run_hotpath(turn(user, "whatever", message_id="new"))

    llm = engine.llm
    assert isinstance(llm, ScriptedChatModel)
    assert result.action == action
    assert len(llm.calls_for(SameFact)) == classifier_calls
    remaining = {m.memory_id for m in await semantic(stores, user)}
    if merged is not None:
        assert result.match is not None and result.match.memory.memory_id == ids[merged]
        assert result.memory is not None and result.memory.summary == "MERGED"
        assert result.memory.source_message_ids == [f"old{merged[1:]}", "new"]
        assert ids[merged] not in remaining  # recreate: the old one is gone
        assert len(remaining) == len(scores) + 1
    elif action == "create":
        assert len(remaining) == len(scores) + 2
    else:
        assert len(remaining) == len(scores) + 1


async def test_a_gate_no_costs_one_llm_call_and_no_vector_work(
    make_engine: EngineFactory, user: UserProfile
) -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    llm.script(HotpathDecision, HotpathDecision(reasoning="a question", should_create=False))
    embedder = DesignedEmbedder()
    engine = make_engine(llm, embedder)
    result = await engine.hotpath(turn(user, "what can you do?"))
    vectors = engine.memories.vectors
    assert isinstance(vectors, CountingVectors)
    assert llm.schemas_called() == ["HotpathDecision"]
    assert embedder.texts == [] and vectors.queries == []
    assert result.events == ["memory.decide"]
    assert result.profile_line.startswith("User profile — name: Memory Tester")


async def test_the_no_create_path_costs_one_embedding_and_one_vector_query(
    make_engine: EngineFactory, stores: Stores, user: UserProfile
) -> None:
    embedder = DesignedEmbedder({"CANDIDATE": AXIS0})
    engine = make_engine(scripted(importance=0.1), embedder)
    result = await engine.run_hotpath(turn(user, "whatever"))
    vectors = engine.memories.vectors
    assert isinstance(vectors, CountingVectors)
    llm = engine.llm
    assert isinstance(llm, ScriptedChatModel)
    assert result.action == "skip"
    assert llm.schemas_called() == ["HotpathDecision", "MemoryExtraction"]
    assert embedder.texts == ["CANDIDATE"]
    assert vectors.queries == [{"category": "pet", "kind": "semantic"}]
    assert await semantic(stores, user) == []


async def test_users_never_share_memories(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    make_user: object,
) -> None:
    other = await make_user("Someone Else")  # type: ignore[operator]
    engine = make_engine(offline)
    await engine.run_hotpath(turn(user, "my dog Luna is 3", message_id="a1"))
    result = await engine.run_hotpath(turn(other, "Luna turned 4", message_id="b1"))
    assert result.action == "create"
    [mine] = await semantic(stores, user)
    [theirs] = await semantic(stores, other)
    assert mine.summary == "User's dog Luna is 3 years old."
    assert theirs.summary == "User's pet Luna is 4 years old."


async def test_a_new_fact_updates_the_profile_line(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    first = await engine.hotpath(turn(user, "I live in Lisbon", message_id="m1"))
    assert "city: Lisbon" in first.profile_line
    assert first.events == [
        "memory.decide",  # the gate
        "memory.decide",  # the extraction: one candidate
        "memory.search",
        "memory.create",
        "memory.profile",
    ]
    moved = await engine.hotpath(turn(user, "I moved to Porto last month", message_id="m2"))
    assert "city: Porto" in moved.profile_line
    [city] = [m for m in await semantic(stores, user) if m.category == "profile"]
    assert city.summary == "User lives in Porto."
    ctx = await stores.user_context.get(user.user_id)
    assert ctx.city == "Porto"


async def test_a_reply_preference_sets_the_tone(
    make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    result = await make_engine(offline).hotpath(turn(user, "I prefer short replies"))
    assert "tone: concise" in result.profile_line


async def test_an_email_is_never_a_semantic_memory(
    make_engine: EngineFactory, user: UserProfile
) -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    engine = make_engine(llm)
    email = EmailMessage(
        email_id="e1", author="dan@x.com", to="me@x.com", subject="hi", body="I live in Rome"
    )
    request = turn(user, "I live in Rome")
    request.message = IncomingMessage(
        user_id=user.user_id,
        thread_id="t1",
        message_id="e1",
        channel=Channel.EMAIL,
        text="I live in Rome",
        email=email,
    )
    result = await engine.run_hotpath(request)
    assert result.action == "none" and llm.calls == []


async def test_decisions_are_counted(
    make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    before = events.snapshot()
    engine = make_engine(offline)
    await engine.hotpath(turn(user, "my dog Luna is 3", message_id="m1"))
    await engine.hotpath(turn(user, "Luna turned 4", message_id="m2"))
    after = events.snapshot()
    assert after["semantic_creates"] - before["semantic_creates"] == 1
    assert after["semantic_updates"] - before["semantic_updates"] == 1


async def test_every_decision_is_logged_with_its_fields(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    user: UserProfile,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = logging_hygiene.content_logging()
    logging_hygiene.set_content_logging(True)  # the key is content: logged only for debugging
    try:
        with caplog.at_level("INFO", logger="memoir.memory"):
            await make_engine(offline).hotpath(turn(user, "my dog Luna is 3"))
    finally:
        logging_hygiene.set_content_logging(before)
    records = [r for r in caplog.records if getattr(r, "event", None) == "memory.create"]
    assert len(records) == 1
    fields = records[0].fields  # type: ignore[attr-defined]
    assert fields["key"] == "profile:pet:luna:age" and fields["user_id"] == user.user_id


async def test_a_decision_is_logged_without_its_content_by_default(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    user: UserProfile,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = logging_hygiene.content_logging()
    logging_hygiene.set_content_logging(False)
    try:
        with caplog.at_level("INFO", logger="memoir.memory"):
            await make_engine(offline).hotpath(turn(user, "my dog Luna is 3"))
    finally:
        logging_hygiene.set_content_logging(before)
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "memory.create"]
    fields = record.fields  # type: ignore[attr-defined]
    assert fields["user_id"] == user.user_id
    assert "luna" not in f"{record.getMessage()} {fields}".lower()


# ----- several memories per message, events, subjects -----------------------------------------


async def test_several_facts_in_one_message_become_several_memories(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    text = "My parrot Kiwi is 7 and I work as a pharmacist"
    result = await engine.run_hotpath(turn(user, text, message_id="m1"))
    assert result.action == "create" and len(result.outcomes) == 2
    found = await semantic(stores, user)
    assert {m.summary for m in found} == {
        "User's parrot Kiwi is 7 years old.",
        "User works as a pharmacist.",
    }
    assert all(m.source_message_ids == ["m1"] for m in found)
    assert len({m.memory_id for m in found}) == 2


async def test_an_event_is_a_dated_memory_with_its_subject(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)  # NOW is Wednesday 15 January 2025
    result = await engine.run_hotpath(turn(user, "I lost my job at the bakery yesterday"))
    assert result.action == "create"
    [event] = await semantic(stores, user)
    assert event.category == "event"
    assert event.summary == "On 2025-01-14 User lost their job at the bakery."
    assert (event.date_iso, event.week, event.year) == (date(2025, 1, 14), 3, 2025)
    assert event.metadata["kind"] == "event" and event.metadata["subject"] == "User"
    assert event.source_message_ids == ["msg-1"]


async def test_events_of_different_days_are_never_merged(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    first = turn(user, "I went to a pottery class yesterday", message_id="m1")
    again = turn(
        user, "I went to a pottery class yesterday", message_id="m2", now=NOW + timedelta(days=7)
    )
    same_day = turn(
        user, "Yesterday I went to a pottery class", message_id="m3", now=NOW + timedelta(days=7)
    )
    assert (await engine.run_hotpath(first)).action == "create"
    assert (await engine.run_hotpath(again)).action == "create"
    assert (await engine.run_hotpath(same_day)).action == "update"
    events = sorted(await semantic(stores, user), key=lambda m: m.date_iso or date.min)
    assert [e.date_iso for e in events] == [date(2025, 1, 14), date(2025, 1, 21)]
    assert events[1].source_message_ids == ["m2", "m3"]


async def test_a_named_speakers_facts_stay_theirs_and_leave_the_profile_alone(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    await engine.run_hotpath(turn(user, "Ingrid: I live in Bergen", message_id="m1"))
    await engine.run_hotpath(turn(user, "Olav: I live in Oslo", message_id="m2"))
    found = {m.key: m.summary for m in await semantic(stores, user)}
    assert found == {
        "person:ingrid:city": "Ingrid lives in Bergen.",
        "person:olav:city": "Olav lives in Oslo.",
    }
    ctx = await stores.user_context.get(user.user_id)
    assert ctx.city != "Bergen" and ctx.city != "Oslo"


async def test_encouragement_writes_nothing(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    for i, text in enumerate(["You can do it!", "Never give up.", "Ingrid: Keep going!"]):
        assert (await engine.run_hotpath(turn(user, text, message_id=f"m{i}"))).action == "none"
    assert await semantic(stores, user) == []


async def test_the_hot_path_dates_an_event_the_model_left_undated(
    make_engine: EngineFactory, stores: Stores, user: UserProfile
) -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    llm.script(HotpathDecision, HotpathDecision(reasoning="an event", should_create=True))
    event = MemoryCandidate(
        category="life",
        summary="User adopted a kitten.",
        importance=0.6,
        key="should:be:dropped",
        kind="event",
        time_phrase="the day before yesterday",
    )
    llm.script(MemoryExtraction, MemoryExtraction(reasoning="one event", memories=[event]))
    result = await make_engine(llm).run_hotpath(turn(user, "whatever"))
    assert result.action == "create"
    [stored] = await semantic(stores, user)
    assert (stored.category, stored.key, stored.date_iso) == ("event", None, date(2025, 1, 13))
    assert llm.schemas_called() == ["HotpathDecision", "MemoryExtraction"]  # no profile sync


async def test_the_prompts_carry_the_speaker_and_the_message_time(
    make_engine: EngineFactory, user: UserProfile
) -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    llm.script(HotpathDecision, HotpathDecision(reasoning="no", should_create=False))
    await make_engine(llm).run_hotpath(turn(user, "Ingrid: I sold my car yesterday"))
    [call] = llm.calls_for(HotpathDecision)
    assert "## Speaker\nIngrid" in call
    assert "## Message Time\nWednesday 2025-01-15 09:30, timezone UTC" in call
    assert "## Latest User Message\nI sold my car yesterday" in call

"""Stage 12 on Postgres + pgvector: skip routine turns, cooldowns, daily cap, novelty, merge."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.memory import events
from memoir.memory.engine import MemoryEngine
from memoir.memory.models import MemoryKind
from memoir.models import ExecutionResult, RecentMessage, UserProfile
from memoir.stores import Stores
from tests.memory.conftest import EngineFactory
from tests.memory.support import NOW, remember, reminder_result, turn

NO_COOLDOWN = {"EPISODIC_COOLDOWN_TURNS": 0, "EPISODIC_COOLDOWN_MINUTES": 0}


async def episodes(stores: Stores, user: UserProfile) -> list:
    return await stores.memories.list(user.user_id, kind=MemoryKind.EPISODIC)


async def remind(
    engine: MemoryEngine, user: UserProfile, what: str, at: datetime, n: int, tz: str = "UTC"
) -> list[str]:
    request = remember(
        user, f"Remind me to {what} at 5pm", message_id=f"m{n}", results=[reminder_result(what)]
    )
    return await engine.capture(request, [], tz, now=at)


async def test_a_routine_turn_is_skipped_without_a_model_call(
    make_engine: EngineFactory, stores: Stores, user: UserProfile
) -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    engine = make_engine(llm)
    names = await engine.capture(remember(user, "my dog Luna is 3", reply="Nice!"), [], "UTC", NOW)
    assert names == ["episodic.decide", "episodic.skip"]
    assert llm.calls == []
    assert await episodes(stores, user) == []
    state = await engine.states.get(user.user_id)
    assert state.turns_since_last == 1


async def test_an_action_creates_an_episode_with_its_date_bucket(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    recent = [
        RecentMessage(role="user", content="Remind me to call my mom at 5pm", at=NOW),
        RecentMessage(role="tool", content="reminders.create: ok", at=NOW),
        RecentMessage(role="assistant", content="Done — I'll remind you at 17:00.", at=NOW),
    ]
    request = remember(
        user, "Remind me to call my mom at 5pm", results=[reminder_result("call my mom")]
    )
    names = await engine.capture(request, recent, "UTC", now=NOW)
    assert names == ["episodic.decide", "episodic.create"]
    [episode] = await episodes(stores, user)
    assert episode.summary == (
        "On 2025-01-15 (W03, 2025) we discussed a reminder to call your mom. "
        "Approach: set a reminder to call your mom for 2025-01-15 17:00."
    )
    assert (episode.date_iso, episode.week, episode.year) == (date(2025, 1, 15), 3, 2025)
    assert episode.source_message_ids == ["msg-1"]
    state = await engine.states.get(user.user_id)
    assert (state.turns_since_last, state.day_count) == (0, 1)


async def test_the_date_bucket_is_the_users_day(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, make_user: object
) -> None:
    kiri = await make_user("Kiri", timezone="Pacific/Kiritimati")  # type: ignore[operator]
    engine = make_engine(offline)
    late = datetime(2025, 1, 14, 23, 30, tzinfo=UTC)  # 15 Jan, 13:30 in Kiritimati
    await remind(engine, kiri, "call my mom", late, 1, tz="Pacific/Kiritimati")
    [episode] = await episodes(stores, kiri)
    assert episode.date_iso == date(2025, 1, 15)
    assert episode.summary.startswith("On 2025-01-15 (W03, 2025)")


async def test_cooldown_by_turns(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline, EPISODIC_COOLDOWN_TURNS=3, EPISODIC_COOLDOWN_MINUTES=60)
    things = ["call my mom", "water the plants", "pay the rent", "book the dentist"]
    outcomes = []
    for n, what in enumerate(things):
        names = await remind(engine, user, what, NOW + timedelta(minutes=n), n)
        outcomes.append(names[-1])
    assert outcomes == ["episodic.create", "episodic.skip", "episodic.skip", "episodic.create"]
    assert len(await episodes(stores, user)) == 2


async def test_cooldown_by_minutes(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline, EPISODIC_COOLDOWN_TURNS=10, EPISODIC_COOLDOWN_MINUTES=10)
    first = await remind(engine, user, "call my mom", NOW, 1)
    soon = await remind(engine, user, "water the plants", NOW + timedelta(minutes=9), 2)
    later = await remind(engine, user, "pay the rent", NOW + timedelta(minutes=20), 3)
    assert [first[-1], soon[-1], later[-1]] == [
        "episodic.create",
        "episodic.skip",
        "episodic.create",
    ]


async def test_daily_cap_per_local_day(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, make_user: object
) -> None:
    auckland = await make_user("Auck", timezone="Pacific/Auckland")  # type: ignore[operator]
    engine = make_engine(offline, EPISODIC_MAX_PER_DAY=2, **NO_COOLDOWN)
    # 15 Jan 09:30 UTC is 22:30 in Auckland; 12:00 UTC is already 16 Jan 01:00 there.
    day_one = [NOW, NOW + timedelta(minutes=30), NOW + timedelta(minutes=60)]
    things = ["call my mom", "water the plants", "pay the rent"]
    results = [
        (await remind(engine, auckland, what, at, n, tz="Pacific/Auckland"))[-1]
        for n, (what, at) in enumerate(zip(things, day_one, strict=True))
    ]
    assert results == ["episodic.create", "episodic.create", "episodic.skip"]
    next_day = NOW + timedelta(hours=2, minutes=30)
    assert (await remind(engine, auckland, "book the dentist", next_day, 9, "Pacific/Auckland"))[
        -1
    ] == "episodic.create"


async def test_a_similar_turn_merges_into_the_recent_episode(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline, **NO_COOLDOWN)
    before = events.snapshot()
    await remind(engine, user, "call my mom", NOW, 1)
    request = remember(
        user,
        "Remind me to call my mom at 6pm",
        message_id="m2",
        results=[reminder_result("call my mom", "2025-01-16T18:00:00+00:00")],
    )
    result = await engine.run_capture(request, [], "UTC", now=NOW + timedelta(hours=20))
    assert result.action == "merge"
    [episode] = await episodes(stores, user)
    assert episode.summary == (
        "On 2025-01-16 (W03, 2025) we discussed a reminder to call your mom. Approach: set a "
        "reminder to call your mom for 2025-01-15 17:00; then set a reminder to call your mom "
        "for 2025-01-16 18:00."
    )
    assert episode.date_iso == date(2025, 1, 16)
    assert episode.source_message_ids == ["m1", "m2"]
    after = events.snapshot()
    assert after["episodic_merges"] - before["episodic_merges"] == 1
    assert after["episodic_creates"] - before["episodic_creates"] == 1


async def test_a_repeat_outside_the_merge_window_is_not_novel(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline, EPISODIC_MERGE_WINDOW_HOURS=24, **NO_COOLDOWN)
    await remind(engine, user, "call my mom", NOW, 1)
    result = await engine.run_capture(
        remember(
            user,
            "Remind me to call my mom",
            message_id="m2",
            results=[reminder_result("call my mom")],
        ),
        [],
        "UTC",
        now=NOW + timedelta(days=3),
    )
    assert result.action == "skip" and "repeat" in result.reason
    assert result.novelty is not None and result.novelty < 0.25
    assert len(await episodes(stores, user)) == 1


async def test_a_different_outcome_is_novel(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline, **NO_COOLDOWN)
    await remind(engine, user, "call my mom", NOW, 1)
    email = ExecutionResult(
        step_id="s1",
        capability="email.send",
        success=True,
        summary="sent",
        args={"to": "dan@example.com", "subject": "Quarterly budget"},
    )
    result = await engine.run_capture(
        remember(user, "Email Dan about the quarterly budget", message_id="m2", results=[email]),
        [],
        "UTC",
        now=NOW + timedelta(hours=1),
    )
    assert result.action == "create" and result.novelty is not None and result.novelty >= 0.25
    assert len(await episodes(stores, user)) == 2


async def test_a_recap_request_is_an_episode(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    request = remember(user, "What did we discuss yesterday?", reply="We set a reminder.")
    result = await make_engine(offline).run_capture(request, [], "UTC", now=NOW)
    assert result.action == "create"
    assert result.memory is not None and "what we talked about before" in result.memory.summary


async def test_another_users_episode_is_not_merged_into(
    make_engine: EngineFactory,
    offline: OfflineChatModel,
    stores: Stores,
    user: UserProfile,
    make_user: object,
) -> None:
    other = await make_user("Someone Else")  # type: ignore[operator]
    engine = make_engine(offline, **NO_COOLDOWN)
    await remind(engine, other, "call my mom", NOW, 1)
    names = await remind(engine, user, "call my mom", NOW + timedelta(minutes=5), 2)
    assert names[-1] == "episodic.create"
    assert len(await episodes(stores, user)) == 1 and len(await episodes(stores, other)) == 1


async def test_the_hot_path_never_writes_an_episode(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, user: UserProfile
) -> None:
    engine = make_engine(offline)
    for n, text in enumerate(["my dog Luna is 3", "Luna turned 4", "Remind me to call mom"]):
        await engine.hotpath(turn(user, text, message_id=f"m{n}"))
    assert await episodes(stores, user) == []


@pytest.mark.parametrize("status", ["expired", "blocked"])
async def test_a_turn_without_actions_is_routine_whatever_its_status(
    status: str, make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    from memoir.models import TurnStatus

    request = remember(user, "Email Dan", status=TurnStatus(status))
    result = await make_engine(offline).run_capture(request, [], "UTC", now=NOW)
    assert result.action == "skip" and "routine" in result.reason


async def test_capture_reads_the_users_timezone_when_none_is_given(
    make_engine: EngineFactory, offline: OfflineChatModel, stores: Stores, make_user: object
) -> None:
    kiri = await make_user("Kiri", timezone="Pacific/Kiritimati")  # type: ignore[operator]
    request = remember(kiri, "Remind me to call my mom", results=[reminder_result("call my mom")])
    late = datetime(2025, 1, 14, 23, 30, tzinfo=UTC)
    result = await make_engine(offline).run_capture(request, [], None, now=late)
    assert result.memory is not None and result.memory.date_iso == date(2025, 1, 15)

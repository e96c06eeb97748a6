"""The engine's three calls, as the activities make them, over one conversation."""

from __future__ import annotations

from datetime import timedelta

from memoir.llm import OfflineChatModel
from memoir.models import UserProfile
from tests.memory.conftest import EngineFactory
from tests.memory.support import NOW, remember, reminder_result, turn


async def test_a_fact_is_remembered_and_retrieved_on_a_later_turn(
    make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    engine = make_engine(offline)
    stated = turn(user, "my dog Luna is 3", message_id="m1")
    hot = await engine.hotpath(stated)
    assert "memory.create" in hot.events
    assert (await engine.capture(remember(user, stated.message.text), [], "UTC", NOW))[-1] == (
        "episodic.skip"
    )
    later = turn(user, "How old is Luna?", message_id="m2", now=NOW + timedelta(minutes=5))
    assert "memory.create" not in (await engine.hotpath(later)).events
    ctx = await engine.context(later)
    assert ctx.bullets[0] == "[2025-01-15] User's dog Luna is 3 years old. [sources: m1]"
    assert ctx.now_line == "Now: Wednesday 2025-01-15 09:35 UTC"
    assert ctx.events == ["memory.search"]


async def test_bullets_can_leave_out_their_sources(
    make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    engine = make_engine(offline)
    engine.cite_sources = False
    await engine.hotpath(turn(user, "I live in Lisbon", message_id="m1"))
    ctx = await engine.context(turn(user, "Where do I live?", message_id="m2"))
    assert ctx.bullets == ["[2025-01-15] User lives in Lisbon."]


async def test_an_action_turn_is_captured_as_an_episode_and_recalled(
    make_engine: EngineFactory, offline: OfflineChatModel, user: UserProfile
) -> None:
    engine = make_engine(offline)
    request = remember(
        user, "Remind me to call my mom at 5pm", results=[reminder_result("call my mom")]
    )
    assert (await engine.capture(request, [], "UTC", NOW))[-1] == "episodic.create"
    tomorrow = NOW + timedelta(days=1)
    ctx = await engine.context(
        turn(user, "What did we discuss yesterday?", message_id="m2", now=tomorrow)
    )
    assert ctx.bullets[0].startswith("On 2025-01-15 (W03, 2025) we discussed a reminder")

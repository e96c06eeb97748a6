"""Long-term memory around real turns: facts corrected in place, recalled into the planner."""

from memoir.memory.models import MemoryKind
from temporal import scenarios as plans
from temporal.harness import Harness


async def _chat(harness: Harness, text: str) -> None:
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send(text)
    await harness.result(routed.turn_id or "")


async def test_fact_correction_across_turns_leaves_one_memory(harness: Harness) -> None:
    await _chat(harness, "my dog Luna is 3")
    await _chat(harness, "Luna turned 4")
    semantic = await harness.stores.memories.list(harness.user.user_id, kind=MemoryKind.SEMANTIC)
    assert len(semantic) == 1
    assert "4" in semantic[0].summary and "3" not in semantic[0].summary


async def test_remembered_fact_reaches_the_planner_prompt(harness: Harness) -> None:
    await _chat(harness, "I live in Lisbon")
    await _chat(harness, "what's a good weekend plan?")
    last_plan = harness.llm.calls_for("Plan")[-1]
    assert "Lisbon" in last_plan.text


async def test_memory_provenance_names_the_message(harness: Harness) -> None:
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send("my partner is called Sam", message_id="prov-1")
    await harness.result(routed.turn_id or "")
    [memory] = await harness.stores.memories.list(harness.user.user_id, kind=MemoryKind.SEMANTIC)
    assert memory.source_message_ids == ["prov-1"]

"""validate_plan / make_plan: invalid steps are dropped and confidence lowered."""

from typing import Any

from memoir.llm import ScriptedChatModel
from memoir.llm.prompts import CAPABILITY_ARGS
from memoir.models import Plan, PlanStep
from memoir.planner import KNOWN_CAPABILITIES, make_plan, validate_plan


def step(
    step_id: str, capability: str = "reminders.list", deps: list[str] | None = None
) -> PlanStep:
    return PlanStep(id=step_id, capability=capability, depends_on=deps or [])


def plan(*steps: PlanStep, **kw: Any) -> Plan:
    return Plan(intent="test", confidence=0.9, steps=list(steps), **kw)


def test_valid_plan_is_unchanged() -> None:
    original = plan(step("s1"), step("s2", deps=["s1"]))
    assert validate_plan(original) == original


def test_dangling_depends_on_drops_the_step_and_lowers_confidence() -> None:
    result = validate_plan(plan(step("s1"), step("s2", deps=["s9"])))
    assert [s.id for s in result.steps] == ["s1"]
    assert result.confidence < 0.9
    assert "s9" in result.reasoning


def test_dropping_a_step_drops_its_dependents_too() -> None:
    result = validate_plan(plan(step("s1", "no.such_tool"), step("s2", deps=["s1"]), step("s3")))
    assert [s.id for s in result.steps] == ["s3"]


def test_unknown_capability_is_dropped() -> None:
    result = validate_plan(plan(step("s1", "shell.exec"), step("s2")))
    assert [s.capability for s in result.steps] == ["reminders.list"]
    assert "shell.exec" in result.reasoning


def test_duplicate_step_id_keeps_the_first() -> None:
    result = validate_plan(plan(step("s1"), step("s1", "reminders.create")))
    assert [s.capability for s in result.steps] == ["reminders.list"]


def test_cycle_is_dropped() -> None:
    result = validate_plan(plan(step("s1", deps=["s2"]), step("s2", deps=["s1"]), step("s3")))
    assert [s.id for s in result.steps] == ["s3"]
    assert "cyclic" in result.reasoning


def test_plan_left_without_steps_gets_low_confidence_and_a_question() -> None:
    result = validate_plan(plan(step("s1", "bogus.tool")))
    assert not result.steps and result.confidence <= 0.3 and result.question


def test_approval_only_capability_forces_needs_approval() -> None:
    result = validate_plan(plan(step("s1", "email.send")))
    assert result.needs_approval and result.risk == "medium"


def test_known_capabilities_match_the_prompt_tool_list() -> None:
    assert set(KNOWN_CAPABILITIES) == set(CAPABILITY_ARGS)


async def test_make_plan_validates_the_model_output(plan_request: Any) -> None:
    llm = ScriptedChatModel(
        responses={
            "Plan": [
                {
                    "intent": "x",
                    "confidence": 0.9,
                    "steps": [
                        {"id": "s1", "capability": "reminders.list"},
                        {"id": "s2", "capability": "reminders.list", "depends_on": ["nope"]},
                    ],
                }
            ]
        },
        on_exhausted="raise",
    )
    result = await make_plan(llm, plan_request("list"), ["reminders.list"])
    assert [s.id for s in result.steps] == ["s1"] and result.confidence < 0.9

"""The gate's pure rules: seed 000's preference table and plan scheduling."""

import pytest

from memoir.models import Decision, PlanStep
from workflows.hitl import preference_for
from workflows.schedule import CyclicPlan, dependency_groups


@pytest.mark.parametrize(
    ("decision", "capability", "namespace"),
    [
        ("edit", "email.send", "response_preferences"),
        ("edit", "calendar.schedule", "cal_preferences"),
        ("response", "email.send", "response_preferences"),
        ("response", "calendar.schedule", "cal_preferences"),
        ("ignore", "email.send", "triage_preferences"),
        ("ignore", "calendar.schedule", "triage_preferences"),
        ("accept", "email.send", None),
        ("edit", "reminders.create", None),
        ("ignore", "reminders.delete", None),
    ],
)
def test_preference_updated_by_each_decision_follows_seed_000(
    decision: str, capability: str, namespace: str | None
) -> None:
    assert preference_for(Decision(type=decision), capability) == namespace  # type: ignore[arg-type]


def step(step_id: str, *depends_on: str) -> PlanStep:
    return PlanStep(id=step_id, capability="reminders.list", depends_on=list(depends_on))


def test_steps_group_by_dependency_level() -> None:
    groups = dependency_groups([step("a"), step("b"), step("c", "a"), step("d", "c", "b")])
    assert [[s.id for s in group] for group in groups] == [["a", "b"], ["c"], ["d"]]


def test_cyclic_plan_is_refused() -> None:
    with pytest.raises(CyclicPlan, match="cycle"):
        dependency_groups([step("a", "b"), step("b", "a")])


def test_unknown_dependency_is_refused() -> None:
    with pytest.raises(CyclicPlan, match="unknown"):
        dependency_groups([step("a", "zz")])

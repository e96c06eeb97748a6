"""The memory eval: scenarios load, checks are scored right, the CLI prints the figures.

These tests check the scoring, not how well the engine does: a deliberately wrong expectation
must cost exactly one decision, a missing fragment must be a miss.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from memoir.cli import app
from memoir.llm import OfflineChatModel
from memoir.memory.evaluation import (
    DecisionCheck,
    EvalReport,
    ScenarioResult,
    as_decision,
    load_scenarios,
    recall_check,
    run_memory_eval,
)
from memoir.models import UserProfile
from tests.memory.conftest import EngineFactory

SUBSET = ("luna-turns-4", "yesterday")


def check(expected: str, actual: str) -> DecisionCheck:
    return DecisionCheck(0, "text", "semantic", expected, actual)  # type: ignore[arg-type]


def test_hotpath_update_is_a_merge_and_the_gate_saying_no_is_a_skip() -> None:
    assert [as_decision(a) for a in ("create", "update", "skip", "none")] == [
        "create",
        "merge",
        "skip",
        "skip",
    ]


def test_recall_is_a_hit_only_with_every_fragment_and_no_rejected_one() -> None:
    bullets = ["User's dog Luna is 4 years old. [sources: m1, m2]", "User lives in Porto."]
    assert recall_check(0, "q", ["4 years", "porto"], [], bullets).hit
    missing = recall_check(0, "q", ["4 years", "Lisbon"], [], bullets)
    assert (missing.hit, missing.missing) == (False, ("Lisbon",))
    unwanted = recall_check(0, "q", ["4 years"], ["Porto"], bullets)
    assert (unwanted.hit, unwanted.unwanted) == (False, ("Porto",))


def test_recall_does_not_search_the_source_citations() -> None:
    bullets = ["User lives in Porto. [sources: lisbon-1]"]
    assert recall_check(0, "q", ["Porto"], ["lisbon"], bullets).hit
    assert not recall_check(0, "q", ["m1"], [], ["User lives in Porto. [sources: m1]"]).hit


def test_report_figures_are_ratios_over_every_check_of_every_scenario() -> None:
    first = ScenarioResult("a", "x", decisions=[check("create", "create"), check("merge", "skip")])
    second = ScenarioResult("b", "x", decisions=[check("skip", "skip")])
    second.recalls = [
        recall_check(0, "q", ["yes"], [], ["yes"]),
        recall_check(1, "q", ["no"], [], []),
    ]
    report = EvalReport([first, second])
    assert report.decision_accuracy == pytest.approx(2 / 3)
    assert report.retrieval_hit_rate == pytest.approx(1 / 2)
    assert (first.decision_accuracy, first.retrieval_hit_rate) == (0.5, None)
    assert first.failures() == ["#0 semantic: expected merge, got skip"]
    figures = report.to_dict()
    assert figures["decisions"] == {"correct": 2, "total": 3}
    assert figures["recalls"] == {"hits": 1, "total": 2}
    assert [s["name"] for s in figures["scenarios"]] == ["a", "b"]


def test_an_empty_report_has_no_figures() -> None:
    assert (EvalReport([]).decision_accuracy, EvalReport([]).retrieval_hit_rate) == (None, None)


def test_bundled_scenarios_load_and_each_checks_something() -> None:
    scenarios = load_scenarios()
    assert len({s.name for s in scenarios}) == len(scenarios) >= 10
    assert {"correction", "paraphrase", "contradiction", "recall"} <= {
        s.category for s in scenarios
    }
    for scenario in scenarios:
        assert any(s.semantic or s.episodic or s.recall for s in scenario.steps), scenario.name
    assert [s.name for s in load_scenarios(names=SUBSET)] == list(SUBSET)
    with pytest.raises(ValueError, match="unknown scenario"):
        load_scenarios(names=["nope"])


@pytest.fixture
def new_user(make_user: Callable[..., Any]) -> Callable[[str, str], Any]:
    async def make(name: str, timezone: str) -> UserProfile:
        profile: UserProfile = await make_user(name, timezone=timezone)
        return profile

    return make


async def test_the_subset_scores_one_check_per_expectation(
    make_engine: EngineFactory, offline: OfflineChatModel, new_user: Callable[[str, str], Any]
) -> None:
    scenarios = load_scenarios(names=SUBSET)
    seen: list[str] = []
    report = await run_memory_eval(
        make_engine(offline), scenarios, new_user, lambda r: seen.append(r.name)
    )
    assert seen == list(SUBSET)
    for scenario, result in zip(scenarios, report.scenarios, strict=True):
        expected = sum((s.semantic is not None) + (s.episodic is not None) for s in scenario.steps)
        assert len(result.decisions) == expected
        assert len(result.recalls) == sum(bool(s.recall) for s in scenario.steps)
    decisions = report.decisions
    assert report.decision_accuracy == sum(c.ok for c in decisions) / len(decisions)


async def test_a_deliberately_wrong_expectation_costs_exactly_one_decision(
    make_engine: EngineFactory, offline: OfflineChatModel, new_user: Callable[[str, str], Any]
) -> None:
    [scenario] = load_scenarios(names=["luna-turns-4"])
    engine = make_engine(offline)
    honest = (await run_memory_eval(engine, [scenario], new_user)).scenarios[0]
    target = honest.decisions[1]
    wrong = next(d for d in ("create", "merge", "skip") if d != target.actual)
    steps = list(scenario.steps)
    steps[target.step] = steps[target.step].model_copy(update={target.stage: wrong})
    altered = scenario.model_copy(update={"steps": steps})
    result = (await run_memory_eval(engine, [altered], new_user)).scenarios[0]
    assert [c.actual for c in result.decisions] == [c.actual for c in honest.decisions]
    assert result.correct == honest.correct - target.ok
    assert not result.decisions[1].ok
    assert f"expected {wrong}, got {target.actual}" in result.failures()[-1]


async def test_a_fragment_no_memory_holds_is_a_retrieval_miss(
    make_engine: EngineFactory, offline: OfflineChatModel, new_user: Callable[[str, str], Any]
) -> None:
    [scenario] = load_scenarios(names=["luna-turns-4"])
    last = scenario.steps[-1].model_copy(update={"recall": ["a unicorn"], "reject": []})
    altered = scenario.model_copy(update={"steps": [*scenario.steps[:-1], last]})
    report = await run_memory_eval(make_engine(offline), [altered], new_user)
    [miss] = report.recalls
    assert (miss.hit, miss.missing) == (False, ("a unicorn",))
    assert report.retrieval_hit_rate == 0.0


def test_cli_eval_memory_prints_the_figures_as_json_and_exits_0() -> None:
    result = CliRunner().invoke(app, ["eval", "memory", "--scenario", "luna-turns-4", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert figures["decisions"]["total"] == 3 and figures["recalls"]["total"] == 1
    assert [s["name"] for s in figures["scenarios"]] == ["luna-turns-4"]
    assert 0.0 <= figures["decision_accuracy"] <= 1.0

"""The memory evaluation (`memoir eval memory`): scripted conversations through `MemoryEngine`.

A scenario is one conversation of one fresh user (`memoir/data/memory_eval.json`). Each step is
a user message, handled as a turn handles it: the semantic hot path (stage 2), the memory
context (stage 3, only when the step checks retrieval) and episodic capture (stage 12, with the
step's executed actions). A step runs at the scenario's `now`, `days_ago` days and `hours_ago`
hours earlier, plus `STEP_SPACING` per step index (so same-day steps are minutes apart).

Scoring:
- merge-decision accuracy: each `semantic` / `episodic` expectation (create, merge or skip)
  against the engine's decision (the hot path's `update` is a merge; its `none`, the gate
  saying no, is a skip);
Each step's message and reply are also kept as message records (as the remember stage keeps
them), so retrieval sees what was said as well as the facts and episodes made of it.

- retrieval hit rate: a step with `recall` fragments is a hit when each is found
  (case-insensitively) in one of the context bullets and no `reject` fragment is (a bullet's
  `[sources: …]` citation is not searched).

This module orchestrates and scores only: the caller gives the engine (its stores, model and
embedder) and makes the users.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memoir.memory.engine import MemoryEngine
from memoir.memory.records import embed_records, turn_records
from memoir.models import (
    ExecutionResult,
    IncomingMessage,
    RecentMessage,
    RememberRequest,
    TurnContext,
    TurnRequest,
    TurnStatus,
    UserProfile,
    names,
)

__all__ = [
    "STEP_SPACING",
    "DecisionCheck",
    "EvalAction",
    "EvalReport",
    "EvalStep",
    "NewUser",
    "RecallCheck",
    "Scenario",
    "ScenarioResult",
    "as_decision",
    "load_scenarios",
    "recall_check",
    "remember_request",
    "run_memory_eval",
    "run_scenario",
    "turn_request",
]

Decision = Literal["create", "merge", "skip"]
Stage = Literal["semantic", "episodic"]
NewUser = Callable[[str, str], Awaitable[UserProfile]]  # (name, timezone) → a fresh user

STEP_SPACING = timedelta(minutes=15)
# Wednesday 15 January 2025, 09:30 UTC: "on Monday" is the 13th, "last week" is W02.
DEFAULT_NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)
THREAD_ID = "eval"
RECENT_LIMIT = 6  # earlier messages of the conversation a turn sees
_SOURCES = re.compile(r"\s*\[sources: [^\]]*\]$")  # a bullet's citation, not its memory text

_HOTPATH_DECISIONS: dict[str, Decision] = {
    "create": "create",
    "update": "merge",
    "skip": "skip",
    "none": "skip",
}


class EvalAction(BaseModel):
    """A step the turn executed (what episodic capture summarises)."""

    model_config = ConfigDict(extra="forbid")

    capability: str
    args: dict[str, Any] = Field(default_factory=dict)
    success: bool = True
    summary: str = ""


class EvalStep(BaseModel):
    """One user message and what the engine should do with it."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    days_ago: int = Field(0, ge=0)
    hours_ago: int = Field(0, ge=0)
    reply: str = "Done."
    actions: list[EvalAction] = Field(default_factory=list)
    semantic: Decision | None = Field(None, description="Expected hot-path decision.")
    episodic: Decision | None = Field(None, description="Expected capture decision.")
    recall: list[str] = Field(default_factory=list, description="Fragments the bullets must hold.")
    reject: list[str] = Field(default_factory=list, description="Fragments they must not hold.")

    @model_validator(mode="after")
    def _reject_needs_recall(self) -> EvalStep:
        if self.reject and not self.recall:
            raise ValueError("`reject` needs `recall` (a retrieval check)")
        return self


class Scenario(BaseModel):
    """One conversation of one user."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    category: str
    description: str = ""
    timezone: str = "UTC"
    now: datetime = DEFAULT_NOW
    steps: list[EvalStep] = Field(min_length=1)


class _ScenarioFile(BaseModel):
    scenarios: list[Scenario]


@dataclass(frozen=True)
class DecisionCheck:
    """An expected decision against the engine's."""

    step: int
    text: str
    stage: Stage
    expected: Decision
    actual: Decision
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.expected == self.actual

    def describe(self) -> str:
        """e.g. `#2 semantic: expected merge, got create (a new fact)`."""
        why = f" ({self.reason})" if self.reason else ""
        return f"#{self.step} {self.stage}: expected {self.expected}, got {self.actual}{why}"


@dataclass(frozen=True)
class RecallCheck:
    """Expected (and rejected) fragments against the context's bullets."""

    step: int
    text: str
    expected: tuple[str, ...]
    rejected: tuple[str, ...]
    bullets: tuple[str, ...]
    missing: tuple[str, ...]
    unwanted: tuple[str, ...]

    @property
    def hit(self) -> bool:
        return not self.missing and not self.unwanted

    def describe(self) -> str:
        """e.g. `#3 recall: missing '4 years'; unwanted '3 years'`."""
        parts = [f"missing {f!r}" for f in self.missing]
        parts += [f"unwanted {f!r}" for f in self.unwanted]
        return f"#{self.step} recall: {'; '.join(parts) or 'hit'}"


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class ScenarioResult:
    """The checks of one scenario."""

    name: str
    category: str
    decisions: list[DecisionCheck] = field(default_factory=list)
    recalls: list[RecallCheck] = field(default_factory=list)

    @property
    def correct(self) -> int:
        return sum(check.ok for check in self.decisions)

    @property
    def hits(self) -> int:
        return sum(check.hit for check in self.recalls)

    @property
    def decision_accuracy(self) -> float | None:
        return _ratio(self.correct, len(self.decisions))

    @property
    def retrieval_hit_rate(self) -> float | None:
        return _ratio(self.hits, len(self.recalls))

    def failures(self) -> list[str]:
        """Every failed check, described."""
        wrong = [c.describe() for c in self.decisions if not c.ok]
        return wrong + [c.describe() for c in self.recalls if not c.hit]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "decisions": {"correct": self.correct, "total": len(self.decisions)},
            "decision_accuracy": self.decision_accuracy,
            "recalls": {"hits": self.hits, "total": len(self.recalls)},
            "retrieval_hit_rate": self.retrieval_hit_rate,
            "failures": self.failures(),
        }


@dataclass
class EvalReport:
    """Every scenario's checks and the two figures over all of them."""

    scenarios: list[ScenarioResult]

    @property
    def decisions(self) -> list[DecisionCheck]:
        return [check for result in self.scenarios for check in result.decisions]

    @property
    def recalls(self) -> list[RecallCheck]:
        return [check for result in self.scenarios for check in result.recalls]

    @property
    def decision_accuracy(self) -> float | None:
        """Correct decisions / expected decisions (None when nothing was expected)."""
        checks = self.decisions
        return _ratio(sum(c.ok for c in checks), len(checks))

    @property
    def retrieval_hit_rate(self) -> float | None:
        """Hits / retrieval checks (None when there were none)."""
        checks = self.recalls
        return _ratio(sum(c.hit for c in checks), len(checks))

    def to_dict(self) -> dict[str, Any]:
        decisions, recalls = self.decisions, self.recalls
        return {
            "decision_accuracy": self.decision_accuracy,
            "decisions": {"correct": sum(c.ok for c in decisions), "total": len(decisions)},
            "retrieval_hit_rate": self.retrieval_hit_rate,
            "recalls": {"hits": sum(c.hit for c in recalls), "total": len(recalls)},
            "scenarios": [result.to_dict() for result in self.scenarios],
        }


def as_decision(hotpath_action: str) -> Decision:
    """The hot path's action as an eval decision: update → merge, none (gate said no) → skip."""
    return _HOTPATH_DECISIONS[hotpath_action]


def recall_check(
    step: int, text: str, expected: Sequence[str], rejected: Sequence[str], bullets: Sequence[str]
) -> RecallCheck:
    """Which expected fragments no bullet's text holds and which rejected ones one does (the
    bullets' `[sources: …]` citations are not searched)."""
    lowered = [_SOURCES.sub("", b).casefold() for b in bullets]

    def found(fragment: str) -> bool:
        return any(fragment.casefold() in b for b in lowered)

    return RecallCheck(
        step=step,
        text=text,
        expected=tuple(expected),
        rejected=tuple(rejected),
        bullets=tuple(bullets),
        missing=tuple(f for f in expected if not found(f)),
        unwanted=tuple(f for f in rejected if found(f)),
    )


def load_scenarios(path: Path | None = None, names: Sequence[str] = ()) -> list[Scenario]:
    """The scenarios in `path` (default: the bundled set), only those in `names` if given."""
    if path is None:
        text = (resources.files("memoir") / "data" / "memory_eval.json").read_text("utf-8")
    else:
        text = path.read_text(encoding="utf-8")
    scenarios = _ScenarioFile.model_validate(json.loads(text)).scenarios
    if not names:
        return scenarios
    unknown = set(names) - {s.name for s in scenarios}
    if unknown:
        raise ValueError(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return [s for s in scenarios if s.name in names]


def turn_request(message: IncomingMessage, context: TurnContext) -> TurnRequest:
    """The stage input of a turn for `message`, with the turn id the thread workflow gives it."""
    turn_id = names.turn_workflow_id(message.user_id, message.thread_id, message.message_id)
    return TurnRequest(turn_id=turn_id, message=message, context=context)


def remember_request(
    turn: TurnRequest, reply: str, results: Sequence[ExecutionResult] = ()
) -> RememberRequest:
    """Stage 12's input for a completed turn: the message, the reply, what was executed."""
    return RememberRequest(
        turn_id=turn.turn_id,
        message=turn.message,
        reply=reply,
        results=list(results),
        status=TurnStatus.COMPLETED,
    )


def _turn(
    user: UserProfile, index: int, step: EvalStep, at: datetime, recent: Sequence[RecentMessage]
) -> TurnRequest:
    message = IncomingMessage(
        user_id=user.user_id,
        thread_id=THREAD_ID,
        message_id=f"msg-{index}",
        text=step.text,
        received_at=at,
    )
    context = TurnContext(user=user, now=at, recent_messages=list(recent)[-RECENT_LIMIT:])
    return turn_request(message, context)


def _remember(turn: TurnRequest, step: EvalStep) -> RememberRequest:
    results = [
        ExecutionResult(
            step_id=f"s{n}",
            capability=action.capability,
            success=action.success,
            summary=action.summary or action.capability,
            args=action.args,
        )
        for n, action in enumerate(step.actions, start=1)
    ]
    return remember_request(turn, step.reply, results)


async def _keep_records(engine: MemoryEngine, request: RememberRequest, at: datetime) -> None:
    """The step's message and reply as message records, as the remember stage writes them."""
    records = turn_records(request, user_name=None, now=at)
    for record, embedding in zip(
        records, await embed_records(engine.embedder, records), strict=True
    ):
        await engine.records.add(record, embedding)


async def run_scenario(
    engine: MemoryEngine, scenario: Scenario, user: UserProfile
) -> ScenarioResult:
    """Every step of the scenario as a turn of `user`; the checks it asked for."""
    result = ScenarioResult(scenario.name, scenario.category)
    recent: list[RecentMessage] = []
    for index, step in enumerate(scenario.steps):
        ago = timedelta(days=step.days_ago, hours=step.hours_ago)
        at = scenario.now - ago + index * STEP_SPACING
        turn = _turn(user, index, step, at, recent)
        hot = await engine.run_hotpath(turn)
        if step.semantic is not None:
            actual = as_decision(hot.action)
            result.decisions.append(
                DecisionCheck(index, step.text, "semantic", step.semantic, actual, hot.reason)
            )
        if step.recall:
            ctx = await engine.run_context(turn)
            result.recalls.append(
                recall_check(index, step.text, step.recall, step.reject, ctx.bullets)
            )
        recent.append(RecentMessage(role="user", content=step.text, at=at))
        recent.append(RecentMessage(role="assistant", content=step.reply, at=at))
        request = _remember(turn, step)
        await _keep_records(engine, request, at)
        captured = await engine.run_capture(request, recent, scenario.timezone, at)
        if step.episodic is not None:
            result.decisions.append(
                DecisionCheck(
                    index, step.text, "episodic", step.episodic, captured.action, captured.reason
                )
            )
    return result


async def run_memory_eval(
    engine: MemoryEngine,
    scenarios: Sequence[Scenario],
    new_user: NewUser,
    on_scenario: Callable[[ScenarioResult], None] | None = None,
) -> EvalReport:
    """Each scenario with a fresh user, in order; `on_scenario` hears of each one done."""
    results = []
    for scenario in scenarios:
        user = await new_user(f"Eval {scenario.name}", scenario.timezone)
        result = await run_scenario(engine, scenario, user)
        results.append(result)
        if on_scenario is not None:
            on_scenario(result)
    return EvalReport(results)

"""`memoir bench hitl`: how soon a turn resumes once a person's answer arrives.

Each trial is a chat turn on a thread of its own that asks for approval (an `email.send` plan,
scripted so it is instant; everything else is real), answered either in the inbox
(`POST /v1/inbox/{hitl_id}` accept) or on the thread (`POST /v1/messages` "yes", which the
thread workflow routes to the waiting turn). Once the question is pending, the bench waits a
moment (no answer comes faster), notes the wall-clock time and sends the answer. Resume latency:
the turn's first ActivityTaskStarted event after its answer signal (or, if a local activity
comes first, the WorkflowTaskStarted that ran it) minus that send time; both clocks are this
machine's. Also reported: send → the WorkflowExecutionSignaled event, signal → activity start,
and the answer request's HTTP round trip.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from memoir.benchmarks.bench_stack import BenchStack, bench_stack
from memoir.benchmarks.measure import (
    answer_and_resume,
    choices,
    event_seconds,
    history_events,
    latency_summary,
)
from memoir.benchmarks.turns import environment, wait_for_turn
from memoir.models import TurnStatus, names
from memoir.settings import Settings
from temporal import scenarios

Source = Literal["inbox", "chat"]
Say = Callable[[str], None]
REQUEST = "email dan@example.com saying hi"
THINK_TIME = 0.1  # seconds between the question showing and the answer being sent
PENDING_WAIT = 30.0


@dataclass
class HitlConfig:
    trials: int = 50
    sources: tuple[Source, ...] = ("inbox", "chat")

    @classmethod
    def parse(cls, trials: int, sources: str) -> HitlConfig:
        """From the command line's strings ("inbox,chat"); ValueError if bad."""
        return cls(trials, choices(sources, get_args(Source), "sources"))  # type: ignore[arg-type]


@dataclass
class SourceResult:
    source: Source
    resume: list[float] = field(default_factory=list)
    signal: list[float] = field(default_factory=list)
    signal_to_activity: list[float] = field(default_factory=list)
    http: list[float] = field(default_factory=list)
    failed: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "trials": len(self.resume),
            "resume": latency_summary(self.resume),
            "signal": latency_summary(self.signal),
            "signal_to_activity": latency_summary(self.signal_to_activity),
            "http": latency_summary(self.http),
            "failed": self.failed,
        }


async def pending_question(bench: BenchStack, turn_id: str) -> str:
    """Poll `GET /v1/turns/{id}` until the turn waits on a person; the request's id."""
    deadline = time.monotonic() + PENDING_WAIT
    while time.monotonic() < deadline:
        response = await bench.http.get(f"/v1/turns/{turn_id}")
        if response.status_code == 200:
            view = response.json()
            if view["status"] == TurnStatus.AWAITING_HUMAN.value and view.get("pending"):
                return str(view["pending"]["hitl_id"])
            if view["status"] not in (TurnStatus.RUNNING.value, TurnStatus.AWAITING_HUMAN.value):
                raise RuntimeError(f"turn {turn_id} ended {view['status']} without asking")
        await asyncio.sleep(0.01)
    raise TimeoutError(f"turn {turn_id} asked nothing within {PENDING_WAIT:.0f} s")


async def trial(bench: BenchStack, source: Source, thread: str, result: SourceResult) -> None:
    """One approval asked and answered; adds the trial's figures to `result`."""
    if bench.llm.remaining("Plan") < 1:
        bench.llm.script("Plan", scenarios.send_email())
    body = {"thread_id": thread, "message_id": "ask", "text": REQUEST}
    response = await bench.http.post("/v1/messages", json=body)
    response.raise_for_status()
    turn_id = response.json()["turn_id"]
    hitl_id = await pending_question(bench, turn_id)
    await asyncio.sleep(THINK_TIME)
    sent = time.time()
    if source == "inbox":
        answer = await bench.http.post(f"/v1/inbox/{hitl_id}", json={"type": "accept"})
    else:
        body = {"thread_id": thread, "message_id": "answer", "text": "yes"}
        answer = await bench.http.post("/v1/messages", json=body)
    result.http.append(time.time() - sent)
    answer.raise_for_status()
    outcome = await wait_for_turn(bench.client, turn_id)
    found = answer_and_resume(await history_events(bench.client, turn_id), names.TURN_ANSWER_SIGNAL)
    if outcome.status is not TurnStatus.COMPLETED or found is None:
        result.failed += 1
        return
    signal, started = found
    result.resume.append(event_seconds(started) - sent)
    result.signal.append(event_seconds(signal) - sent)
    result.signal_to_activity.append(event_seconds(started) - event_seconds(signal))


async def run_hitl(
    base: Settings, config: HitlConfig, *, say: Say = print, data_dir: Path | None = None
) -> dict[str, Any]:
    """Start the stack, run the trials of each answer source, return the report."""
    started = environment()
    results: list[SourceResult] = []
    tag = uuid.uuid4().hex[:6]
    async with bench_stack(base, data_dir=data_dir, say=say, with_langgraph=False) as bench:
        say("warming up (one approval answered in the inbox)")
        await trial(bench, "inbox", f"bench-{tag}-hitl-warm", SourceResult("inbox"))
        for source in config.sources:
            result = SourceResult(source)
            step = max(1, config.trials // 5)
            for index in range(config.trials):
                await trial(bench, source, f"bench-{tag}-hitl-{source}-{index}", result)
                if (index + 1) % step == 0 or index + 1 == config.trials:
                    p50 = latency_summary(result.resume)["p50_ms"]
                    say(f"  {source} answers: {index + 1}/{config.trials}, resume p50 {p50:.0f} ms")
            results.append(result)
    return {
        "benchmark": "hitl",
        "config": {**asdict(config), "sources": list(config.sources)},
        "environment": {"start": started, "end": environment()},
        "sources": [r.summary() for r in results],
    }

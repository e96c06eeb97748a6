"""`memoir bench turns`: turns through the real HTTP API and the full pipeline, beside the same
stages as a LangGraph graph over PostgresSaver, sequential and with several turns in flight.

A phase is (system, kind, in flight): `in_flight` conversation threads of their own, each
running its share of the phase's turns one after another (a closed loop), after one warm-up turn
per thread that is not counted (it starts the thread workflow). A Memoir turn is timed from
sending `POST /v1/messages` (or `/v1/emails`) to the turn workflow's result arriving by the
Temporal client's long poll (the API has no wait; polling `GET /v1/turns/{id}` would cost a
workflow query per poll); a LangGraph turn from sending its `POST /bench/langgraph/...` to the
answer, which comes when the graph has run. Chat turns use the offline provider; email turns a
scripted model whose triage (respond), plan (no steps) and reply are instant.
"""

from __future__ import annotations

import asyncio
import platform
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

import httpx
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from memoir.benchmarks.bench_stack import BenchStack, bench_stack, script_email_turns
from memoir.benchmarks.langgraph_pipeline import Durability, checkpoint_cost
from memoir.benchmarks.measure import (
    HistoryCost,
    choices,
    cpu_per_turn,
    history_events,
    latency_summary,
    thread_cpu_seconds,
    thread_segments,
    threads_per_turn,
)
from memoir.models import TurnResult, TurnStatus, names
from memoir.settings import Settings

System = Literal["memoir", "langgraph"]
Kind = Literal["chat", "email"]
Say = Callable[[str], None]
WAIT_FOR_TURN = 120.0  # seconds a turn may take before the phase fails
SETTLE = 1.0  # seconds after a phase before its histories are read


@dataclass
class TurnsConfig:
    """What `memoir bench turns` runs."""

    turns: int = 50
    in_flight: tuple[int, ...] = (1, 8, 16)
    kinds: tuple[Kind, ...] = ("chat", "email")
    systems: tuple[System, ...] = ("memoir", "langgraph")
    chat_text: str = "Hi there!"
    durability: Durability = "sync"
    histories: bool = True

    @classmethod
    def parse(
        cls, turns: int, in_flight: str, kinds: str, systems: str, text: str, durability: str
    ) -> TurnsConfig:
        """From the command line's strings ("1,8,16", "chat,email", ...); ValueError if bad."""
        levels = tuple(int(n) for n in in_flight.split(",") if n.strip())
        if not levels or min(levels) < 1:
            raise ValueError(f"in flight: expected numbers >= 1, got {in_flight!r}")
        return cls(
            turns=turns,
            in_flight=levels,
            kinds=choices(kinds, get_args(Kind), "kinds"),  # type: ignore[arg-type]
            systems=choices(systems, get_args(System), "systems"),  # type: ignore[arg-type]
            chat_text=text,
            durability=choices(durability, get_args(Durability), "durability")[0],  # type: ignore[arg-type]
        )


@dataclass
class Phase:
    """One phase's figures."""

    system: System
    kind: Kind
    in_flight: int
    turns: int
    wall_s: float
    latency: dict[str, float]
    turns_per_s: float
    cpu_ms_per_turn: dict[str, float | None]
    # This process's part by thread (`thread_group`: main, sdk_core, workflow, other); threads
    # that ended during the phase are left out.
    process_threads_ms_per_turn: dict[str, float] = field(default_factory=dict)
    # Memoir: Temporal history per turn (turn workflow + its part of the thread's history);
    # LangGraph: checkpointer rows and bytes per turn.
    storage_per_turn: dict[str, float] = field(default_factory=dict)
    failed: int = 0
    scripted_plans: int = 0  # plans the scripted model answered (email turns: one each)

    def row(self) -> dict[str, Any]:
        return asdict(self)


# ----- one turn ------------------------------------------------------------------------------


def chat_body(thread_id: str, message_id: str, text: str) -> dict[str, str]:
    return {"thread_id": thread_id, "message_id": message_id, "text": text}


def memoir_thread(kind: Kind, thread: str) -> str:
    """The thread id Memoir files a message under (an email's is `email-` + its thread id)."""
    return thread if kind == "chat" else f"email-{thread}"


def email_body(thread_id: str, message_id: str, reference: str = "") -> dict[str, str]:
    """A Gmail-shaped email on thread `thread_id` (Memoir's thread id: `email-{thread_id}`),
    its body signed off with `reference`."""
    return {
        "id": message_id,
        "threadId": thread_id,
        "from": "Alice Martin <alice@example.com>",
        "to": "bench@example.com",
        "subject": "Lunch on Friday?",
        "body": f"Hi! Are you free for lunch on Friday at noon? The usual place. Alice {reference}",
    }


async def wait_for_turn(client: Client, turn_id: str, timeout: float = WAIT_FOR_TURN) -> TurnResult:
    """The turn workflow's result, by the client's long poll (retried until the thread has
    started the turn: the submit update answers before the child workflow exists)."""
    handle = client.get_workflow_handle(turn_id, result_type=TurnResult)
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await asyncio.wait_for(handle.result(), max(0.1, deadline - time.monotonic()))
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.002)


async def memoir_turn(
    bench: BenchStack, kind: Kind, thread: str, message_id: str, text: str
) -> str:
    """Send one message (`text`: a chat's text, an email's sign-off) through the API and wait
    for its turn; its final status."""
    if kind == "chat":
        response = await bench.http.post("/v1/messages", json=chat_body(thread, message_id, text))
    else:
        response = await bench.http.post("/v1/emails", json=email_body(thread, message_id, text))
    _check(response)
    turn_id = response.json()["turn_id"]
    result = await wait_for_turn(bench.client, turn_id)
    return result.status.value if result.reply or kind == "email" else "no reply"


async def langgraph_turn(
    bench: BenchStack, kind: Kind, thread: str, message_id: str, text: str
) -> str:
    """Send one message to the LangGraph route, which answers when the graph has run."""
    if kind == "chat":
        body = chat_body(thread, message_id, text)
        response = await bench.http.post("/bench/langgraph/messages", json=body)
    else:
        response = await bench.http.post(
            "/bench/langgraph/emails", json=email_body(thread, message_id, text)
        )
    _check(response)
    status: str = response.json()["status"]
    return status


def _check(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise RuntimeError(f"{response.request.url.path}: {response.status_code} {response.text}")


# ----- one phase -----------------------------------------------------------------------------


@dataclass
class PhaseRun:
    """A phase being run: its threads, the turns' ids and latencies, progress output."""

    bench: BenchStack
    system: System
    kind: Kind
    in_flight: int
    turns: int
    text: str
    say: Say
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    latencies: list[float] = field(default_factory=list)
    message_ids: list[tuple[str, str]] = field(default_factory=list)  # (thread, message id)
    failed: int = 0

    @property
    def name(self) -> str:
        return f"{self.system} {self.kind} x{self.in_flight}"

    def thread(self, slot: int) -> str:
        return f"bench-{self.tag}-{self.system}-{self.kind}-{self.in_flight}-{slot}"

    def said(self, index: int) -> str:
        """Turn `index`'s text (an email's sign-off): the phase's text, made unique, so that no
        turn finds its embeddings remembered from an earlier one (real messages differ)."""
        reference = f"({self.tag}-{index})"
        return f"{self.text} {reference}" if self.kind == "chat" else reference

    async def one(self, slot: int, index: int) -> float:
        """Run one turn on the slot's thread; its latency in seconds."""
        run = memoir_turn if self.system == "memoir" else langgraph_turn
        thread, message_id = self.thread(slot), f"m{index}"
        start = time.perf_counter()
        status = await run(self.bench, self.kind, thread, message_id, self.said(index))
        elapsed = time.perf_counter() - start
        if status != TurnStatus.COMPLETED.value:
            self.failed += 1
            self.say(f"  {self.name}: turn {thread}/{message_id} ended {status}")
        return elapsed

    async def warm_up(self) -> None:
        await asyncio.gather(*(self.one(slot, -1) for slot in range(self.in_flight)))
        self.failed = 0

    async def measure(self) -> float:
        """Run the phase's turns, `in_flight` at a time; the wall time in seconds."""
        step = max(1, self.turns // 5)

        async def slot_loop(slot: int) -> None:
            for index in range(slot, self.turns, self.in_flight):
                self.latencies.append(await self.one(slot, index))
                self.message_ids.append((self.thread(slot), f"m{index}"))
                done = len(self.latencies)
                if done % step == 0 or done == self.turns:
                    p50 = latency_summary(self.latencies)["p50_ms"]
                    self.say(f"  {self.name}: {done}/{self.turns} turns, p50 {p50:.0f} ms")

        start = time.perf_counter()
        await asyncio.gather(*(slot_loop(slot) for slot in range(self.in_flight)))
        return time.perf_counter() - start


def phase_turns(turns: int, in_flight: int) -> int:
    """`turns` rounded up to a multiple of `in_flight`: every thread runs as many turns."""
    return -(-turns // in_flight) * in_flight


async def run_phase(
    bench: BenchStack, system: System, kind: Kind, in_flight: int, config: TurnsConfig, say: Say
) -> Phase:
    """Warm up, measure, then read what the turns left in storage."""
    turns = phase_turns(config.turns, in_flight)
    run = PhaseRun(bench, system, kind, in_flight, turns, config.chat_text, say)
    if kind == "email":
        script_email_turns(bench.llm, turns + in_flight)
    await run.warm_up()
    threads = [memoir_thread(kind, run.thread(slot)) for slot in range(in_flight)]
    before_storage = await _langgraph_storage(bench, threads) if system == "langgraph" else {}
    plans_left = bench.llm.remaining("Plan")
    before, threads_before = bench.meter.sample(), thread_cpu_seconds()
    wall = await run.measure()
    after, threads_after = bench.meter.sample(), thread_cpu_seconds()
    scripted_plans = plans_left - bench.llm.remaining("Plan")
    storage: dict[str, float] = {}
    if system == "langgraph":
        after_storage = await _langgraph_storage(bench, threads)
        storage = {
            f"checkpoint_{k}": round((after_storage[k] - before_storage[k]) / turns, 1)
            for k in after_storage
        }
    elif config.histories:
        storage = await _memoir_storage(bench, kind, run.message_ids)
    return Phase(
        system=system,
        kind=kind,
        in_flight=in_flight,
        turns=turns,
        wall_s=round(wall, 3),
        latency=latency_summary(run.latencies),
        turns_per_s=round(turns / wall, 2),
        cpu_ms_per_turn=cpu_per_turn(before, after, turns),
        process_threads_ms_per_turn=threads_per_turn(threads_before, threads_after, turns),
        storage_per_turn=storage,
        failed=run.failed,
        scripted_plans=scripted_plans,
    )


async def _langgraph_storage(bench: BenchStack, threads: list[str]) -> dict[str, int]:
    return await checkpoint_cost(bench.stores.pool, [f"{bench.user_id}:{t}" for t in threads])


async def _memoir_storage(
    bench: BenchStack, kind: Kind, message_ids: list[tuple[str, str]]
) -> dict[str, float]:
    """Mean history per turn: the turn workflow's whole history plus its part of the thread's
    (also shown alone as `thread_events` / `thread_bytes`)."""
    turn_ids = {
        names.turn_workflow_id(bench.user_id, memoir_thread(kind, thread), message_id): (
            memoir_thread(kind, thread)
        )
        for thread, message_id in message_ids
    }
    await asyncio.sleep(SETTLE)  # the threads record the last turns' completion and idle timer
    segments: dict[str, HistoryCost] = {}
    for thread in sorted(set(turn_ids.values())):
        events = await history_events(bench.client, names.thread_workflow_id(bench.user_id, thread))
        segments.update(thread_segments(events))
    turns, threads = HistoryCost(), HistoryCost()
    for turn_id in turn_ids:
        turns += HistoryCost.of(await history_events(bench.client, turn_id))
        threads += segments.get(turn_id, HistoryCost())
    count = len(turn_ids)
    out = {key: round(value / count, 1) for key, value in asdict(turns + threads).items()}
    out["thread_events"] = round(threads.events / count, 1)
    out["thread_bytes"] = round(threads.bytes / count, 1)
    return out


# ----- the benchmark -------------------------------------------------------------------------


def source_commit() -> str | None:
    """The checkout's commit (with `+` when it has uncommitted changes), None outside git."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return None
    return f"{commit}+" if commit and dirty else commit or None


def environment() -> dict[str, Any]:
    """Where the figures come from."""
    import os

    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": source_commit(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


async def run_turns(
    base: Settings,
    config: TurnsConfig,
    *,
    say: Say = print,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    """Start the stack, run every phase (Memoir then LangGraph at each level), return the report."""
    started = environment()
    phases: list[Phase] = []
    with_langgraph = "langgraph" in config.systems
    async with bench_stack(
        base,
        data_dir=data_dir,
        say=say,
        with_langgraph=with_langgraph,
        durability=config.durability,
    ) as bench:
        await _warm_everything(bench, config, say)
        for kind in config.kinds:
            for in_flight in config.in_flight:
                for system in config.systems:
                    turns = phase_turns(config.turns, in_flight)
                    say(f"{system} {kind}: {turns} turns, {in_flight} in flight")
                    phases.append(await run_phase(bench, system, kind, in_flight, config, say))
    return {
        "benchmark": "turns",
        "config": {**asdict(config), "in_flight": list(config.in_flight)},
        "environment": {"start": started, "end": environment()},
        "phases": [p.row() for p in phases],
        "ratios": ratios(phases),
    }


async def _warm_everything(bench: BenchStack, config: TurnsConfig, say: Say) -> None:
    """A few untimed turns of each system: the embedding model, pools, caches."""
    say("warming up (embedding model, pools, worker caches)")
    for system in config.systems:
        run = PhaseRun(bench, system, "chat", 1, 3, config.chat_text, lambda _: None)
        for index in range(3):
            await run.one(0, index)


def ratios(phases: list[Phase]) -> list[dict[str, Any]]:
    """Memoir / LangGraph at each (kind, in flight): latency, throughput, CPU per turn."""
    by_key = {(p.system, p.kind, p.in_flight): p for p in phases}
    out: list[dict[str, Any]] = []
    for (system, kind, in_flight), memoir in by_key.items():
        other = by_key.get(("langgraph", kind, in_flight))
        if system != "memoir" or other is None:
            continue
        out.append(
            {
                "kind": kind,
                "in_flight": in_flight,
                "p50": _ratio(memoir.latency["p50_ms"], other.latency["p50_ms"]),
                "p95": _ratio(memoir.latency["p95_ms"], other.latency["p95_ms"]),
                "turns_per_s": _ratio(memoir.turns_per_s, other.turns_per_s),
                "cpu_per_turn": _ratio(_cpu_total(memoir), _cpu_total(other)),
            }
        )
    return out


def _cpu_total(phase: Phase) -> float | None:
    """CPU per turn of what the system needs: LangGraph needs no Temporal server (its idle
    polling during a LangGraph phase is shown, not counted)."""
    cpu = phase.cpu_ms_per_turn
    parts = [v for k, v in cpu.items() if phase.system == "memoir" or k != "server"]
    return None if any(v is None for v in parts) else sum(v for v in parts if v is not None)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else round(a / b, 2)

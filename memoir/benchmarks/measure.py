"""What the benchmarks measure: latency percentiles, processes' CPU time, Temporal history size."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import psutil
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from memoir.db import Pool
from memoir.models import names

_ACCEPTED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
_CHILD_INITIATED = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
_ACTIVITY_SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
_ACTIVITY_STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
_MARKER = EventType.EVENT_TYPE_MARKER_RECORDED
_WORKFLOW_TASK_SCHEDULED = EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
_WORKFLOW_TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
_WORKFLOW_TASK_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
_SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED


def choices(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Comma-separated `text` as a tuple, each one of `allowed` (ValueError otherwise)."""
    values = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [v for v in values if v not in allowed]
    if unknown or not values:
        raise ValueError(f"{what}: expected some of {', '.join(allowed)}, got {text!r}")
    return values


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max in milliseconds."""
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"p50_ms": math.nan, "p95_ms": math.nan, "mean_ms": math.nan, "max_ms": math.nan}
    return {
        "p50_ms": round(percentile(ms, 50), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "mean_ms": round(sum(ms) / len(ms), 1),
        "max_ms": round(max(ms), 1),
    }


# ----- CPU time ------------------------------------------------------------------------------


def _own_and_reaped(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system + times.children_user + times.children_system)


def tree_cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds of a process, its reaped children and its live descendants."""
    total = _own_and_reaped(process)
    for child in process.children(recursive=True):
        try:
            total += child.cpu_times().user + child.cpu_times().system
        except psutil.NoSuchProcess:
            continue  # exited meanwhile: its time moves to the parent's children_* on reaping
    return total


def temporal_server_process() -> psutil.Process | None:
    """The `temporal server start-dev` this process started (None when it reuses another)."""
    for child in psutil.Process().children(recursive=True):
        try:
            if "start-dev" in child.cmdline():
                return child
        except psutil.Error:
            continue
    return None


async def postgres_process(pool: Pool) -> psutil.Process | None:
    """The postmaster behind `pool`: the parent of one of its backends (None if not local)."""
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
    try:
        backend = psutil.Process(int(row["pid"])) if row else None
        return backend.parent() if backend else None
    except psutil.Error:
        return None


@dataclass
class CpuMeter:
    """CPU seconds of the processes a turn costs: this one (worker + API + client), the Temporal
    dev server and Postgres (each with its children); a process it cannot see counts as None."""

    server: psutil.Process | None
    postgres: psutil.Process | None
    this: psutil.Process = field(default_factory=lambda: psutil.Process(os.getpid()))

    def sample(self) -> dict[str, float | None]:
        """Cumulative CPU seconds per part, now."""
        return {
            "server": _safe(self.server, tree_cpu_seconds),
            "process": _safe(self.this, _own_and_reaped),
            "postgres": _safe(self.postgres, tree_cpu_seconds),
        }


def _safe(process: psutil.Process | None, read: object) -> float | None:
    if process is None:
        return None
    try:
        return read(process)  # type: ignore[operator,no-any-return]
    except psutil.Error:
        return None


def thread_group(tid: int, name: str) -> str:
    """What a thread of this process runs: the event loop (`main`: API, activities, the SDK's
    Python side), the Temporal SDK core (`sdk_core`), workflow code, or `other` threads (the
    embedding model, the offline model, thread pools)."""
    if tid == os.getpid():
        return "main"
    if name.startswith("tokio"):
        return "sdk_core"
    if name.startswith("workflow"):
        return "workflow"
    return "other"


def thread_cpu_seconds() -> dict[str, float]:
    """CPU seconds of this process's live threads by `thread_group` ({} without /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as comm:
                name = comm.read().strip()
        except OSError:
            continue  # the thread ended meanwhile
        group = thread_group(int(tid), name)
        out[group] = out.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def threads_per_turn(
    before: dict[str, float], after: dict[str, float], turns: int
) -> dict[str, float]:
    """Milliseconds of CPU per turn for each thread group (a group new since `before` from 0)."""
    return {
        group: round((end - before.get(group, 0.0)) * 1000 / turns, 1)
        for group, end in sorted(after.items())
    }


def cpu_per_turn(
    before: dict[str, float | None], after: dict[str, float | None], turns: int
) -> dict[str, float | None]:
    """Milliseconds of CPU per turn for each part (None where a part was not measured)."""
    out: dict[str, float | None] = {}
    for part, start in before.items():
        end = after.get(part)
        out[part] = None if start is None or end is None else round((end - start) * 1000 / turns, 1)
    return out


# ----- Temporal histories --------------------------------------------------------------------


@dataclass
class HistoryCost:
    """What part of a workflow history costs: events, bytes, activities, workflow tasks."""

    events: int = 0
    bytes: int = 0
    activities: int = 0
    local_activities: int = 0
    workflow_tasks: int = 0

    @classmethod
    def of(cls, events: Iterable[HistoryEvent]) -> HistoryCost:
        cost = cls()
        for event in events:
            cost.events += 1
            cost.bytes += event.ByteSize()
            cost.activities += event.event_type == _ACTIVITY_SCHEDULED
            cost.local_activities += is_local_activity(event)
            cost.workflow_tasks += event.event_type == _WORKFLOW_TASK_COMPLETED
        return cost

    def __add__(self, other: HistoryCost) -> HistoryCost:
        return HistoryCost(
            self.events + other.events,
            self.bytes + other.bytes,
            self.activities + other.activities,
            self.local_activities + other.local_activities,
            self.workflow_tasks + other.workflow_tasks,
        )


async def history_events(client: Client, workflow_id: str) -> list[HistoryEvent]:
    """Every event of the workflow's latest run."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return list(history.events)


def thread_segments(events: Sequence[HistoryEvent]) -> dict[str, HistoryCost]:
    """A thread workflow's events per turn, named by the child turn each part started.

    A part starts with the workflow task that accepted a message's update (the message
    arriving) and runs up to the next such task: the update, the child's start and completion,
    and the idle timer after it. Events before the first message are under ""; a part that
    started no turn (a duplicate, an answer to a question) joins the turn before it."""
    starts: list[int] = []
    scheduled = 0
    for index, event in enumerate(events):
        if event.event_type == _WORKFLOW_TASK_SCHEDULED:
            scheduled = index
        elif event.event_type == _ACCEPTED and (not starts or scheduled > starts[-1]):
            starts.append(scheduled)
    segments: dict[str, list[HistoryEvent]] = {"": list(events[: starts[0] if starts else None])}
    current = ""
    for start, end in zip(starts, [*starts[1:], len(events)], strict=True):
        part = events[start:end]
        for event in part:
            if event.event_type == _CHILD_INITIATED:
                attributes = event.start_child_workflow_execution_initiated_event_attributes
                current = attributes.workflow_id
                break
        segments.setdefault(current, []).extend(part)
    return {turn: HistoryCost.of(found) for turn, found in segments.items()}


def event_seconds(event: HistoryEvent) -> float:
    """When the server wrote the event, in seconds since the epoch (as `time.time()`)."""
    return float(event.event_time.ToMicroseconds()) / 1e6


def is_local_activity(event: HistoryEvent) -> bool:
    """A local activity's marker (a patch's marker is not one)."""
    return (
        event.event_type == _MARKER
        and event.marker_recorded_event_attributes.marker_name == names.LOCAL_ACTIVITY_MARKER
    )


def answer_and_resume(
    events: Sequence[HistoryEvent], signal_name: str
) -> tuple[HistoryEvent, HistoryEvent] | None:
    """The turn's answer signal and the event where its next activity started: the first
    ActivityTaskStarted after it or, when a local activity (a marker) comes first, the
    WorkflowTaskStarted of the task that ran it."""
    for index, event in enumerate(events):
        if event.event_type != _SIGNALED:
            continue
        if event.workflow_execution_signaled_event_attributes.signal_name != signal_name:
            continue
        task_started: HistoryEvent | None = None
        for later in events[index + 1 :]:
            if later.event_type == _WORKFLOW_TASK_STARTED:
                task_started = later
            elif later.event_type == _ACTIVITY_STARTED:
                return event, later
            elif is_local_activity(later) and task_started is not None:
                return event, task_started
        return None
    return None

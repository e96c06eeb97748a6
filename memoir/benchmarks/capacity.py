"""`python -m memoir.benchmarks.capacity`: what one turn leaves behind, for docs/capacity.md.

On the bench's embedded stack (offline provider; email turns scripted as in `memoir bench
turns`), it runs a few chat turns of typical kinds (small talk, facts about the user, questions,
a reminder) and email turns, one after another, and measures per turn kind: the Postgres rows
and bytes each table gained (`count(*)` and `sum(pg_column_size(row))` before and after, plus
the tables' and indexes' on-disk growth), the Temporal history events by type of the turn
workflows and of their threads, and the CPU of the Temporal server, this process and Postgres.
Writes `capacity.json` and `capacity.md` (default under bench/results/).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType

from memoir.benchmarks.bench_stack import BenchStack, bench_stack, script_email_turns
from memoir.benchmarks.measure import cpu_per_turn, history_events
from memoir.benchmarks.turns import Kind, environment, memoir_thread, memoir_turn
from memoir.db import Pool
from memoir.models import names
from memoir.settings import Settings

# Typical chat turns: small talk, facts about the user, questions about them, a reminder.
CHAT_TEXTS = (
    "Hi there!",
    "My sister Ana lives in Lisbon and works as a nurse.",
    "I started learning the guitar last week.",
    "What do you know about my sister?",
    "Remind me to call the dentist tomorrow at 10am.",
    "I'm allergic to peanuts.",
    "Thanks, that helps.",
    "We're planning a trip to Porto in March.",
    "What am I learning at the moment?",
    "My manager is called Tom Baker.",
)
SETTLE = 1.5  # seconds for threads and background writes to finish before reading


@dataclass
class KindCost:
    """What the turns of one kind cost, in all (divide by `turns` for one)."""

    kind: Kind
    turns: int
    rows: dict[str, int] = field(default_factory=dict)
    row_bytes: dict[str, int] = field(default_factory=dict)
    disk_bytes: dict[str, int] = field(default_factory=dict)
    turn_events: dict[str, int] = field(default_factory=dict)
    thread_events: dict[str, int] = field(default_factory=dict)
    history_bytes: int = 0
    cpu_ms_per_turn: dict[str, float | None] = field(default_factory=dict)


async def table_sizes(pool: Pool) -> dict[str, tuple[int, int, int]]:
    """Per public table: rows, bytes of the rows' values, bytes on disk (heap, TOAST, indexes)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        tables = [row["tablename"] for row in await cursor.fetchall()]
        sizes: dict[str, tuple[int, int, int]] = {}
        for table in tables:
            cursor = await conn.execute(
                f"SELECT count(*) AS n, coalesce(sum(pg_column_size(t.*)), 0) AS b, "  # noqa: S608
                f"pg_total_relation_size('public.{table}') AS d FROM public.{table} t"
            )
            row = await cursor.fetchone()
            assert row is not None
            sizes[table] = (int(row["n"]), int(row["b"]), int(row["d"]))
    return sizes


def _delta(
    before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]], part: int
) -> dict[str, int]:
    out = {t: after[t][part] - before.get(t, (0, 0, 0))[part] for t in after}
    return {t: v for t, v in out.items() if v}


def event_label(event: Any) -> str:
    """The event's type name (`ACTIVITY_TASK_SCHEDULED`, ...); a marker's with its name
    (`MARKER_RECORDED:core_patch`, `MARKER_RECORDED:core_local_activity`)."""
    label = str(EventType.Name(event.event_type)).removeprefix("EVENT_TYPE_")
    if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
        label += ":" + event.marker_recorded_event_attributes.marker_name
    return label


def count_types(events: list[Any]) -> collections.Counter[str]:
    """History events by `event_label`."""
    return collections.Counter(event_label(e) for e in events)


async def run_kind(bench: BenchStack, kind: Kind, turns: int, tag: str) -> KindCost:
    """`turns` turns of one kind on one thread, one after another; what they cost."""
    thread = f"capacity-{tag}-{kind}"
    if kind == "email":
        script_email_turns(bench.llm, turns)
    before_tables = await table_sizes(bench.stores.pool)
    before_cpu = bench.meter.sample()
    turn_ids = []
    for index in range(turns):
        text = CHAT_TEXTS[index % len(CHAT_TEXTS)] if kind == "chat" else ""
        await memoir_turn(bench, kind, thread, f"m{index}", text)
        turn_ids.append(
            names.turn_workflow_id(bench.user_id, memoir_thread(kind, thread), f"m{index}")
        )
    after_cpu = bench.meter.sample()
    await asyncio.sleep(SETTLE)
    after_tables = await table_sizes(bench.stores.pool)
    turn_events: collections.Counter[str] = collections.Counter()
    history_bytes = 0
    for turn_id in turn_ids:
        events = await history_events(bench.client, turn_id)
        turn_events += count_types(events)
        history_bytes += sum(e.ByteSize() for e in events)
    thread_id = names.thread_workflow_id(bench.user_id, memoir_thread(kind, thread))
    thread_history = await history_events(bench.client, thread_id)
    history_bytes += sum(e.ByteSize() for e in thread_history)
    return KindCost(
        kind=kind,
        turns=turns,
        rows=_delta(before_tables, after_tables, 0),
        row_bytes=_delta(before_tables, after_tables, 1),
        disk_bytes=_delta(before_tables, after_tables, 2),
        turn_events=dict(turn_events),
        thread_events=dict(count_types(thread_history)),
        history_bytes=history_bytes,
        cpu_ms_per_turn=cpu_per_turn(before_cpu, after_cpu, turns),
    )


async def run_capacity(base: Settings, chat_turns: int, email_turns: int) -> dict[str, Any]:
    """Start the stack, warm it, measure each kind; the report."""
    started = environment()
    async with bench_stack(base, say=lambda _: None, with_langgraph=False) as bench:
        for index in range(3):  # the embedding model, pools, caches
            await memoir_turn(bench, "chat", "capacity-warm", f"w{index}", "Hi there!")
        costs = [
            await run_kind(bench, "chat", chat_turns, "a"),
            await run_kind(bench, "email", email_turns, "a"),
        ]
    return {
        "benchmark": "capacity",
        "environment": {"start": started, "end": environment()},
        "kinds": [cost.__dict__ for cost in costs],
    }


def _per_turn(values: dict[str, int], turns: int) -> str:
    return ", ".join(f"{k} {v / turns:.2f}" for k, v in sorted(values.items()))


def markdown(report: dict[str, Any]) -> str:
    """The report as markdown: one section per kind, figures per turn."""
    env = report["environment"]["start"]
    lines = [
        f"# Capacity: what one turn leaves behind ({env['when']})",
        "",
        f"{env['cpus']} CPUs, load average at the start {env['load_average']}. "
        "Per turn, turns run one after another on one thread.",
    ]
    for cost in report["kinds"]:
        n = cost["turns"]
        events_turn = sum(cost["turn_events"].values()) / n
        events_thread = sum(cost["thread_events"].values()) / n
        lines += [
            "",
            f"## {cost['kind']} ({n} turns)",
            "",
            f"- Postgres rows per turn: {_per_turn(cost['rows'], n)}",
            f"- Postgres row bytes per turn: {_per_turn(cost['row_bytes'], n)}",
            f"- Postgres on-disk growth per turn (heap, TOAST, indexes; page-granular): "
            f"{_per_turn(cost['disk_bytes'], n)}",
            f"- Temporal history per turn: {events_turn:.1f} turn events + {events_thread:.1f} "
            f"thread events, {cost['history_bytes'] / n / 1000:.1f} KB",
            f"- turn workflow events per turn: {_per_turn(cost['turn_events'], n)}",
            f"- thread workflow events per turn: {_per_turn(cost['thread_events'], n)}",
            f"- CPU ms per turn: {cost['cpu_ms_per_turn']}",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Command line: --chat N --email M --out FOLDER."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chat", type=int, default=20, help="chat turns (default 20)")
    parser.add_argument("--email", type=int, default=20, help="email turns (default 20)")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    report = asyncio.run(run_capacity(Settings(), args.chat, args.email))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "capacity.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out / "capacity.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

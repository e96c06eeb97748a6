"""The benchmarks' outputs: JSON, a markdown table and a PNG plot under `bench/results/`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Issue 11's targets (2 CPUs, embedded stack, offline provider).
CHAT_P50_TARGET_MS = 120.0
THROUGHPUT_TARGET = 15.0  # turns/s at 16 in flight
OVERHEAD_TARGET = 1.5  # Memoir p50 / LangGraph p50
HITL_P50_TARGET_MS = 50.0


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("met" if ok else "not met")


def turns_markdown(report: dict[str, Any]) -> str:
    """The phases, the Memoir / LangGraph ratios and the targets, as markdown."""
    env = report["environment"]["start"]
    config = report["config"]
    lines = [
        f"# memoir bench turns ({env['when']}, commit {env.get('commit') or 'unknown'})",
        "",
        f"{config['turns']} turns per phase (rounded up to a multiple of the turns in flight); "
        f"{env['cpus']} CPUs, load average at the start "
        f"{', '.join(str(x) for x in env['load_average'])}; LangGraph durability "
        f"`{config['durability']}`. CPU per turn: the Temporal dev server / this process (worker, "
        "API, client) / Postgres. History per turn: Memoir's Temporal events and bytes (turn "
        "workflow + its part of the thread's), LangGraph's checkpoint rows and bytes.",
        "",
        "| kind | in flight | system | p50 ms | p95 ms | turns/s | CPU ms/turn server / "
        "process / postgres | history per turn | failed |",
        "|---|---:|---|---:|---:|---:|---|---|---:|",
    ]
    for phase in report["phases"]:
        cpu = phase["cpu_ms_per_turn"]
        lines.append(
            f"| {phase['kind']} | {phase['in_flight']} | {phase['system']} "
            f"| {_num(phase['latency']['p50_ms'])} | {_num(phase['latency']['p95_ms'])} "
            f"| {_num(phase['turns_per_s'], 2)} "
            f"| {_num(cpu['server'])} / {_num(cpu['process'])} / {_num(cpu['postgres'])} "
            f"| {_storage(phase)} | {phase['failed']} |"
        )
    if report["ratios"]:
        lines += [
            "",
            "Memoir / LangGraph (latency and CPU: lower is better; turns/s: higher is better; "
            "LangGraph's CPU leaves out the idle Temporal server):",
            "",
            "| kind | in flight | p50 | p95 | turns/s | CPU per turn |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for r in report["ratios"]:
            lines.append(
                f"| {r['kind']} | {r['in_flight']} | {_num(r['p50'], 2)} | {_num(r['p95'], 2)} "
                f"| {_num(r['turns_per_s'], 2)} | {_num(r['cpu_per_turn'], 2)} |"
            )
    lines += ["", "Targets (issue 11):", ""]
    lines += [f"- {t}" for t in turns_targets(report)]
    return "\n".join(lines) + "\n"


def _storage(phase: dict[str, Any]) -> str:
    s = phase["storage_per_turn"]
    if "events" in s:
        return (
            f"{s['events']:.0f} events, {s['bytes'] / 1024:.1f} KB, {s['activities']:.0f} "
            f"activities + {s['local_activities']:.0f} local, {s['workflow_tasks']:.0f} WFTs"
        )
    if "checkpoint_rows" in s:
        return f"{s['checkpoint_rows']:.0f} rows, {s['checkpoint_bytes'] / 1024:.1f} KB"
    return "–"


def _phase(report: dict[str, Any], system: str, kind: str, in_flight: int) -> dict[str, Any] | None:
    return next(
        (
            p
            for p in report["phases"]
            if (p["system"], p["kind"], p["in_flight"]) == (system, kind, in_flight)
        ),
        None,
    )


def turns_targets(report: dict[str, Any]) -> list[str]:
    """Each of issue 11's turn targets with the figure that answers it (where measured)."""
    out: list[str] = []
    sequential = _phase(report, "memoir", "chat", 1)
    if sequential:
        p50 = sequential["latency"]["p50_ms"]
        out.append(
            f"chat p50 sequential ≤ {CHAT_P50_TARGET_MS:.0f} ms: {p50:.0f} ms "
            f"({_met(p50 <= CHAT_P50_TARGET_MS)})"
        )
    loaded = _phase(report, "memoir", "chat", 16)
    if loaded:
        rate = loaded["turns_per_s"]
        out.append(
            f"≥ {THROUGHPUT_TARGET:.0f} chat turns/s at 16 in flight: {rate:.1f} "
            f"({_met(rate >= THROUGHPUT_TARGET)})"
        )
    for r in report["ratios"]:
        if r["p50"] is not None:
            out.append(
                f"{r['kind']} x{r['in_flight']} p50 overhead ≤ {OVERHEAD_TARGET} × LangGraph: "
                f"{r['p50']:.2f} ({_met(r['p50'] <= OVERHEAD_TARGET)})"
            )
    return out or ["(no phase measured a target)"]


def plot_turns(report: dict[str, Any], path: Path) -> None:
    """p50 (solid) and p95 (dashed) latency, and turns/s, against turns in flight."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"memoir": "tab:blue", "langgraph": "tab:orange"}
    markers = {"chat": "o", "email": "s"}
    figure, (latency, throughput) = plt.subplots(1, 2, figsize=(11, 4.2))
    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for phase in report["phases"]:
        series.setdefault((phase["system"], phase["kind"]), []).append(phase)
    for (system, kind), phases in series.items():
        phases.sort(key=lambda p: p["in_flight"])
        x = [p["in_flight"] for p in phases]
        style = {"color": colors.get(system), "marker": markers.get(kind)}
        latency.plot(x, [p["latency"]["p50_ms"] for p in phases], label=f"{system} {kind}", **style)
        latency.plot(
            x, [p["latency"]["p95_ms"] for p in phases], linestyle="--", alpha=0.5, **style
        )
        throughput.plot(x, [p["turns_per_s"] for p in phases], label=f"{system} {kind}", **style)
    levels = sorted({p["in_flight"] for p in report["phases"]})
    for axes in (latency, throughput):
        axes.set_xticks(levels)
    latency.set(xlabel="turns in flight", ylabel="ms (p50 solid, p95 dashed)", title="latency")
    throughput.set(xlabel="turns in flight", ylabel="turns/s", title="throughput")
    for axes in (latency, throughput):
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    env = report["environment"]["start"]
    figure.suptitle(f"memoir bench turns, {env['when']}, {env['cpus']} CPUs", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def hitl_markdown(report: dict[str, Any]) -> str:
    """The answer-to-resume latencies per answer source, as markdown."""
    env = report["environment"]["start"]
    lines = [
        f"# memoir bench hitl ({env['when']}, commit {env.get('commit') or 'unknown'})",
        "",
        f"{report['config']['trials']} approvals per source; {env['cpus']} CPUs, load average "
        f"at the start {', '.join(str(x) for x in env['load_average'])}. Resume: from sending "
        "the answer to the turn's next activity starting (its ActivityTaskStarted event). "
        "Signal: from sending the answer to the turn's WorkflowExecutionSignaled event. "
        "HTTP: the answer request's round trip.",
        "",
        "| answer | resume p50 ms | resume p95 ms | signal p50 ms | signal → activity p50 ms "
        "| HTTP p50 ms | failed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for source in report["sources"]:
        lines.append(
            f"| {source['source']} | {_num(source['resume']['p50_ms'])} "
            f"| {_num(source['resume']['p95_ms'])} | {_num(source['signal']['p50_ms'])} "
            f"| {_num(source['signal_to_activity']['p50_ms'])} "
            f"| {_num(source['http']['p50_ms'])} | {source['failed']} |"
        )
    lines += ["", "Target (issue 11):", ""]
    for source in report["sources"]:
        p50 = source["resume"]["p50_ms"]
        ok = None if p50 != p50 else p50 <= HITL_P50_TARGET_MS  # NaN: nothing measured
        lines.append(
            f"- {source['source']} answer, resume p50 ≤ {HITL_P50_TARGET_MS:.0f} ms: "
            f"{_num(p50)} ms ({_met(ok)})"
        )
    return "\n".join(lines) + "\n"


def write_report(
    report: dict[str, Any], out_dir: Path, name: str, *, plot: bool = True
) -> list[Path]:
    """`{name}.json`, `{name}.md` (and `{name}.png` for the turns) in `out_dir`; the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(report, indent=2, allow_nan=True) + "\n", encoding="utf-8")
    if report["benchmark"] == "turns":
        md_path.write_text(turns_markdown(report), encoding="utf-8")
    else:
        md_path.write_text(hitl_markdown(report), encoding="utf-8")
    paths = [json_path, md_path]
    if plot and report["benchmark"] == "turns":
        png = out_dir / f"{name}.png"
        plot_turns(report, png)
        paths.append(png)
    return paths

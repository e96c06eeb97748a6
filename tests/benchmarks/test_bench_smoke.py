"""`memoir bench turns` and `memoir bench hitl` with a few turns, on the real embedded stack
(Temporal dev server, worker, API over HTTP, the LangGraph pipeline on the session's Postgres):
the reports carry every figure, and the files are written."""

from __future__ import annotations

import json
import math
from pathlib import Path

from memoir.benchmarks.hitl import HitlConfig, run_hitl
from memoir.benchmarks.report import write_report
from memoir.benchmarks.turns import TurnsConfig, run_turns
from memoir.settings import Settings


def _quiet(_: str) -> None:
    return None


async def test_bench_turns_reports_every_figure(database_url: str, tmp_path: Path) -> None:
    config = TurnsConfig(turns=3, in_flight=(1,))
    report = await run_turns(
        Settings(database_url=database_url), config, say=_quiet, data_dir=tmp_path / "stack"
    )
    paths = write_report(report, tmp_path / "out", "turns")
    assert [p.name for p in paths] == ["turns.json", "turns.md", "turns.png"]
    saved = json.loads(paths[0].read_text())
    phases = {(p["system"], p["kind"]): p for p in saved["phases"]}
    assert set(phases) == {(s, k) for s in ("memoir", "langgraph") for k in ("chat", "email")}
    for (system, kind), phase in phases.items():
        assert (phase["turns"], phase["in_flight"], phase["failed"]) == (3, 1, 0), phase
        assert 0 < phase["latency"]["p50_ms"] <= phase["latency"]["p95_ms"], phase
        assert phase["turns_per_s"] > 0
        assert phase["cpu_ms_per_turn"]["process"] > 0
        assert phase["cpu_ms_per_turn"]["server"] is not None  # the stack's own dev server
        assert phase["process_threads_ms_per_turn"]["main"] > 0, phase
        if system == "memoir":
            history = phase["storage_per_turn"]
            assert history["events"] > 20 and history["bytes"] > 1000, history
            stages = history["activities"] + history["local_activities"]
            assert stages >= (1 if kind == "chat" else 3), history  # a chat "Hi": one in all
            assert history["workflow_tasks"] > 0, history
            assert history["thread_events"] > 0, history
        else:
            assert phase["storage_per_turn"]["checkpoint_rows"] > 0, phase
        assert phase["scripted_plans"] == (3 if kind == "email" else 0), phase
    ratios = {r["kind"]: r for r in saved["ratios"]}
    assert set(ratios) == {"chat", "email"}
    assert all(r["p50"] > 0 and r["turns_per_s"] > 0 for r in ratios.values())
    markdown = paths[1].read_text()
    assert "| chat | 1 | memoir |" in markdown and "Memoir / LangGraph" in markdown
    assert "commit" in saved["environment"]["start"] and ", commit " in markdown
    assert paths[2].read_bytes().startswith(b"\x89PNG")


async def test_bench_hitl_reports_resume_latency(database_url: str, tmp_path: Path) -> None:
    report = await run_hitl(
        Settings(database_url=database_url),
        HitlConfig(trials=2),
        say=_quiet,
        data_dir=tmp_path / "stack",
    )
    paths = write_report(report, tmp_path / "out", "hitl")
    assert [p.name for p in paths] == ["hitl.json", "hitl.md"]
    sources = {s["source"]: s for s in json.loads(paths[0].read_text())["sources"]}
    assert set(sources) == {"inbox", "chat"}
    for source in sources.values():
        assert (source["trials"], source["failed"]) == (2, 0), source
        resume, signal = source["resume"], source["signal"]
        assert 0 < signal["p50_ms"] < resume["p50_ms"] <= resume["p95_ms"], source
        assert not math.isnan(source["signal_to_activity"]["p50_ms"])
    assert "| inbox |" in paths[1].read_text()

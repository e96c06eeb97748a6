"""Load, small: 60 turns from 6 users on 12 threads, all sent at once through the real HTTP API
(`memoir bench load` runs 500 / 50 / 100): every turn completes, once, and the API answers no
5xx."""

from __future__ import annotations

from memoir.benchmarks.load import LoadConfig, run_load
from memoir.settings import Settings


async def test_sixty_turns_at_once_complete_once_without_server_errors(database_url: str) -> None:
    config = LoadConfig(turns=60, users=6, threads=12, http_connections=60)
    report = await run_load(Settings(), config, say=lambda _: None, database_url=database_url)
    assert report.errors == []
    assert report.server_errors == 0, report.statuses
    assert report.turn_statuses == {"completed": 60}
    assert report.counts["turns"] == report.counts["user_records"] == 60
    assert report.counts["reply_records"] == 60
    assert report.counts["memories"] >= 1  # half the messages state a fact

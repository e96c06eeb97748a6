"""`python -m memoir.benchmarks.capacity` with a few turns on the real embedded stack: rows,
history events by type and CPU per turn kind are measured and rendered."""

from __future__ import annotations

from memoir.benchmarks.capacity import markdown, run_capacity
from memoir.settings import Settings


async def test_capacity_counts_rows_and_events_per_turn(database_url: str) -> None:
    report = await run_capacity(Settings(database_url=database_url), chat_turns=2, email_turns=1)
    kinds = {cost["kind"]: cost for cost in report["kinds"]}
    assert set(kinds) == {"chat", "email"}
    for kind, cost in kinds.items():
        turns = cost["turns"]
        # Each turn keeps the message and the reply, as history and as searchable records.
        assert cost["rows"]["interactions"] == 2 * turns, cost["rows"]
        assert cost["rows"]["message_records"] == 2 * turns, cost["rows"]
        assert cost["row_bytes"]["message_records"] > 1540 * 2 * turns  # a 384-float vector each
        events = cost["turn_events"]
        assert events["WORKFLOW_EXECUTION_STARTED"] == turns, events
        # chat that answers alone: context, memory, plan and remember as one activity; email:
        # context local, triage, memory, plan (+ reply) activities, remember local
        local, activities = (0, 1) if kind == "chat" else (2, 3)
        assert events.get("MARKER_RECORDED:core_local_activity", 0) >= local * turns, events
        assert events["ACTIVITY_TASK_SCHEDULED"] >= activities * turns, events
        assert cost["thread_events"]["WORKFLOW_EXECUTION_UPDATE_ACCEPTED"] == turns
        assert cost["thread_events"]["START_CHILD_WORKFLOW_EXECUTION_INITIATED"] == turns
        assert cost["history_bytes"] > 1000 * turns
        assert cost["cpu_ms_per_turn"]["process"] > 0, kind
    text = markdown(report)
    assert "## chat (2 turns)" in text and "## email (1 turns)" in text

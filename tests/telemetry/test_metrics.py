"""A turn with an approval records the turn latency, the HITL wait, the memory decisions and
the tool call on the process's meter."""

from __future__ import annotations

from typing import Any

import httpx

from temporal.harness import Harness
from tests.api.support import ApiUser
from tests.telemetry.conftest import Telemetry
from tests.telemetry.test_turn_trace import approved_turn


async def test_a_turn_with_an_approval_records_its_metrics(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, spans: Telemetry
) -> None:
    await approved_turn(http, user, harness)
    data = spans.metrics.get_metrics_data()
    assert data is not None
    points: dict[str, list[Any]] = {
        metric.name: list(metric.data.data_points)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    [wait] = [p for p in points["memoir.hitl.wait"] if p.attributes["outcome"] == "answered"]
    assert wait.count >= 1 and wait.sum > 0
    assert any(
        p.attributes["memoir.turn.status"] == "completed" for p in points["memoir.turn.duration"]
    )
    tools = {
        (p.attributes["gen_ai.tool.name"], p.attributes["outcome"])
        for p in points["memoir.tool.calls"]
    }
    assert ("reminders.create", "success") in tools
    kinds = {p.attributes["memoir.memory.kind"] for p in points["memoir.memory.decisions"]}
    assert kinds == {"semantic", "episodic"}

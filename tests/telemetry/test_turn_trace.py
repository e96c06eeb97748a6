"""A turn with an approval through the real stack (API, dev server, worker, Postgres; only the
model scripted) is one trace rooted at its `POST /v1/messages`."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind
from typer.testing import CliRunner

from memoir.cli import app as cli
from memoir.settings import Settings
from memoir.telemetry import apply_settings
from temporal.harness import Harness
from tests.api.support import ApiUser, answer, approval_asked, finished_view, post_message
from tests.telemetry.conftest import Telemetry


async def approved_turn(http: httpx.AsyncClient, user: ApiUser, harness: Harness) -> str:
    """A reminder turn that asks for approval, accepted in the inbox; its turn id."""
    request = await approval_asked(http, user, harness, "renew passport")
    assert (await answer(http, user, request.hitl_id, {"type": "accept"})).status_code == 202
    view = await finished_view(http, harness, user, request.turn_id)
    assert view["status"] == "completed"
    return request.turn_id


def trace_of(spans: Sequence[ReadableSpan], turn_id: str) -> list[ReadableSpan]:
    """Every span of the trace that holds the turn's workflow run."""
    [run] = [
        s
        for s in spans
        if s.name == "RunWorkflow:AgentTurnWorkflow"
        and (s.attributes or {})["temporalWorkflowID"] == turn_id
    ]
    trace_id = run.context.trace_id
    return [s for s in spans if s.context.trace_id == trace_id]


async def test_a_turn_is_one_trace_under_its_api_request(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, spans: Telemetry
) -> None:
    turn_id = await approved_turn(http, user, harness)
    trace = trace_of(spans.spans(), turn_id)
    [root] = [s for s in trace if s.parent is None]
    assert (root.name, root.kind) == ("POST /v1/messages", SpanKind.SERVER)
    ids = {s.context.span_id for s in trace}
    assert all(s.parent.span_id in ids for s in trace if s.parent is not None)
    names = {s.name for s in trace}
    for expected in (
        "StartUpdateWithStartWorkflow:ThreadWorkflow",
        "RunWorkflow:ThreadWorkflow",
        "StartChildWorkflow:AgentTurnWorkflow",
        "RunActivity:context_memory_and_plan",
        "execute_tool reminders.create",
        "memory.decide semantic",
        "hitl.wait approval",
        "turn completed",
    ):
        assert expected in names, sorted(names)
    llm = [s for s in trace if (s.attributes or {}).get("gen_ai.operation.name") == "chat"]
    assert {(s.attributes or {})["memoir.llm.task"] for s in llm} >= {"Plan"}
    assert all((s.attributes or {})["gen_ai.provider.name"] == "memoir.scripted" for s in llm)


async def test_the_second_turn_of_a_thread_is_a_trace_of_its_own_request(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, spans: Telemetry
) -> None:
    first = await post_message(http, user, harness.thread_id, "m1", "hello there")
    await finished_view(http, harness, user, first.json()["turn_id"])
    second = await post_message(http, user, harness.thread_id, "m2", "thanks, bye")
    turn_id = second.json()["turn_id"]
    await finished_view(http, harness, user, turn_id)
    everything = spans.spans()
    trace = [s for s in trace_of(everything, turn_id) if s.parent is None]
    [root] = trace
    assert root.name == "POST /v1/messages"
    first_run = [s for s in everything if s.name == "RunWorkflow:ThreadWorkflow"]
    assert first_run and all(s.context.trace_id != root.context.trace_id for s in first_run)


async def test_model_content_stays_off_spans_by_default(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, spans: Telemetry
) -> None:
    await approved_turn(http, user, harness)
    llm = [s for s in spans.spans() if "gen_ai.operation.name" in (s.attributes or {})]
    assert llm
    for span in llm:
        assert "gen_ai.input.messages" not in (span.attributes or {})
        assert "gen_ai.output.messages" not in (span.attributes or {})


async def test_model_content_is_on_spans_when_the_setting_is_on(
    http: httpx.AsyncClient,
    user: ApiUser,
    harness: Harness,
    spans: Telemetry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMOIR_OTEL_CAPTURE_CONTENT", "true")
    apply_settings(Settings())
    await approved_turn(http, user, harness)
    [plan] = [s for s in spans.spans() if (s.attributes or {}).get("memoir.llm.task") == "Plan"]
    attributes = plan.attributes or {}
    assert "renew passport" in str(attributes["gen_ai.input.messages"])
    assert "reminders.create" in str(attributes["gen_ai.output.messages"])


async def test_memoir_trace_prints_the_tree_of_a_turn_with_an_approval(
    http: httpx.AsyncClient,
    user: ApiUser,
    harness: Harness,
    spans: Telemetry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    turn_id = await approved_turn(http, user, harness)
    spans.spans()  # flushed to the data folder's file too
    monkeypatch.setenv("MEMOIR_DATA_DIR", str(spans.data_dir))
    from memoir.settings import get_settings

    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["trace", turn_id])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("turn trace ")
    assert lines[1].startswith("  POST /v1/messages  [")
    for expected in ("RunWorkflow:AgentTurnWorkflow", "hitl.wait approval", "outcome=answered"):
        assert any(expected in line for line in lines), result.output
    [tool] = [line for line in lines if "execute_tool reminders.create" in line]
    assert tool.startswith("          ") and "success=True" in tool
    related = [line for line in lines if line.startswith("related trace ")]
    assert related and any("POST /v1/inbox/{hitl_id}" in line for line in lines)

"""The tracing interceptor is replay-safe: every committed history replays with it, in the
SDK's sandbox, and replaying starts no span."""

from __future__ import annotations

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from memoir.telemetry import MemoirTracingInterceptor
from temporal.histories import committed_histories
from tests.telemetry.conftest import Telemetry
from workflows import ALL_WORKFLOWS


async def test_committed_histories_replay_with_tracing_and_start_no_span(
    spans: Telemetry,
) -> None:
    histories = committed_histories()
    assert histories
    replayer = Replayer(
        workflows=ALL_WORKFLOWS,
        data_converter=pydantic_data_converter,
        interceptors=[MemoirTracingInterceptor()],
    )
    for history in histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, history.workflow_id
    assert spans.spans() == ()

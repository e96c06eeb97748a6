"""Background heartbeats: an activity outlives its heartbeat timeout without beating itself."""

import asyncio
import uuid
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from temporal.heartbeat import HeartbeatInterceptor, beat_interval


@activity.defn
async def slow_step() -> str:
    """Twice as long as its heartbeat timeout, and never heartbeats itself."""
    await asyncio.sleep(2.0)
    return "done"


@workflow.defn(sandboxed=False)
class SlowStepWorkflow:
    @workflow.run
    async def run(self) -> str:
        return await workflow.execute_activity(
            slow_step,
            start_to_close_timeout=timedelta(seconds=30),
            heartbeat_timeout=timedelta(seconds=1),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )


def test_beats_come_a_few_times_per_timeout() -> None:
    assert beat_interval(timedelta(seconds=15)) == 3.75
    assert beat_interval(timedelta(seconds=0.4)) == 0.2  # never faster than MIN_BEAT_SECONDS
    assert beat_interval(None) is None


async def test_an_activity_longer_than_its_heartbeat_timeout_completes(
    bare_temporal: WorkflowEnvironment,
) -> None:
    client = bare_temporal.client
    queue = f"heartbeat-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[SlowStepWorkflow],
        activities=[slow_step],
        interceptors=[HeartbeatInterceptor()],
    ):
        result = await client.execute_workflow(SlowStepWorkflow.run, id=queue, task_queue=queue)
    assert result == "done"

"""Heartbeats for every activity a workflow gives a heartbeat timeout.

A worker killed mid-activity (SIGKILL, a lost machine) tells the server nothing: without a
heartbeat timeout the attempt is only retried when its start-to-close timeout runs out (30 s for
a store or tool step, 120 s for an LLM call). With one, the server retries it on another worker
within that timeout. The interceptor heartbeats in the background while an attempt runs, a few
times per timeout, so no activity has to remember to; local activities have no heartbeat.
"""

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

# Heartbeats per heartbeat timeout (the SDK throttles them further; one lost is no timeout).
BEATS_PER_TIMEOUT = 4
MIN_BEAT_SECONDS = 0.2


def beat_interval(timeout: timedelta | None) -> float | None:
    """Seconds between heartbeats for a heartbeat timeout; None when there is none."""
    if not timeout or timeout <= timedelta(0):
        return None
    return max(MIN_BEAT_SECONDS, timeout.total_seconds() / BEATS_PER_TIMEOUT)


async def _beat(every: float) -> None:
    # Sleep first: the SDK sends a first heartbeat at once, so beating at the start would cost
    # every short activity (nearly all of them) a server round trip it does not need.
    while True:
        await asyncio.sleep(every)
        activity.heartbeat()


class _HeartbeatInbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        every = None if info.is_local else beat_interval(info.heartbeat_timeout)
        if every is None:
            return await self.next.execute_activity(input)
        beating = asyncio.create_task(_beat(every), name=f"heartbeat {info.activity_type}")
        try:
            return await self.next.execute_activity(input)
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating


class HeartbeatInterceptor(Interceptor):
    """Worker interceptor: background heartbeats for activities that have a heartbeat timeout."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _HeartbeatInbound(next)

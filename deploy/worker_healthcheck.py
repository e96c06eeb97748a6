"""A worker container's health check: exit 0 while a worker on this host polls Memoir's task queue.

The Temporal SDK names a worker `PID@HOSTNAME`, and a container's hostname is its own, so a poller
of `MEMOIR_TASK_QUEUE` with this host's name, seen within the last minute, is this container's
worker. Settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, MEMOIR_TASK_QUEUE) as for `memoir worker`.
"""

import asyncio
import os
import socket
import sys
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from memoir.settings import Settings
from temporal.connection import connect_options

RECENT = timedelta(seconds=60)
QUEUE_TYPES = (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)


async def local_pollers(settings: Settings, host: str) -> list[str]:
    """Identities of this host's recent pollers of the task queue (workflow and activity)."""
    # Only the task queue is described: no payloads, so no data converter (nor master key).
    client = await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        **connect_options(settings),
    )
    now = datetime.now(UTC)
    found: list[str] = []
    for queue_type in QUEUE_TYPES:
        request = DescribeTaskQueueRequest(
            namespace=settings.temporal_namespace,
            task_queue=TaskQueue(name=settings.task_queue),
            task_queue_type=queue_type,
        )
        response = await client.workflow_service.describe_task_queue(request)
        for poller in response.pollers:
            seen = poller.last_access_time.ToDatetime(tzinfo=UTC)
            if poller.identity.endswith(f"@{host}") and now - seen <= RECENT:
                found.append(poller.identity)
    return found


def main() -> int:
    """0 and the pollers found, or 1 and why."""
    settings, host = Settings(), socket.gethostname()
    try:
        found = asyncio.run(asyncio.wait_for(local_pollers(settings, host), timeout=8))
    except Exception as error:  # noqa: BLE001 - any failure is an unhealthy answer, said why
        print(f"unhealthy: {type(error).__name__}: {error}")
        return 1
    if not found:
        print(f"unhealthy: no worker on {host} polls task queue {settings.task_queue}")
        return 1
    print(f"healthy: {', '.join(sorted(set(found)))} poll task queue {settings.task_queue}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Skip the interpreter's finalization: after a failed connect, the SDK's Rust runtime
    # threads can crash it (a clean-clone run saw SIGSEGV instead of exit 1).
    os._exit(code)

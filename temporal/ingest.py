"""Ingest: a message goes to its thread workflow by update-with-start, in one round trip."""

from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from memoir.models import IncomingMessage, RouteResult, ThreadInput, names
from memoir.models import search_attributes as sa
from memoir.settings import Settings


async def submit_message(
    client: Client, settings: Settings, message: IncomingMessage
) -> RouteResult:
    """Start the thread workflow if needed (conflict policy use-existing) and route the message."""
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        names.THREAD_WORKFLOW,
        ThreadInput(
            user_id=message.user_id,
            thread_id=message.thread_id,
            channel=message.channel,
            hitl_ttl_seconds=settings.hitl_ttl_seconds,
            heartbeat_seconds=settings.activity_heartbeat_seconds,
            idle_hours=settings.thread_idle_hours,
            max_replans=settings.max_replans,
            turns_per_run=settings.thread_turns_per_run,
        ),
        id=names.thread_workflow_id(message.user_id, message.thread_id),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        task_queue=settings.task_queue,
        search_attributes=sa.for_message(message),
        static_summary=f"{message.channel.value} thread {message.thread_id}",
    )
    return await client.execute_update_with_start_workflow(
        names.THREAD_SUBMIT_UPDATE,
        message,
        start_workflow_operation=start,
        result_type=RouteResult,
    )

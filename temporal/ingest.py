"""Ingest: a message goes to its thread workflow by update-with-start, in one round trip."""

import asyncio
import logging
from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from memoir.models import IncomingMessage, RouteResult, ThreadInput, names
from memoir.models import search_attributes as sa
from memoir.settings import Settings

log = logging.getLogger(__name__)

# The server refuses an update while the thread's workflow task is failed (e.g. it timed out on
# a worker too busy to finish it in 10 s) until a retry of that task succeeds: a transient state.
# The message is sent again (the thread dedupes by message id) after these pauses, then fails.
TASK_FAILED_MARK = "Workflow Task in failed state"
TASK_FAILED_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0)


async def submit_message(
    client: Client, settings: Settings, message: IncomingMessage
) -> RouteResult:
    """Start the thread workflow if needed (conflict policy use-existing) and route the message;
    sent again while the thread's workflow task is failed (a busy worker), a few times."""
    for pause in TASK_FAILED_PAUSES:
        try:
            return await _submit_once(client, settings, message)
        except RPCError as error:
            if not _task_failed(error):
                raise
            log.warning("thread of %s busy (%s); again in %.1f s", message.message_id, error, pause)
        await asyncio.sleep(pause)
    return await _submit_once(client, settings, message)


def _task_failed(error: RPCError) -> bool:
    return error.status is RPCStatusCode.FAILED_PRECONDITION and TASK_FAILED_MARK in error.message


async def _submit_once(client: Client, settings: Settings, message: IncomingMessage) -> RouteResult:
    """One update-with-start of the thread workflow."""
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

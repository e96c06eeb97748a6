"""Why a workflow is not moving: its pending activities' last failures and its current details.

Read from the server (`describe`) and the built-in metadata query, so they show even the first
retries of an activity, before the workflow itself knows anything failed.
"""

from collections.abc import Iterable
from datetime import timedelta

from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.client import WorkflowExecutionDescription, WorkflowHandle
from temporalio.converter import DataConverter
from temporalio.exceptions import FailureError

METADATA_QUERY = "__temporal_workflow_metadata"


def activity_line(activity: PendingActivityInfo) -> str:
    """'remember_turn (attempt 3): OperationalError: connection refused', or without the error."""
    line = f"{activity.activity_type.name} (attempt {activity.attempt})"
    if not activity.HasField("last_failure"):
        return line
    failure = activity.last_failure
    kind = (
        failure.application_failure_info.type
        if failure.HasField("application_failure_info")
        else ""
    )
    return f"{line}: {kind + ': ' if kind else ''}{failure.message}"


def failing_activities(description: WorkflowExecutionDescription) -> list[str]:
    """`activity_line` of every pending activity that has failed at least once."""
    return [
        activity_line(a)
        for a in description.raw_description.pending_activities
        if a.attempt > 1 and a.HasField("last_failure")
    ]


async def decode_failures(
    activities: Iterable[PendingActivityInfo], converter: DataConverter
) -> None:
    """Decode the activities' last failures in place, so an encrypted message reads.

    With payload encryption a failure's message travels in its encoded attributes and reads
    "Encoded failure" until the codec decodes it.
    """
    for activity in activities:
        if activity.HasField("last_failure"):
            error = await converter.decode_failure(activity.last_failure)
            if isinstance(error, FailureError):
                activity.last_failure.message = error.message


def pending_activities(description: WorkflowExecutionDescription) -> list[str]:
    """`activity_line` of every pending activity."""
    return [activity_line(a) for a in description.raw_description.pending_activities]


async def current_details(handle: WorkflowHandle, timeout: timedelta) -> str:
    """The workflow's current details (the Web UI's 'current details'); needs a worker."""
    metadata: WorkflowMetadata = await handle.query(
        METADATA_QUERY, result_type=WorkflowMetadata, rpc_timeout=timeout
    )
    return metadata.current_details

"""An activity's last failure, encrypted in history, reads in clear where the API shows it."""

import uuid

from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.converter import WorkflowSerializationContext
from temporalio.exceptions import ApplicationError

from memoir.crypto import Keyring
from memoir.models.names import turn_workflow_id
from temporal.codec import encrypted_data_converter
from temporal.diagnosis import activity_line, decode_failures


async def _failed_activity(keyring: Keyring, message: str) -> PendingActivityInfo:
    """A pending activity whose last failure was encoded by a user's turn, as the worker does."""
    user = f"u-{uuid.uuid4().hex[:8]}"
    context = WorkflowSerializationContext(
        namespace="default", workflow_id=turn_workflow_id(user, "t1", "m1")
    )
    converter = encrypted_data_converter(keyring).with_context(context)
    activity = PendingActivityInfo(attempt=2)
    activity.activity_type.name = "remember_and_episodic_capture"
    await converter.encode_failure(
        ApplicationError(message, type="PoolTimeout"), activity.last_failure
    )
    return activity


async def test_an_encrypted_failure_hides_its_message(keyring: Keyring) -> None:
    activity = await _failed_activity(keyring, "couldn't get a connection after 5.00 sec")
    assert "couldn't get a connection" not in activity.SerializeToString().decode("latin-1")
    assert activity_line(activity).endswith("PoolTimeout: Encoded failure")


async def test_decoding_the_failures_shows_the_last_error_in_clear(keyring: Keyring) -> None:
    activity = await _failed_activity(keyring, "couldn't get a connection after 5.00 sec")
    await decode_failures([activity], encrypted_data_converter(keyring))
    assert activity_line(activity) == (
        "remember_and_episodic_capture (attempt 2): "
        "PoolTimeout: couldn't get a connection after 5.00 sec"
    )

"""An activity's last failure, encrypted in history, reads in clear where the API shows it."""

import uuid

from temporalio.api.failure.v1 import Failure
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.converter import WorkflowSerializationContext
from temporalio.exceptions import ApplicationError, FailureError

from memoir.crypto import Keyring
from memoir.models.names import turn_workflow_id
from temporal.codec import STACK_TRACE_CHARS, encrypted_data_converter
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


def _deep(depth: int) -> None:
    """Raise from `depth` frames down (two functions in turn, so the trace repeats no line),
    chained to a cause raised as deep."""
    if depth:
        _deeper(depth - 1)
        return
    try:
        _deeper_cause(60)
    except OSError as cause:
        raise RuntimeError("couldn't get a connection after 5.00 sec") from cause


def _deeper(depth: int) -> None:
    _deep(depth)


def _deeper_cause(depth: int) -> None:
    if depth:
        _deep_cause(depth - 1)
        return
    raise OSError("connection refused")


def _deep_cause(depth: int) -> None:
    _deeper_cause(depth)


async def test_a_deep_failure_stays_small_and_keeps_its_messages(keyring: Keyring) -> None:
    converter = encrypted_data_converter(keyring)
    failure = Failure()
    try:
        _deep(60)
    except RuntimeError as error:
        await converter.encode_failure(error, failure)
    # the server drops a retried activity's last failure above a few KB
    assert failure.ByteSize() < 4096
    decoded = await converter.decode_failure(failure)
    assert isinstance(decoded, FailureError) and "couldn't get a connection" in decoded.message
    assert decoded.__cause__ is not None and "connection refused" in str(decoded.__cause__)
    for level in (failure, failure.cause):  # decrypted in place by decode_failure
        [attributes] = converter.payload_converter.from_payloads([level.encoded_attributes])
        stack = attributes["stack_trace"]
        assert 0 < len(stack) <= STACK_TRACE_CHARS + 1
        assert "_deep" in stack  # the innermost frames are kept

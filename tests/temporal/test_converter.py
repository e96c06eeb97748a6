"""The encrypted data converter's parts: a context switch copies the converter, and payload
converters share one set of encoders (one type-adapter cache)."""

import pytest
from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    PayloadConverter,
    WorkflowSerializationContext,
)

from memoir.crypto import Keyring
from memoir.models import Channel, IncomingMessage
from temporal.codec import (
    EncryptedDataConverter,
    EncryptionCodec,
    SharedPydanticPayloadConverter,
    encrypted_data_converter,
)

TURN = "turn:u1:t1:m1"


def _activity_context(workflow_id: str) -> ActivitySerializationContext:
    return ActivitySerializationContext(
        namespace="default",
        workflow_id=workflow_id,
        workflow_type="AgentTurnWorkflow",
        activity_type="plan",
        activity_id="1",
        activity_task_queue="q",
        is_local=False,
    )


def test_with_context_encrypts_for_the_contexts_workflow(keyring: Keyring) -> None:
    converter = encrypted_data_converter(keyring)
    scoped = converter.with_context(WorkflowSerializationContext("default", TURN))
    codec = scoped.payload_codec
    assert isinstance(codec, EncryptionCodec) and codec.workflow_id == TURN
    assert isinstance(converter.payload_codec, EncryptionCodec)
    assert converter.payload_codec.workflow_id is None  # the original is left as it was


def test_with_context_keeps_the_converters_it_does_not_change(
    keyring: Keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    converter = encrypted_data_converter(keyring)

    def rebuilt(self: DataConverter) -> PayloadConverter:
        raise AssertionError("a payload converter was built for a context switch")

    monkeypatch.setattr(EncryptedDataConverter, "_new_payload_converter", rebuilt)
    scoped = converter.with_context(_activity_context(TURN))
    assert scoped.payload_converter is converter.payload_converter
    assert scoped.failure_converter is converter.failure_converter
    assert type(scoped) is type(converter)


def test_payload_converters_share_their_encoders() -> None:
    first, second = SharedPydanticPayloadConverter(), SharedPydanticPayloadConverter()
    assert list(first.converters) == list(second.converters)
    for encoding, encoder in first.converters.items():
        assert second.converters[encoding] is encoder


async def test_a_model_round_trips_encrypted(keyring: Keyring) -> None:
    converter = encrypted_data_converter(keyring).with_context(
        WorkflowSerializationContext("default", TURN)
    )
    message = IncomingMessage(
        user_id="u1", thread_id="t1", message_id="m1", channel=Channel.CHAT, text="Hi there!"
    )
    payloads = await converter.encode([message])
    assert b"Hi there" not in payloads[0].SerializeToString()
    assert await converter.decode(payloads, [IncomingMessage]) == [message]

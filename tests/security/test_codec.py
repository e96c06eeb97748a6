"""The payload codec: per-user AES-256-GCM by workflow id, key id in metadata, pass-through of
unencrypted payloads (committed histories still replay)."""

import uuid

import pytest
from cryptography.exceptions import InvalidTag
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory
from temporalio.converter import WorkflowSerializationContext
from temporalio.worker import Replayer

from memoir.crypto import KeyDestroyedError, Keyring
from memoir.models.names import thread_workflow_id, turn_workflow_id
from temporal.codec import KEY_ID, USER_ID, EncryptionCodec, encrypted_data_converter
from temporal.histories import committed_histories
from workflows import ALL_WORKFLOWS

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"text": "my secret diagnosis"}')


def codec_for(keyring: Keyring, workflow_id: str) -> EncryptionCodec:
    context = WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)
    return EncryptionCodec(keyring).with_context(context)


async def test_a_turn_payload_is_sealed_under_its_users_key(keyring: Keyring) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    [sealed] = await codec_for(keyring, turn_workflow_id(user, "t1", "m1")).encode([PLAIN])
    assert sealed.metadata["encoding"] == b"binary/encrypted"
    assert sealed.metadata[USER_ID] == user.encode()
    key_id = sealed.metadata[KEY_ID].decode()
    assert (await keyring.key(key_id)).owner == user
    assert b"diagnosis" not in sealed.SerializeToString()
    assert await EncryptionCodec(keyring).decode([sealed]) == [PLAIN]


async def test_thread_and_turn_of_a_user_share_the_key(keyring: Keyring) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    [a] = await codec_for(keyring, thread_workflow_id(user, "t1")).encode([PLAIN])
    [b] = await codec_for(keyring, turn_workflow_id(user, "t1", "m2")).encode([PLAIN])
    assert a.metadata[KEY_ID] == b.metadata[KEY_ID]
    assert a.data != b.data  # a fresh nonce each time


async def test_a_payload_of_no_user_uses_the_system_key(keyring: Keyring) -> None:
    [sealed] = await EncryptionCodec(keyring).encode([PLAIN])
    assert USER_ID not in sealed.metadata
    assert (await keyring.key(sealed.metadata[KEY_ID].decode())).owner == ""


async def test_unencrypted_payloads_pass_through_decode(keyring: Keyring) -> None:
    assert await EncryptionCodec(keyring).decode([PLAIN]) == [PLAIN]


async def test_a_tampered_payload_does_not_decode(keyring: Keyring) -> None:
    [sealed] = await codec_for(keyring, thread_workflow_id("u-tamper", "t")).encode([PLAIN])
    sealed.data = sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    with pytest.raises(InvalidTag):
        await EncryptionCodec(keyring).decode([sealed])


async def test_after_rotation_old_payloads_still_decode(keyring: Keyring) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    codec = codec_for(keyring, thread_workflow_id(user, "t1"))
    [before] = await codec.encode([PLAIN])
    await keyring.rotate(user)
    [after] = await codec.encode([PLAIN])
    assert before.metadata[KEY_ID] != after.metadata[KEY_ID]
    assert await codec.decode([before, after]) == [PLAIN, PLAIN]


async def test_after_destruction_payloads_fail_to_decode(keyring: Keyring) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    [sealed] = await codec_for(keyring, thread_workflow_id(user, "t1")).encode([PLAIN])
    await keyring.destroy(user)
    with pytest.raises(KeyDestroyedError):
        await EncryptionCodec(keyring).decode([sealed])


@pytest.mark.parametrize("history", committed_histories(), ids=lambda h: h.workflow_id)
async def test_committed_unencrypted_histories_replay_through_the_codec(
    keyring: Keyring, history: WorkflowHistory
) -> None:
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=encrypted_data_converter(keyring))
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None

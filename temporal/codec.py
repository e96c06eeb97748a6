"""The payload codec: AES-256-GCM under the data key of the user a payload belongs to.

The user comes from the serialization context's workflow id (`thread:{user}:...`,
`turn:{user}:...`, `reminder:{reminder_id}` through the reminders table); payloads of no user use
the system key. Payloads without the encrypted encoding (committed histories, payloads written
before encryption) pass through `decode` unchanged.
"""

import copy
import dataclasses
from collections.abc import Sequence
from typing import Self

from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import (
    ActivitySerializationContext,
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    PayloadCodec,
    PayloadConverter,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from memoir.crypto import SYSTEM_OWNER, Keyring
from memoir.crypto.aead import seal, unseal
from memoir.crypto.keyring import DataKey, destroy_keys
from memoir.db import Pool

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
USER_ID = "memoir-user-id"
OWNER_CACHE_MAX = 10_000


class OwnerResolver:
    """The user a workflow id belongs to; reminder ids are looked up once, then cached."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self._reminders: dict[str, str] = {}

    async def owner(self, workflow_id: str | None) -> str:
        if not workflow_id:
            return SYSTEM_OWNER
        kind, _, rest = workflow_id.partition(":")
        if kind in ("thread", "turn"):
            user, _, _ = rest.partition(":")
            return user or SYSTEM_OWNER
        if kind == "reminder" and rest:
            return await self._reminder_owner(rest)
        return SYSTEM_OWNER

    async def _reminder_owner(self, reminder_id: str) -> str:
        hit = self._reminders.get(reminder_id)
        if hit is not None:
            return hit
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT user_id FROM reminders WHERE reminder_id = %s", (reminder_id,)
            )
            row = await cur.fetchone()
        if row is None:  # not stored (yet): not cached, so a later payload asks again
            return SYSTEM_OWNER
        if len(self._reminders) >= OWNER_CACHE_MAX:
            self._reminders.clear()
        self._reminders[reminder_id] = owner = str(row["user_id"])
        return owner


def is_encrypted(payload: Payload) -> bool:
    return payload.metadata.get("encoding") == ENCODING


def payload_key_id(payload: Payload) -> str:
    return payload.metadata[KEY_ID].decode()


def payload_user(payload: Payload) -> str:
    """The user id written beside an encrypted payload ("" for the system's)."""
    return payload.metadata.get(USER_ID, b"").decode()


def open_payload(payload: Payload, key: DataKey) -> Payload:
    """An encrypted payload decrypted with its key; `InvalidTag` when tampered with."""
    decoded = Payload()
    decoded.ParseFromString(unseal(key.aead, payload.data, key.key_id.encode()))
    return decoded


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    """Encrypts every payload under its user's data key; decodes by the key id it carries."""

    def __init__(
        self, keyring: Keyring, owners: OwnerResolver | None = None, workflow_id: str | None = None
    ) -> None:
        self.keyring = keyring
        self.owners = owners or OwnerResolver(keyring.pool)
        self.workflow_id = workflow_id

    def with_context(self, context: SerializationContext) -> Self:
        """The same codec, encoding for the workflow the context names."""
        workflow_id = None
        if isinstance(context, (WorkflowSerializationContext, ActivitySerializationContext)):
            workflow_id = context.workflow_id
        return type(self)(self.keyring, self.owners, workflow_id)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        owner = await self.owners.owner(self.workflow_id)
        return await self.encode_for(owner, payloads)

    async def encode_for(self, owner: str, payloads: Sequence[Payload]) -> list[Payload]:
        """Encrypt under the owner's active key."""
        key = await self.keyring.active_key(owner)
        metadata = {"encoding": ENCODING, KEY_ID: key.key_id.encode()}
        if owner != SYSTEM_OWNER:
            metadata[USER_ID] = owner.encode()
        aad = key.key_id.encode()
        return [
            Payload(metadata=metadata, data=seal(key.aead, p.SerializeToString(), aad))
            for p in payloads
        ]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self.decode_one(p) for p in payloads]

    async def decode_one(self, payload: Payload) -> Payload:
        """The original payload; unencrypted ones as they are. KeyDestroyedError when the key is
        gone, `cryptography.exceptions.InvalidTag` when the bytes were tampered with."""
        if not is_encrypted(payload):
            return payload
        return open_payload(payload, await self.keyring.key(payload_key_id(payload)))


# A retried activity's last failure is kept by the server only up to a few KB
# (`limit.mutableStateActivityFailureSize.error`); a bigger one reads "Failure exceeds size
# limit." and its error is lost. The stack trace of each failure in a chain keeps its end.
STACK_TRACE_CHARS = 1200


class BoundedFailureConverter(DefaultFailureConverterWithEncodedAttributes):
    """Message and stack trace in encoded attributes, each stack trace cut to its last
    `STACK_TRACE_CHARS` characters (the innermost frames and the error)."""

    def to_failure(
        self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure
    ) -> None:
        super().to_failure(exception, payload_converter, failure)  # causes come through here too
        if not failure.HasField("encoded_attributes"):
            return
        [attributes] = payload_converter.from_payloads([failure.encoded_attributes])
        stack = attributes.get("stack_trace") or ""
        if len(stack) > STACK_TRACE_CHARS:
            attributes["stack_trace"] = "…" + stack[-STACK_TRACE_CHARS:]
            failure.encoded_attributes.CopyFrom(payload_converter.to_payloads([attributes])[0])


_SHARED_ENCODERS = tuple(PydanticPayloadConverter().converters.values())


class SharedPydanticPayloadConverter(PydanticPayloadConverter):
    """The pydantic payload converter, every instance using the same encoders (one type-adapter
    cache). The SDK makes a converter for each workflow run, activation and context switch
    (about 75 per chat turn), each with an empty cache; these cost next to nothing."""

    def __init__(self) -> None:
        CompositePayloadConverter.__init__(self, *_SHARED_ENCODERS)


@dataclasses.dataclass(frozen=True)
class EncryptedDataConverter(DataConverter):
    """A data converter whose `with_context` copies itself with the parts that take a context
    (the codec: the workflow it encrypts for) instead of rebuilding every part."""

    def with_context(self, context: SerializationContext) -> Self:
        """This converter for `context`; itself when no part depends on it."""
        changed = {}
        for name in ("payload_converter", "payload_codec", "failure_converter", "external_storage"):
            part = getattr(self, name)
            if isinstance(part, WithSerializationContext):
                with_context = part.with_context(context)
                if with_context is not part:
                    changed[name] = with_context
        if not changed:
            return self
        clone = copy.copy(self)  # no `__post_init__`: the converters are kept, not rebuilt
        for name, part in changed.items():
            object.__setattr__(clone, name, part)
        return clone


def encrypted_data_converter(keyring: Keyring) -> DataConverter:
    """Memoir's pydantic converter with the encryption codec; failure messages and stack traces
    travel in encoded attributes, so they are encrypted too."""
    return EncryptedDataConverter(
        payload_converter_class=SharedPydanticPayloadConverter,
        payload_codec=EncryptionCodec(keyring),
        failure_converter_class=BoundedFailureConverter,
    )


def keyring_of(converter: DataConverter) -> Keyring | None:
    """The keyring behind a client's converter, if it encrypts."""
    codec = converter.payload_codec
    return codec.keyring if isinstance(codec, EncryptionCodec) else None


async def destroy_user_keys(client: Client, pool: Pool, user_id: str) -> int:
    """Crypto-shred a user: delete their data keys (and drop them from the client's cache)."""
    keyring = keyring_of(client.data_converter)
    if keyring is not None:
        return await keyring.destroy(user_id)
    return await destroy_keys(pool, user_id)

"""Security fixtures: the API package's real stack (dev server whose client encrypts, real worker,
real Postgres, scripted model), and helpers to read a history's raw payloads."""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload

from tests.api.conftest import (  # noqa: F401  (fixtures reused by this package)
    app,
    gc_between_tests,
    harness,
    http,
    other_user,
    settings,
    temporal_client,
    temporal_env,
    user,
)


def payloads_in(message: Message) -> list[Payload]:
    """Every `Payload` anywhere inside a protobuf message (a history event, say)."""
    if isinstance(message, Payload):
        return [message]
    found: list[Payload] = []
    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            values = list(value.values())
        elif field.is_repeated:
            values = list(value)
        else:
            values = [value]
        for item in values:
            if isinstance(item, Message):
                found += payloads_in(item)
    return found


def payload_json(payload: Payload) -> dict[str, Any]:
    """A payload as the codec-server protocol carries it."""
    return {
        "metadata": {k: base64.b64encode(v).decode() for k, v in payload.metadata.items()},
        "data": base64.b64encode(payload.data).decode(),
    }


def json_data(item: dict[str, Any]) -> bytes:
    return base64.b64decode(item["data"])


def json_encoding(item: dict[str, Any]) -> bytes:
    return base64.b64decode(item["metadata"].get("encoding", ""))

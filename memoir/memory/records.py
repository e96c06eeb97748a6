"""Message records: every user message and assistant reply, kept as retrievable evidence.

The remember stage (stage 12) turns a turn into at most two records, the user's message
(`{turn_id}:user`, its own `message_id`) and the reply (`{turn_id}:agent`, message id
`{message_id}:reply`, only when the reply has text), and writes them with their embeddings in
the same transaction as the interaction history (`save_turn_history`): both or neither, once
per turn however often the activity is retried. Facts and episodes cite these message ids
(`source_message_ids`), so an answer can point at the exact message.

Who spoke: the message's own `speaker_name` (an imported conversation's participant), else an
email's sender, else the user's name; the reply is the assistant's. When: the message's
`received_at` (the turn's arrival), else now; the reply, now.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.utils import parseaddr

from memoir.db import Connection
from memoir.embeddings import Embedder
from memoir.models import ExecutionResult, IncomingMessage, RememberRequest
from memoir.stores import MessageRecord, Stores

__all__ = [
    "REPLY_SUFFIX",
    "CONTEXT_WINDOW",
    "embed_records",
    "embedding_text",
    "reply_message_id",
    "save_turn_history",
    "speaker_name",
    "turn_records",
]

REPLY_SUFFIX = ":reply"
CONTEXT_WINDOW = timedelta(minutes=30)  # a message this soon after the previous one replies to it


def reply_message_id(message_id: str) -> str:
    """The message id of the reply to `message_id` (incoming ids never hold ':')."""
    return f"{message_id}{REPLY_SUFFIX}"


def speaker_name(message: IncomingMessage, user_name: str | None) -> str | None:
    """Who wrote the message: its own speaker name, an email's sender, else the user."""
    if message.speaker_name:
        return message.speaker_name
    if message.email is not None:
        name, address = parseaddr(message.email.author)
        return name or address or message.email.author or None
    return user_name or None


def turn_records(
    request: RememberRequest, *, user_name: str | None, now: datetime
) -> list[MessageRecord]:
    """The turn's records: the user's message, then the reply when it has text."""
    message = request.message
    said_at = message.received_at or now
    records = [
        MessageRecord(
            record_id=f"{request.turn_id}:user",
            user_id=message.user_id,
            thread_id=message.thread_id,
            message_id=message.message_id,
            speaker="user",
            speaker_name=speaker_name(message, user_name),
            text=message.text,
            said_at=said_at,
        )
    ]
    if request.reply.strip():
        records.append(
            MessageRecord(
                record_id=f"{request.turn_id}:agent",
                user_id=message.user_id,
                thread_id=message.thread_id,
                message_id=reply_message_id(message.message_id),
                speaker="assistant",
                text=request.reply,
                said_at=max(now, said_at),
            )
        )
    return records


def _follows(record: MessageRecord, previous: MessageRecord | None) -> bool:
    """Whether `previous` is `record`'s context: same user and thread, said shortly before."""
    return (
        previous is not None
        and previous.user_id == record.user_id
        and previous.thread_id == record.thread_id
        and timedelta(0) <= record.said_at - previous.said_at <= CONTEXT_WINDOW
    )


def _contexts(
    records: Sequence[MessageRecord], previous: MessageRecord | None
) -> list[MessageRecord | None]:
    """Each record's previous message: the one before it in the turn, else `previous`."""
    out: list[MessageRecord | None] = []
    for record in records:
        out.append(previous if _follows(record, previous) else None)
        previous = record
    return out


def embedding_text(record: MessageRecord, previous: MessageRecord | None) -> str:
    """What a record is embedded as: its text, then the message it replies to, if any."""
    return f"{record.text}\n(Replying to: {previous.text})" if previous else record.text


async def embed_records(
    embedder: Embedder, records: Sequence[MessageRecord], previous: MessageRecord | None = None
) -> list[list[float]]:
    """One embedding per record, in one batch, off the event loop (CPU work).

    A record said within CONTEXT_WINDOW after its thread's previous message (`previous`, or the
    record before it in `records`) is embedded with that message after its own text, so an
    answer like "Went painting with the kids!" is found by the question it answers. The stored
    text, and so bullets, citations and lexical search, stay the record's own.
    """
    if not records:
        return []
    texts = [
        embedding_text(r, c) for r, c in zip(records, _contexts(records, previous), strict=True)
    ]
    return await asyncio.to_thread(embedder.embed, texts)


def _tool_calls(results: Sequence[ExecutionResult]) -> list[dict[str, object]]:
    return [{"id": r.step_id, "name": r.capability, "args": r.args} for r in results]


def _tool_responses(results: Sequence[ExecutionResult]) -> list[dict[str, object]]:
    return [
        {"tool_call_id": r.step_id, "name": r.capability, "content": r.summary} for r in results
    ]


async def _history_in(conn: Connection, stores: Stores, request: RememberRequest) -> list[str]:
    """The interaction rows of the turn (seed 004) on `conn`; their event names."""
    message, events = request.message, []
    if await stores.interactions.save_interaction_in(
        conn,
        key=f"{request.turn_id}:user",
        user_id=message.user_id,
        thread_id=message.thread_id,
        actor="user",
        content=message.text,
        message_id=message.message_id,
    ):
        events.append("history.user")
    if request.reply or request.results:
        await stores.interactions.save_interaction_in(
            conn,
            key=f"{request.turn_id}:agent",
            user_id=message.user_id,
            thread_id=message.thread_id,
            actor="agent",
            content=request.reply,
            tool_calls=_tool_calls(request.results) or None,
            tool_responses=_tool_responses(request.results) or None,
        )
        events.append("history.agent")
    return events


async def save_turn_history(
    stores: Stores,
    request: RememberRequest,
    records: Sequence[MessageRecord],
    embeddings: Sequence[Sequence[float]],
) -> list[str]:
    """Interaction history and message records of one turn in ONE transaction; event names.

    Idempotent: every row is keyed by the turn, so a retry writes nothing twice.
    """
    if len(records) != len(embeddings):
        raise ValueError("one embedding per record")
    async with stores.pool.connection() as conn, conn.transaction():
        events = await _history_in(conn, stores, request)
        for record, embedding in zip(records, embeddings, strict=True):
            if await stores.messages.add_in(conn, record, embedding):
                events.append(f"record.{record.speaker}")
    return events

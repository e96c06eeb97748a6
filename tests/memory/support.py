"""Builders shared by the memory tests: memories, turns, remember requests, counting fakes."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memoir.memory.models import Memory, MemoryKind, VectorHit
from memoir.models import (
    ExecutionResult,
    IncomingMessage,
    RecentMessage,
    RememberRequest,
    TurnContext,
    TurnRequest,
    TurnStatus,
    UserProfile,
)
from memoir.vectors.base import Filter, VectorStore

DIM = 384
# Wednesday 15 January 2025, 09:30 UTC.
NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)


def memory(
    summary: str = "User's dog Luna is 3 years old.",
    *,
    memory_id: str = "m1",
    user_id: str = "u1",
    kind: MemoryKind = MemoryKind.SEMANTIC,
    category: str = "pet",
    importance: float = 0.8,
    key: str | None = None,
    pinned: bool = False,
    updated_at: datetime = NOW,
    sources: Sequence[str] = ("msg-1",),
) -> Memory:
    """A Memory for pure tests (no store)."""
    return Memory(
        memory_id=memory_id,
        user_id=user_id,
        kind=kind,
        category=category,
        summary=summary,
        importance=importance,
        key=key,
        pinned=pinned,
        source_message_ids=list(sources),
        created_at=updated_at,
        updated_at=updated_at,
    )


def turn(
    user: UserProfile,
    text: str,
    *,
    message_id: str = "msg-1",
    now: datetime = NOW,
    recent: Sequence[str] = (),
) -> TurnRequest:
    """A chat turn of `user` saying `text` (earlier user turns in `recent`)."""
    message = IncomingMessage(
        user_id=user.user_id, thread_id="t1", message_id=message_id, text=text
    )
    context = TurnContext(
        user=user,
        now=now,
        recent_messages=[RecentMessage(role="user", content=r, at=now) for r in recent],
    )
    return TurnRequest(
        turn_id=f"turn:{user.user_id}:t1:{message_id}", message=message, context=context
    )


def remember(
    user: UserProfile,
    text: str,
    *,
    message_id: str = "msg-1",
    reply: str = "Done.",
    results: Sequence[ExecutionResult] = (),
    status: TurnStatus = TurnStatus.COMPLETED,
) -> RememberRequest:
    """The stage-12 request of one turn."""
    message = IncomingMessage(
        user_id=user.user_id, thread_id="t1", message_id=message_id, text=text
    )
    return RememberRequest(
        turn_id=f"turn:{user.user_id}:t1:{message_id}",
        message=message,
        reply=reply,
        results=list(results),
        status=status,
    )


def reminder_result(text: str, due_at: str = "2025-01-15T17:00:00+00:00") -> ExecutionResult:
    """A successful reminders.create step."""
    return ExecutionResult(
        step_id="s1",
        capability="reminders.create",
        success=True,
        summary=f"Reminder set: {text}",
        args={"text": text, "due_at": due_at},
    )


def unit_toward(cos: float, axis: int) -> list[float]:
    """A unit vector whose cosine with axis 0 is `cos`, bending toward `axis`."""
    v = [0.0] * DIM
    v[0] = cos
    v[axis] = math.sqrt(max(0.0, 1.0 - cos * cos))
    return v


AXIS0 = unit_toward(1.0, 1)


def hashed_vector(text: str) -> list[float]:
    """A deterministic unit vector for any text, far from the designed ones (high axes)."""
    digest = hashlib.sha256(text.encode()).digest()
    v = [0.0] * DIM
    for i, b in enumerate(digest):
        v[200 + (i * 5) % 180] += (b / 255.0) - 0.5
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class DesignedEmbedder:
    """Vectors chosen by the test for known texts; a hashed vector for anything else; counts."""

    def __init__(self, vectors: dict[str, list[float]] | None = None) -> None:
        self.vectors = dict(vectors or {})
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [self.vectors.get(t, hashed_vector(t)) for t in texts]


class CountingEmbedder:
    """Wraps a real embedder and counts the texts it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        result: list[list[float]] = self.inner.embed(texts)
        return result


class CountingVectors:
    """Wraps a VectorStore and counts its queries (with their filters)."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.queries: list[Filter | None] = []

    async def upsert(
        self, user_id: str, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]
    ) -> None:
        await self.inner.upsert(user_id, items)

    async def query(
        self, user_id: str, vector: Sequence[float], *, top_k: int, filter: Filter | None = None
    ) -> list[VectorHit]:
        self.queries.append(filter)
        return await self.inner.query(user_id, vector, top_k=top_k, filter=filter)

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        await self.inner.delete(user_id, ids)

    async def delete_user(self, user_id: str) -> None:
        await self.inner.delete_user(user_id)

"""Fixtures for the LLM layer: one embedding model per session, request factories."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memoir.embeddings import LocalEmbedder, get_local_embedder  # noqa: E402
from memoir.llm import OfflineChatModel  # noqa: E402
from memoir.models import (  # noqa: E402
    Channel,
    EmailMessage,
    ExecutionResult,
    IncomingMessage,
    LatestAction,
    MemoryContext,
    Plan,
    PlanRequest,
    RecentMessage,
    ReplyRequest,
    TurnContext,
    TurnRequest,
    UserProfile,
)

# Wednesday 15 January 2025, 09:30 UTC (10:30 in Paris).
NOW = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)
ALL_CAPABILITIES = [
    "reminders.create",
    "reminders.list",
    "reminders.complete",
    "reminders.delete",
    "email.send",
    "calendar.availability",
    "calendar.schedule",
    "calendar.update",
    "calendar.cancel",
]


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once for the whole session."""
    local = get_local_embedder()
    local.load()
    return local


@pytest.fixture(scope="session")
def offline(embedder: LocalEmbedder) -> OfflineChatModel:
    return OfflineChatModel(embedder=embedder)


def _turn(
    text: str,
    *,
    tz: str,
    now: datetime,
    email: EmailMessage | None = None,
    latest: Sequence[LatestAction] = (),
    recent: Sequence[RecentMessage] = (),
    bullets: Sequence[str] = (),
) -> TurnRequest:
    message = IncomingMessage(
        user_id="u1",
        thread_id="t1",
        message_id="m1",
        text=text,
        channel=Channel.EMAIL if email else Channel.CHAT,
        email=email,
    )
    context = TurnContext(
        user=UserProfile(user_id="u1", name="Ana", timezone=tz, capabilities=ALL_CAPABILITIES),
        now=now,
        latest_actions=list(latest),
        recent_messages=list(recent),
    )
    return TurnRequest(
        turn_id="turn:u1:t1:m1",
        message=message,
        context=context,
        memory=MemoryContext(bullets=list(bullets)),
    )


PlanRequestFactory = Callable[..., PlanRequest]
ReplyRequestFactory = Callable[..., ReplyRequest]


@pytest.fixture
def plan_request() -> PlanRequestFactory:
    """plan_request(text, tz=, now=, email=, latest=, recent=, feedback=, bullets=)."""

    def make(
        text: str,
        *,
        tz: str = "Europe/Paris",
        now: datetime = NOW,
        email: EmailMessage | None = None,
        latest: Sequence[LatestAction] = (),
        recent: Sequence[RecentMessage] = (),
        feedback: Sequence[str] = (),
        bullets: Sequence[str] = (),
    ) -> PlanRequest:
        turn = _turn(
            text, tz=tz, now=now, email=email, latest=latest, recent=recent, bullets=bullets
        )
        return PlanRequest(turn=turn, feedback=list(feedback))

    return make


@pytest.fixture
def reply_request() -> ReplyRequestFactory:
    """reply_request(text, plan, results, note=, tz=, now=, email=, classification=)."""

    def make(
        text: str,
        plan: Plan | None,
        results: Sequence[ExecutionResult],
        *,
        note: str | None = None,
        tz: str = "Europe/Paris",
        now: datetime = NOW,
        email: EmailMessage | None = None,
        bullets: Sequence[str] = (),
        **kwargs: object,
    ) -> ReplyRequest:
        turn = _turn(text, tz=tz, now=now, email=email, bullets=bullets)
        return ReplyRequest(turn=turn, plan=plan, results=list(results), note=note, **kwargs)

    return make

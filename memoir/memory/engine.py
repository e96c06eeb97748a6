"""`MemoryEngine`: the memory stages of a turn behind three calls the activities make.

engine = MemoryEngine(settings, llm, embedder, memories, user_context, pool)
hot = await engine.hotpath(turn)              # stage 2: MemoryContext(profile_line, events)
ctx = await engine.context(turn)              # stage 3: facts, episodes and message records
events = await engine.capture(request, recent, timezone)   # stage 12: event names
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from langchain_core.language_models import BaseChatModel

from memoir.db import Pool
from memoir.embeddings import Embedder
from memoir.memory.context import ContextResult, memory_context
from memoir.memory.episodic import CaptureResult, episodic_capture
from memoir.memory.episodic_state import EpisodicStateStore
from memoir.memory.hotpath import HotpathResult, memory_hotpath
from memoir.memory.rerank import parse_weights
from memoir.models import MemoryContext, RecentMessage, RememberRequest, TurnRequest
from memoir.settings import Settings
from memoir.stores.memories import MemoryStore
from memoir.stores.messages import MessageRecordStore
from memoir.stores.user_context import UserContextStore
from memoir.telemetry.spans import memory_decision

__all__ = ["MemoryEngine"]


class MemoryEngine:
    """Semantic hot path, retrieval and episodic capture over one set of stores."""

    def __init__(
        self,
        settings: Settings,
        llm: BaseChatModel,
        embedder: Embedder,
        memories: MemoryStore,
        user_context: UserContextStore,
        pool: Pool,
        *,
        cite_sources: bool = True,
        records: MessageRecordStore | None = None,
    ) -> None:
        self.settings = settings
        self.cite_sources = cite_sources
        self.llm = llm
        self.embedder = embedder
        self.memories = memories
        self.user_context = user_context
        # Message records live in Postgres whatever the vector backend (default: on `pool`).
        self.records = records if records is not None else MessageRecordStore(pool)
        self.states = EpisodicStateStore(pool)
        self.weights = parse_weights(settings.memory_rerank_weights)  # fail fast when invalid

    async def run_hotpath(self, turn: TurnRequest) -> HotpathResult:
        """Stage 2 with everything it decided (tests, the CLI)."""
        with memory_decision("semantic") as decision:
            result = await memory_hotpath(
                turn,
                settings=self.settings,
                llm=self.llm,
                embedder=self.embedder,
                memories=self.memories,
                contexts=self.user_context,
            )
            decision.record(result.action, [o.action for o in result.outcomes], result.reason)
        return result

    async def hotpath(self, turn: TurnRequest) -> MemoryContext:
        """Stage 2: create / merge / skip one semantic memory; the profile line and events."""
        result = await self.run_hotpath(turn)
        return MemoryContext(profile_line=result.profile_line, events=result.events)

    async def run_context(
        self, turn: TurnRequest, *, settings: Settings | None = None
    ) -> ContextResult:
        """Stage 3 with the scored memories it chose (`settings` overrides the engine's, e.g. a
        larger top-n for an evaluation)."""
        return await memory_context(
            turn,
            settings=settings or self.settings,
            embedder=self.embedder,
            memories=self.memories,
            records=self.records,
            weights=self.weights,
            cite=self.cite_sources,
        )

    async def context(self, turn: TurnRequest) -> MemoryContext:
        """Stage 3: memory bullets (when, who, source ids), the "Now: …" line, and events."""
        result = await self.run_context(turn)
        return MemoryContext(bullets=result.bullets, now_line=result.now_line, events=result.events)

    async def run_capture(
        self,
        request: RememberRequest,
        recent: Sequence[RecentMessage],
        timezone: str | None = None,
        now: datetime | None = None,
    ) -> CaptureResult:
        """Stage 12 with the episode it wrote (timezone None: the user's, from their context)."""
        if timezone is None:
            ctx = await self.user_context.get(request.message.user_id)
            timezone = ctx.timezone or "UTC"
        with memory_decision("episodic") as decision:
            result = await episodic_capture(
                request,
                recent=recent,
                timezone=timezone,
                settings=self.settings,
                llm=self.llm,
                embedder=self.embedder,
                memories=self.memories,
                states=self.states,
                now=now or datetime.now(UTC),
            )
            decision.record(result.action, reason=result.reason)
        return result

    async def capture(
        self,
        request: RememberRequest,
        recent: Sequence[RecentMessage],
        timezone: str | None = None,
        now: datetime | None = None,
    ) -> list[str]:
        """Stage 12: episodic capture after the turn; returns its event names.

        `recent`: the thread's latest messages (the last `EPISODIC_WINDOW_N` user/assistant ones
        feed the summarizer); `timezone`: the user's IANA zone (None: read from their context);
        `now`: the capture time (default: the current time).
        """
        result = await self.run_capture(request, recent, timezone, now)
        return result.events

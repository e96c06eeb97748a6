"""Stages 2, 3 and 12's episodic capture: long-term memory around the turn (seeds 001, 003)."""

from temporalio import activity

from activities.deps import Deps
from memoir.memory.engine import MemoryEngine
from memoir.models import MemoryContext, MemoryStages, RememberRequest, TurnRequest, names


class MemoryActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        stores = deps.stores
        self._engine = MemoryEngine(
            deps.settings,
            deps.llm,
            deps.embedding_model(),
            stores.memories,
            stores.user_context,
            stores.pool,
            records=stores.messages,
        )

    @activity.defn(name=names.MEMORY_HOTPATH)
    async def memory_hotpath(self, turn: TurnRequest) -> MemoryContext:
        """Semantic create / merge / skip from the user's last turns, and the profile line."""
        return await self._engine.hotpath(turn)

    @activity.defn(name=names.MEMORY_CONTEXT)
    async def memory_context(self, turn: TurnRequest) -> MemoryContext:
        """Retrieved, reranked memory bullets and the 'Now: …' line."""
        return await self._engine.context(turn)

    @activity.defn(name=names.MEMORY_STAGES)
    async def memory_stages(self, turn: TurnRequest) -> MemoryStages:
        """Stages 2 then 3 in one activity (they always run together): each one's result."""
        hotpath = await self._engine.hotpath(turn)
        return MemoryStages(hotpath=hotpath, context=await self._engine.context(turn))

    @activity.defn(name=names.EPISODIC_CAPTURE)
    async def episodic_capture(self, request: RememberRequest) -> list[str]:
        """Create, merge or skip an episode from the turn's outcome."""
        message = request.message
        recent = await self._deps.stores.interactions.recent_messages(
            message.user_id, message.thread_id, limit=2 * self._deps.settings.episodic_window_n
        )
        return await self._engine.capture(request, recent)

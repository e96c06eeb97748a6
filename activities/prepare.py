"""Stages 1, 2-3 and 6 of a chat turn in one activity (turn version 2).

For chat, nothing between the context, the memory stages and the first plan is a workflow
decision (triage is email's), so they run together: one server round trip instead of a local
activity and two activities. The result keeps each stage's own output under its name, so the Web
UI still shows what each one found. Each stage is the same code as its own activity.
"""

from temporalio import activity

from activities.context import ContextActivities
from activities.memory import MemoryActivities
from activities.plan import PlanActivities
from memoir.models import PlanRequest, PreparedTurn, PrepareRequest, TurnRequest, names


class PrepareActivities:
    def __init__(
        self, context: ContextActivities, memory: MemoryActivities, plan: PlanActivities
    ) -> None:
        self._context, self._memory, self._plan = context, memory, plan

    @activity.defn(name=names.CONTEXT_MEMORY_AND_PLAN)
    async def context_memory_and_plan(self, request: PrepareRequest) -> PreparedTurn:
        """The turn's context, then its memory stages, then its plan (and the reply of a plan
        that answers alone)."""
        context = await self._context.assemble_context(request.message)
        turn = TurnRequest(turn_id=request.turn_id, message=request.message, context=context)
        memory = await self._memory.memory_stages(turn)
        turn.memory = memory.for_turn()
        plan_request = PlanRequest(turn=turn, classification=request.classification)
        planned = await self._plan.plan_and_answer(plan_request)
        return PreparedTurn(context=context, memory=memory, planned=planned)

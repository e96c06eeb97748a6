"""Stages 1, 2-3 and 6 of a chat turn in one activity (turn version 2), and stage 12 when the
plan answers alone.

For chat, nothing between the context, the memory stages and the first plan is a workflow
decision (triage is email's), so they run together: one server round trip instead of a local
activity and two activities. A plan that answers alone (no step, nothing to ask) settles the
turn's outcome, completed with the plan's reply, so the turn is remembered here too, as the
workflow would have: its last workflow task then only completes it. The result keeps each
stage's own output under its name, so the Web UI still shows what each one found. Each stage is
the same code as its own activity.
"""

from temporalio import activity

from activities.context import ContextActivities
from activities.memory import MemoryActivities
from activities.plan import PlanActivities
from activities.remember import RememberActivities
from memoir.models import (
    PlanRequest,
    PreparedTurn,
    PrepareRequest,
    RememberRequest,
    TurnRequest,
    names,
)


class PrepareActivities:
    def __init__(
        self,
        context: ContextActivities,
        memory: MemoryActivities,
        plan: PlanActivities,
        remember: RememberActivities,
    ) -> None:
        self._context, self._memory, self._plan = context, memory, plan
        self._remember = remember

    @activity.defn(name=names.CONTEXT_MEMORY_AND_PLAN)
    async def context_memory_and_plan(self, request: PrepareRequest) -> PreparedTurn:
        """The turn's context, then its memory stages, then its plan (and the reply of a plan
        that answers alone, remembered with the turn)."""
        context = await self._context.assemble_context(request.message)
        turn = TurnRequest(turn_id=request.turn_id, message=request.message, context=context)
        memory = await self._memory.memory_stages(turn)
        turn.memory = memory.for_turn()
        plan_request = PlanRequest(turn=turn, classification=request.classification)
        planned = await self._plan.plan_and_answer(plan_request)
        prepared = PreparedTurn(context=context, memory=memory, planned=planned)
        if planned.reply is not None:  # answers alone: the turn completes with this reply
            remember = RememberRequest.answered_alone(
                request.turn_id, request.message, planned.reply, context.user.name
            )
            prepared.remembered = await self._remember.remember_stages(remember)
        return prepared

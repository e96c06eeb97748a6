"""Stage 6: plan the turn (seed 002 PlannerNode); a plan that is an answer alone gets its reply
(stage 11) in the same activity."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import (
    RESPONSE_AGENT_PREFERENCES,
    Plan,
    PlannedTurn,
    PlanRequest,
    ReplyRequest,
    names,
)
from memoir.planner import make_plan
from memoir.responder import write_reply
from workflows.hitl import plan_question


def answers_alone(plan: Plan) -> bool:
    """No step to run and nothing to ask: the turn's next stage is its reply."""
    return not plan.steps and plan_question(plan) is None


class PlanActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.PLAN)
    async def plan(self, request: PlanRequest) -> Plan:
        return await self._plan(request, await self._preferences(request))

    @activity.defn(name=names.PLAN_AND_ANSWER)
    async def plan_and_answer(self, request: PlanRequest) -> PlannedTurn:
        """The plan, and when it answers alone its reply: one server round trip, not two."""
        preferences = await self._preferences(request)
        plan = await self._plan(request, preferences)
        if not answers_alone(plan):
            return PlannedTurn(plan=plan)
        reply_request = ReplyRequest(
            turn=request.turn, plan=plan, results=[], classification=request.classification
        )
        reply = await write_reply(self._deps.llm, reply_request, preferences=preferences)
        return PlannedTurn(plan=plan, reply=reply)

    async def _preferences(self, request: PlanRequest) -> dict[str, str]:
        user_id = request.turn.context.user.user_id
        return await self._deps.stores.preferences.get_memories(user_id, RESPONSE_AGENT_PREFERENCES)

    async def _plan(self, request: PlanRequest, preferences: dict[str, str]) -> Plan:
        capabilities = request.turn.context.user.capabilities
        plan = await make_plan(self._deps.llm, request, capabilities, preferences)
        activity.logger.info(
            "plan %s: %s (confidence %.2f, %d steps)",
            request.turn.turn_id,
            plan.intent,
            plan.confidence,
            len(plan.steps),
        )
        return plan

"""Stage 6: plan the turn (seed 002 PlannerNode)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import Plan, PlanRequest, names
from memoir.planner import make_plan


class PlanActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.PLAN)
    async def plan(self, request: PlanRequest) -> Plan:
        capabilities = request.turn.context.user.capabilities
        plan = await make_plan(self._deps.llm, request, capabilities)
        activity.logger.info(
            "plan %s: %s (confidence %.2f, %d steps)",
            request.turn.turn_id,
            plan.intent,
            plan.confidence,
            len(plan.steps),
        )
        return plan

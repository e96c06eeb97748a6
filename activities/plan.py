"""Stage 6: plan the turn (seed 002 PlannerNode)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import Plan, PlanRequest, names
from memoir.planner import make_plan

# The preference texts the planner follows (seed 000: the response agent reads them).
PLANNER_PREFERENCES = ("response_preferences", "cal_preferences")


class PlanActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.PLAN)
    async def plan(self, request: PlanRequest) -> Plan:
        user = request.turn.context.user
        store = self._deps.stores.preferences
        preferences = {ns: await store.get_memory(user.user_id, ns) for ns in PLANNER_PREFERENCES}
        plan = await make_plan(self._deps.llm, request, user.capabilities, preferences)
        activity.logger.info(
            "plan %s: %s (confidence %.2f, %d steps)",
            request.turn.turn_id,
            plan.intent,
            plan.confidence,
            len(plan.steps),
        )
        return plan

"""Temporal activities, one module per stage; each is thin and calls the domain in `memoir`."""

from collections.abc import Callable
from typing import Any

from activities.context import ContextActivities
from activities.deps import Deps
from activities.memory import MemoryActivities
from activities.plan import PlanActivities
from activities.preferences import PreferenceActivities
from activities.prepare import PrepareActivities
from activities.remember import RememberActivities
from activities.respond import RespondActivities
from activities.steps import StepActivities
from activities.triage import TriageActivities


def all_activities(deps: Deps) -> list[Callable[..., Any]]:
    """Every activity a Memoir worker registers, bound to one set of dependencies."""
    context = ContextActivities(deps)
    memory = MemoryActivities(deps)
    steps = StepActivities(deps)
    plan = PlanActivities(deps)
    remember = RememberActivities(deps, episodic=memory.episodic_capture)
    return [
        PrepareActivities(context, memory, plan, remember).context_memory_and_plan,
        context.assemble_context,
        memory.memory_stages,
        memory.memory_hotpath,
        memory.memory_context,
        memory.episodic_capture,
        TriageActivities(deps).triage,
        PreferenceActivities(deps).update_preferences,
        plan.plan,
        plan.plan_and_answer,
        steps.resolve_step,
        steps.execute_step,
        RespondActivities(deps).write_reply,
        remember.remember_stages,
        remember.remember_turn,
        remember.deliver_reminder,
    ]


__all__ = ["Deps", "all_activities"]

"""Plan scheduling: steps grouped by `depends_on`, each group runnable in parallel."""

from memoir.models import PlanStep


class CyclicPlan(ValueError):
    """The plan's `depends_on` edges form a cycle or name unknown steps."""


def dependency_groups(steps: list[PlanStep]) -> list[list[PlanStep]]:
    """Topological levels: a step lands in the first group after all the steps it depends on."""
    by_id = {step.id: step for step in steps}
    for step in steps:
        unknown = [dep for dep in step.depends_on if dep not in by_id]
        if unknown:
            raise CyclicPlan(f"step {step.id} depends on unknown steps {unknown}")
    placed: set[str] = set()
    groups: list[list[PlanStep]] = []
    while len(placed) < len(steps):
        group = [
            step
            for step in steps
            if step.id not in placed and all(dep in placed for dep in step.depends_on)
        ]
        if not group:
            raise CyclicPlan("the plan's depends_on edges form a cycle")
        groups.append(group)
        placed.update(step.id for step in group)
    return groups

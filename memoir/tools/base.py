"""A capability as the turn sees it: it resolves a step's args, then executes the step once."""

from typing import Protocol

from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution


class Tool(Protocol):
    async def resolve(self, request: ResolveRequest) -> StepResolution: ...

    async def execute(self, request: ExecuteRequest) -> ExecutionResult: ...


class UnknownCapability(LookupError):
    """The plan names a capability no tool provides (non-retryable)."""


def failure(request: ExecuteRequest, error: str) -> ExecutionResult:
    """A step that ran and could not do its job, said plainly."""
    return ExecutionResult(
        step_id=request.step.id,
        capability=request.step.capability,
        success=False,
        summary=error,
        error=error,
    )

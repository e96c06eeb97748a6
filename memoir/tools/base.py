"""A capability as the turn sees it: it resolves a step's args, then executes the step once."""

from datetime import UTC, datetime
from typing import Any, Protocol

from memoir.models import (
    ExecuteRequest,
    ExecutionResult,
    LatestAction,
    ResolveRequest,
    StepResolution,
)


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


def success(
    request: ExecuteRequest,
    summary: str,
    data: dict[str, Any],
    *,
    action: str | None = None,
    when: str | None = None,
    ids: dict[str, str] | None = None,
) -> ExecutionResult:
    """A step that did its job, kept as a latest action of its capability family (seed 002)."""
    family, _, verb = request.step.capability.partition(".")
    return ExecutionResult(
        step_id=request.step.id,
        capability=request.step.capability,
        success=True,
        summary=summary,
        data=data,
        latest_action=LatestAction(
            created_at=datetime.now(UTC),
            capability=family,
            action=action or verb,
            summary=summary.split("\n", 1)[0],
            when=when,
            external_ids=ids or {},
        ),
    )


def not_found(step_id: str, message: str) -> StepResolution:
    """Entity resolution found nothing: the message says so to the user."""
    return StepResolution(step_id=step_id, status="not_found", message=message)

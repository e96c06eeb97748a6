"""Stages 9 and 10: resolve a step's entities, then execute it with its idempotency key."""

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution, names
from memoir.telemetry.spans import tool_call
from memoir.tools import UnknownCapability


class StepActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.RESOLVE_STEP)
    async def resolve_step(self, request: ResolveRequest) -> StepResolution:
        try:
            return await self._deps.tools.resolve(request)
        except UnknownCapability as error:
            raise ApplicationError(
                str(error), type="UnknownCapability", non_retryable=True
            ) from error

    @activity.defn(name=names.EXECUTE_STEP)
    async def execute_step(self, request: ExecuteRequest) -> ExecutionResult:
        """Runs once per step; a retried attempt reuses the same idempotency key."""
        activity.logger.info(
            "execute %s key=%s attempt=%d",
            request.step.capability,
            request.idempotency_key,
            activity.info().attempt,
        )
        with tool_call(request) as call:
            try:
                result = await self._deps.tools.execute(request)
            except UnknownCapability as error:
                raise ApplicationError(
                    str(error), type="UnknownCapability", non_retryable=True
                ) from error
            call.done(result)
        return result.model_copy(update={"args": request.args})

"""Stage 1: assemble the turn's context (seed 002 ContextAssemblyNode)."""

from datetime import UTC, datetime

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from memoir.models import IncomingMessage, TurnContext, names


class ContextActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.ASSEMBLE_CONTEXT)
    async def assemble_context(self, message: IncomingMessage) -> TurnContext:
        """User profile and capabilities, recent messages, the last 3 latest actions."""
        stores, settings = self._deps.stores, self._deps.settings
        user = await stores.users.get_user(message.user_id)
        if user is None:
            raise ApplicationError(
                f"unknown user {message.user_id}", type="UnknownUser", non_retryable=True
            )
        learned = await stores.user_context.get(message.user_id)
        if learned.timezone:  # profile sync may have learned where the user lives now
            user = user.model_copy(update={"timezone": learned.timezone})
        now = datetime.now(UTC)
        recent = await stores.interactions.recent_messages(
            message.user_id, message.thread_id, limit=settings.session_history_limit
        )
        latest = await stores.latest_actions.latest(
            message.user_id,
            message.thread_id,
            now=now,
            limit=3,
            within_hours=settings.latest_actions_hours,
        )
        return TurnContext(user=user, now=now, recent_messages=recent, latest_actions=latest)

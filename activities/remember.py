"""Stage 12: interaction history (seed 004) and latest actions (seed 002)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import ExecutionResult, RememberRequest, ReminderDue, TurnStatus, names


def _tool_calls(results: list[ExecutionResult]) -> list[dict[str, object]]:
    return [{"id": r.step_id, "name": r.capability, "args": r.args} for r in results]


def _tool_responses(results: list[ExecutionResult]) -> list[dict[str, object]]:
    return [
        {"tool_call_id": r.step_id, "name": r.capability, "content": r.summary} for r in results
    ]


class RememberActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.REMEMBER_TURN)
    async def remember_turn(self, request: RememberRequest) -> list[str]:
        """Idempotent: every row is keyed by the turn, so a retry writes nothing twice."""
        stores, message = self._deps.stores, request.message
        user, thread = message.user_id, message.thread_id
        events: list[str] = []
        if await stores.interactions.save_interaction(
            key=f"{request.turn_id}:user",
            user_id=user,
            thread_id=thread,
            actor="user",
            content=message.text,
            message_id=message.message_id,
        ):
            events.append("history.user")
        if request.reply or request.results:
            await stores.interactions.save_interaction(
                key=f"{request.turn_id}:agent",
                user_id=user,
                thread_id=thread,
                actor="agent",
                content=request.reply,
                tool_calls=_tool_calls(request.results) or None,
                tool_responses=_tool_responses(request.results) or None,
            )
            events.append("history.agent")
        if request.status is TurnStatus.COMPLETED:
            for result in request.results:
                if result.success and result.latest_action is not None:
                    await stores.latest_actions.push(
                        user,
                        thread,
                        result.latest_action,
                        key=names.idempotency_key(request.turn_id, result.step_id),
                        max_per_thread=self._deps.settings.latest_actions_max,
                    )
                    events.append(f"latest_action:{result.capability}")
        return events

    @activity.defn(name=names.DELIVER_REMINDER)
    async def deliver_reminder(self, due: ReminderDue) -> bool:
        """Deliver once: only a reminder still pending is delivered (completed ones are skipped)."""
        stores = self._deps.stores
        delivered = await stores.reminders.mark_delivered(due.reminder_id)
        if delivered is None:
            return False
        await stores.interactions.save_interaction(
            key=f"reminder:{due.reminder_id}",
            user_id=due.user_id,
            thread_id=due.thread_id,
            actor="agent",
            content=f"⏰ Reminder: {due.text}",
        )
        return True

"""Stage 12: interaction history and message records (seed 004, issue 9), latest actions
(seed 002)."""

from datetime import UTC, datetime

from temporalio import activity

from activities.deps import Deps
from memoir.memory.records import (
    CONTEXT_WINDOW,
    embed_records,
    save_turn_history,
    turn_records,
)
from memoir.models import RememberRequest, ReminderDue, TurnStatus, names


class RememberActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    async def _user_name(self, request: RememberRequest) -> str | None:
        """The user's name, needed only when the message names no speaker of its own."""
        message = request.message
        if message.speaker_name or message.email is not None:
            return None
        user = await self._deps.stores.users.get_user(message.user_id)
        return user.name if user else None

    @activity.defn(name=names.REMEMBER_TURN)
    async def remember_turn(self, request: RememberRequest) -> list[str]:
        """Idempotent: every row is keyed by the turn, so a retry writes nothing twice.

        The message and the reply become records, embedded first, then written in the
        transaction of the interaction history.
        """
        stores, message = self._deps.stores, request.message
        records = turn_records(
            request, user_name=await self._user_name(request), now=datetime.now(UTC)
        )
        first = records[0]
        previous = await stores.messages.previous(
            first.user_id, first.thread_id, first.said_at, first.said_at - CONTEXT_WINDOW
        )
        embeddings = await embed_records(self._deps.embedding_model(), records, previous)
        events = await save_turn_history(stores, request, records, embeddings)
        if request.status is TurnStatus.COMPLETED:
            for result in request.results:
                if result.success and result.latest_action is not None:
                    await stores.latest_actions.push(
                        message.user_id,
                        message.thread_id,
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

"""Stage 12: interaction history and message records (seed 004, issue 9), latest actions
(seed 002)."""

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from temporalio import activity

from activities.deps import Deps
from memoir.memory.records import (
    CONTEXT_WINDOW,
    embed_records,
    save_turn_history,
    turn_records,
)
from memoir.models import RememberRequest, RememberStages, ReminderDue, TurnStatus, names

Capture = Callable[[RememberRequest], Awaitable[list[str]]]


class RememberActivities:
    def __init__(self, deps: Deps, episodic: Capture | None = None) -> None:
        """`episodic`: stage 12's episodic capture, run after remembering by `remember_stages`."""
        self._deps = deps
        self._episodic = episodic

    async def _user_name(self, request: RememberRequest) -> str | None:
        """The user's name, needed only when the message names no speaker of its own: as the
        turn's context read it, else from the users table."""
        message = request.message
        if message.speaker_name or message.email is not None:
            return None
        if request.user_name is not None:
            return request.user_name
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

    @activity.defn(name=names.REMEMBER_STAGES)
    async def remember_stages(self, request: RememberRequest) -> RememberStages:
        """Remember, then episodic capture (it reads the history just written), in one activity.

        Idempotent as both are: a retry after a failed capture remembers nothing twice."""
        remembered = await self.remember_turn(request)
        captured = await self._episodic(request) if self._episodic is not None else []
        return RememberStages(remember=remembered, episodic_capture=captured)

    @activity.defn(name=names.DELIVER_REMINDER)
    async def deliver_reminder(self, due: ReminderDue) -> bool:
        """Deliver once: only a reminder still pending is delivered (completed ones are skipped).

        A retry after the reminder was marked delivered (the worker died before saying it)
        says it now: the message is keyed by the reminder, so it is stored once either way."""
        stores = self._deps.stores
        delivered = await stores.reminders.mark_delivered(due.reminder_id)
        if delivered is None:
            current = await stores.reminders.get(due.user_id, due.reminder_id)
            if current is None or current.status != "delivered":
                return False
        await stores.interactions.save_interaction(
            key=f"reminder:{due.reminder_id}",
            user_id=due.user_id,
            thread_id=due.thread_id,
            actor="agent",
            content=f"⏰ Reminder: {due.text}",
        )
        return True

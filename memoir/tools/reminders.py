"""The `reminders.*` capability: create, list, complete, delete in Postgres.

Creating a reminder also schedules its delivery: a durable timer (`ReminderWorkflow`) started
through the injected `schedule` callable, idempotent on the reminder's id.
"""

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memoir.models import (
    Candidate,
    ExecuteRequest,
    ExecutionResult,
    ReminderDue,
    ResolveRequest,
    StepResolution,
)
from memoir.stores.reminders import Reminder, ReminderStore
from memoir.tools.base import failure, not_found, success


def local_time(moment: datetime, timezone: str) -> str:
    """A reminder's time as the user reads it, e.g. 'Mon 23 Nov 17:00 (Europe/Paris)'."""
    return f"{moment.astimezone(ZoneInfo(timezone)):%a %d %b %H:%M} ({timezone})"


ScheduleReminder = Callable[[ReminderDue], Awaitable[None]]


class ReminderTool:
    def __init__(self, store: ReminderStore, schedule: ScheduleReminder) -> None:
        self._store = store
        self._schedule = schedule

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        action = request.step.capability.split(".", 1)[1]
        args = request.step.args
        step_id = request.step.id
        if action == "create":
            return _resolve_create(step_id, args)
        if action == "list" or "reminder_id" in args:
            return StepResolution(step_id=step_id, status="resolved", args=dict(args))
        if args.get("all"):
            pending = await self._store.list(request.user_id)
            ids = [r.reminder_id for r in pending]
            if not ids:
                return not_found(step_id, "You have no pending reminders.")
            return StepResolution(step_id=step_id, status="resolved", args={"reminder_ids": ids})
        return await self._resolve_query(request, str(args.get("query", "")))

    async def _resolve_query(self, request: ResolveRequest, query: str) -> StepResolution:
        step_id = request.step.id
        if not query.strip():
            return not_found(step_id, "Which reminder? I need a few words of it.")
        matches = await self._store.find(request.user_id, query)
        if not matches:
            return not_found(step_id, f"I couldn't find a pending reminder matching '{query}'.")
        if len(matches) == 1:
            return StepResolution(
                step_id=step_id, status="resolved", args={"reminder_id": matches[0].reminder_id}
            )
        candidates = [
            Candidate(
                id=r.reminder_id,
                label=f"{r.text} — {local_time(r.due_at, request.timezone)}",
                args={"reminder_id": r.reminder_id},
            )
            for r in matches
        ]
        return StepResolution(step_id=step_id, status="candidates", candidates=candidates)

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        action = request.step.capability.split(".", 1)[1]
        if action == "create":
            return await self._create(request)
        if action == "list":
            return await self._list(request)
        if action in ("complete", "delete"):
            return await self._close(request, action)
        return failure(request, f"reminders has no action '{action}'")

    async def _create(self, request: ExecuteRequest) -> ExecutionResult:
        due_at = datetime.fromisoformat(str(request.args["due_at"]))
        reminder = await self._store.create(
            user_id=request.user_id,
            thread_id=request.thread_id,
            text=str(request.args["text"]),
            due_at=due_at,
            idempotency_key=request.idempotency_key,
        )
        await self._schedule(reminder.due())
        when = local_time(reminder.due_at, request.timezone)
        return success(
            request,
            f"I'll remind you to {reminder.text} on {when}.",
            {"reminder": _public(reminder)},
            action="create",
            when=when,
            ids={"reminder_id": reminder.reminder_id},
        )

    async def _list(self, request: ExecuteRequest) -> ExecutionResult:
        pending = await self._store.list(request.user_id)
        lines = [f"{r.text} — {local_time(r.due_at, request.timezone)}" for r in pending]
        summary = f"{len(pending)} pending reminder(s)" + "".join(f"\n• {line}" for line in lines)
        return success(
            request, summary, {"reminders": [_public(r) for r in pending]}, action="list"
        )

    async def _close(self, request: ExecuteRequest, action: str) -> ExecutionResult:
        ids = request.args.get("reminder_ids") or [request.args.get("reminder_id")]
        closed: list[Reminder] = []
        for reminder_id in ids:
            done = await self._close_one(request.user_id, str(reminder_id), action)
            if done is None:
                return failure(request, f"Reminder {reminder_id} no longer exists.")
            closed.append(done)
        verb = "Completed" if action == "complete" else "Deleted"
        texts = ", ".join(f"'{r.text}'" for r in closed)
        return success(
            request,
            f"{verb} {texts}.",
            {"reminders": [_public(r) for r in closed]},
            action=action,
            ids={"reminder_id": ",".join(r.reminder_id for r in closed)},
        )

    async def _close_one(self, user_id: str, reminder_id: str, action: str) -> Reminder | None:
        """Complete or delete; a retry finding it already done counts as done (idempotent)."""
        target = "completed" if action == "complete" else "deleted"
        changed = (
            await self._store.complete(user_id, reminder_id)
            if action == "complete"
            else await self._store.delete(user_id, reminder_id)
        )
        if changed is not None:
            return changed
        current = await self._store.get(user_id, reminder_id)
        return current if current is not None and current.status == target else None


def _resolve_create(step_id: str, args: dict[str, object]) -> StepResolution:
    text = str(args.get("text", "")).strip()
    due_raw = args.get("due_at")
    if not text or not due_raw:
        return not_found(step_id, "A reminder needs what to remind you of and when.")
    try:
        due_at = datetime.fromisoformat(str(due_raw))
    except ValueError:
        return not_found(step_id, f"I couldn't read the time '{due_raw}'.")
    if due_at.tzinfo is None:
        due_at = due_at.replace(tzinfo=UTC)
    return StepResolution(
        step_id=step_id, status="resolved", args={"text": text, "due_at": due_at.isoformat()}
    )


def _public(reminder: Reminder) -> dict[str, object]:
    return reminder.model_dump(mode="json", include={"reminder_id", "text", "due_at", "status"})

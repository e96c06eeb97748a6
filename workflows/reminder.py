"""`ReminderWorkflow`: a durable timer that delivers one reminder when it is due."""

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from memoir.models import ReminderDue, names


@workflow.defn(name=names.REMINDER_WORKFLOW)
class ReminderWorkflow:
    @workflow.run
    async def run(self, due: ReminderDue) -> bool:
        """Sleep until due, then deliver; returns False when it was completed or deleted first."""
        wait = due.due_at - workflow.now()
        if wait > timedelta(0):
            await workflow.sleep(wait, summary=f"until {due.due_at.isoformat()}")
        return await workflow.execute_activity(
            names.DELIVER_REMINDER,
            due,
            result_type=bool,
            start_to_close_timeout=timedelta(seconds=30),
            heartbeat_timeout=timedelta(seconds=due.heartbeat_seconds),
            summary=f"deliver reminder: {due.text[:80]}",
        )

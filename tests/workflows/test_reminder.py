"""ReminderWorkflow: a due reminder is delivered once by a durable timer, unless closed first."""

from datetime import timedelta

from memoir.models import names
from temporal.harness import Harness


async def _create_reminder(harness: Harness, text: str) -> str:
    harness.llm.script("Plan", await harness.remind_plan(text))
    routed = await harness.send(f"remind me to {text} in an hour")
    result = await harness.result(routed.turn_id or "")
    return str(result.actions[0].data["reminder"]["reminder_id"])


async def test_due_reminder_is_delivered_by_its_timer(harness: Harness) -> None:
    reminder_id = await _create_reminder(harness, "take the cake out")
    await harness.skip(timedelta(hours=1, minutes=1))
    handle = harness.client.get_workflow_handle(names.reminder_workflow_id(reminder_id))
    assert await handle.result() is True
    reminder = await harness.stores.reminders.get(harness.user.user_id, reminder_id)
    assert reminder is not None and reminder.status == "delivered"
    history = await harness.stores.interactions.recent_messages(
        harness.user.user_id, harness.thread_id
    )
    assert history[-1].content == "⏰ Reminder: take the cake out"


async def test_reminder_completed_before_it_is_due_is_not_delivered(harness: Harness) -> None:
    reminder_id = await _create_reminder(harness, "call the plumber")
    await harness.stores.reminders.complete(harness.user.user_id, reminder_id)
    await harness.skip(timedelta(hours=1, minutes=1))
    handle = harness.client.get_workflow_handle(names.reminder_workflow_id(reminder_id))
    assert await handle.result() is False
    history = await harness.stores.interactions.recent_messages(
        harness.user.user_id, harness.thread_id
    )
    assert all("Reminder:" not in m.content for m in history)

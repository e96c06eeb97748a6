"""A worker process killed with SIGKILL at five stages of turns; the other worker finishes them.

Each test arms a hold point (after the stage's side effects, before the server hears of them),
kills the worker that stops there, and checks the turn completed with every side effect once:
one mail per send (Message-ID), one calendar event (UID), one memory per fact, one reminder
delivery. The activities' heartbeat timeout (3 s here) is what lets the server retry on the
other worker within seconds; a replacement worker starts meanwhile.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from memoir.models import HumanResponse, TurnStatus, names
from memoir.tools.calendar import CalendarTool
from temporal.worker import reminder_scheduler
from tests.chaos.conftest import HEARTBEAT_SECONDS, WAIT, Bed
from tests.chaos.support import interactions_keyed, interactions_of, memories_mentioning


async def test_killed_during_plan(chaos: Bed) -> None:
    h = await chaos.harness(("reminders",))
    hold = chaos.arm(f"activity:{names.CONTEXT_MEMORY_AND_PLAN}")
    routed = await h.send("Hi there!", message_id="m-plan")
    chaos.kill(await hold.reached())
    assert routed.turn_id
    result = await h.result(routed.turn_id, within=WAIT)
    assert result.status is TurnStatus.COMPLETED and result.reply
    assert await interactions_of(chaos.pool, h.user.user_id, message_id="m-plan") == 1


async def test_killed_while_the_smtp_server_holds_its_reply(chaos: Bed) -> None:
    h = await chaos.harness(("email",))
    subject = f"budget {uuid.uuid4().hex[:6]}"
    routed = await h.send(f"email dan@example.com about the {subject}: can we meet Monday?")
    assert routed.turn_id
    request = await h.pending(routed.turn_id, within=WAIT)
    handler = chaos.sink.holder
    received = handler.received
    handler.hold.set()
    await h.answer_inbox(request, HumanResponse(type="accept"))
    assert await asyncio.to_thread(handler.holding.wait, WAIT), "no send reached the sink"
    sender = next(iter(chaos.senders_to_sink()), None)
    assert sender is not None, "no worker holds an SMTP connection"
    chaos.kill(sender)
    handler.holding.clear()  # the killed worker's session ends; its message is stored
    result = await h.result(routed.turn_id, within=WAIT)
    assert result.status is TurnStatus.COMPLETED
    sent = [m for m in chaos.sink.messages() if subject.lower() in m.subject.lower()]
    assert len(sent) == 1, sent
    assert handler.received - received == 2  # the retry sent it again, under the same Message-ID


async def test_killed_after_a_calendar_write(chaos: Bed) -> None:
    h = await chaos.harness(("calendar",))
    routed = await h.send("schedule a meeting with dan@example.com on Friday at 10am")
    assert routed.turn_id
    request = await h.pending(routed.turn_id, within=WAIT)
    hold = chaos.arm(f"activity:{names.EXECUTE_STEP}")
    await h.answer_inbox(request, HumanResponse(type="accept"))
    chaos.kill(await hold.reached())
    result = await h.result(routed.turn_id, within=WAIT)
    assert result.status is TurnStatus.COMPLETED
    settings = chaos.settings
    calendar = CalendarTool(settings.caldav_url, settings.caldav_username, settings.caldav_password)
    events = await calendar._events(h.user.user_id)
    assert len(events) == 1, events


async def test_killed_after_memory_writes(chaos: Bed) -> None:
    h = await chaos.harness(("reminders",))
    hold = chaos.arm(f"activity:{names.CONTEXT_MEMORY_AND_PLAN}")
    routed = await h.send("My dog Luna is 3 years old.", message_id="m-luna")
    pid = await hold.reached()
    assert await memories_mentioning(chaos.pool, h.user.user_id, "Luna") == 1  # written, unknown
    chaos.kill(pid)
    assert routed.turn_id
    result = await h.result(routed.turn_id, within=WAIT)
    assert result.status is TurnStatus.COMPLETED
    assert await memories_mentioning(chaos.pool, h.user.user_id, "Luna") == 1
    assert await interactions_of(chaos.pool, h.user.user_id, message_id="m-luna") == 1


async def test_killed_while_a_reminder_fires(chaos: Bed) -> None:
    h = await chaos.harness(("reminders",))
    hold = chaos.arm("store:interactions.save_interaction")
    reminder = await chaos.stores.reminders.create(
        user_id=h.user.user_id,
        thread_id=h.thread_id,
        text="stretch",
        due_at=datetime.now(UTC) + timedelta(seconds=1),
        idempotency_key=f"chaos-{uuid.uuid4().hex}",
    )
    await reminder_scheduler(chaos.client, chaos.settings.task_queue, HEARTBEAT_SECONDS)(
        reminder.due()
    )
    pid = await hold.reached()  # marked delivered, not yet said
    chaos.kill(pid)
    handle = chaos.client.get_workflow_handle(names.reminder_workflow_id(reminder.reminder_id))
    assert await asyncio.wait_for(handle.result(), WAIT) is True
    assert await interactions_keyed(chaos.pool, f"reminder:{reminder.reminder_id}") == 1

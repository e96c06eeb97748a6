"""ThreadWorkflow routing: duplicates, stale replies, answers, one turn at a time, session scope."""

from datetime import timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus

from memoir.models import RouteStatus, names
from memoir.models import search_attributes as sa
from temporal import scenarios as plans
from temporal.harness import Harness, until


async def test_duplicate_message_returns_the_same_turn_and_executes_once(harness: Harness) -> None:
    harness.llm.script(
        "Plan", await harness.remind_plan("file taxes"), await harness.remind_plan("file taxes")
    )
    first = await harness.send("remind me to file taxes", message_id="dup-1")
    second = await harness.send("remind me to file taxes", message_id="dup-1")
    assert second.status is RouteStatus.DUPLICATE
    assert second.turn_id == first.turn_id
    await harness.result(first.turn_id or "")
    assert len(await harness.stores.reminders.list(harness.user.user_id)) == 1


async def test_stale_reply_when_no_question_is_pending(harness: Harness) -> None:
    routed = await harness.send("yes")
    assert routed.status is RouteStatus.STALE_REPLY
    assert routed.turn_id is None
    assert routed.reply == "I'm not waiting on a question right now — what would you like to do?"


async def test_message_during_a_running_turn_queues_behind_it(harness: Harness) -> None:
    harness.llm.script(
        "Plan", await harness.remind_plan("first"), await harness.remind_plan("second")
    )
    first = await harness.send("remind me to do the first thing")
    second = await harness.send("remind me to do the second thing")
    assert second.status is RouteStatus.STARTED
    await harness.result(second.turn_id or "")
    first_ran = await harness.client.get_workflow_handle(first.turn_id or "").describe()
    second_ran = await harness.client.get_workflow_handle(second.turn_id or "").describe()
    assert first_ran.close_time is not None
    assert first_ran.close_time <= second_ran.start_time


async def test_chat_message_answers_the_pending_question(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("renew passport", approval=True))
    routed = await harness.send("remind me to renew my passport")
    await harness.pending(routed.turn_id or "")
    answered = await harness.send("yes")
    assert answered.status is RouteStatus.ROUTED_TO_PENDING
    assert answered.turn_id == routed.turn_id
    result = await harness.result(routed.turn_id or "")
    assert result.actions[0].success


async def test_thread_ends_after_twelve_idle_hours(harness: Harness) -> None:
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send("hello there")
    await harness.result(routed.turn_id or "")
    thread_id = names.thread_workflow_id(harness.user.user_id, harness.thread_id)
    assert await harness.status(thread_id) is WorkflowExecutionStatus.RUNNING
    await harness.skip(timedelta(hours=12, minutes=1))
    assert await harness.status(thread_id) is WorkflowExecutionStatus.COMPLETED


async def test_idle_hours_count_from_the_last_turn_with_one_timer(harness: Harness) -> None:
    """Patch `thread-one-idle-timer`: no timer is started and cancelled around each turn."""
    harness.llm.script("Plan", plans.chat(), plans.chat(), plans.chat())
    for number in range(2):
        routed = await harness.send("hello", message_id=f"idle-{number}")
        await harness.result(routed.turn_id or "")
    await harness.skip(timedelta(hours=6))
    routed = await harness.send("still there?", message_id="idle-late")
    await harness.result(routed.turn_id or "")
    thread_id = names.thread_workflow_id(harness.user.user_id, harness.thread_id)
    await harness.skip(timedelta(hours=7))  # 13 hours after the first turn, 7 after the last
    assert await harness.status(thread_id) is WorkflowExecutionStatus.RUNNING
    await harness.skip(timedelta(hours=5, minutes=1))
    assert await harness.status(thread_id) is WorkflowExecutionStatus.COMPLETED
    history = await harness.client.get_workflow_handle(thread_id).fetch_history()
    kinds = [e.event_type for e in history.events]
    assert kinds.count(EventType.EVENT_TYPE_TIMER_STARTED) == 2  # at the start, re-armed once
    assert EventType.EVENT_TYPE_TIMER_CANCELED not in kinds


async def test_thread_continues_as_new_and_still_knows_old_messages(
    short_run_harness: Harness,
) -> None:
    harness = short_run_harness
    harness.llm.script("Plan", plans.chat(), plans.chat())
    first = await harness.send("hello", message_id="can-1")
    await harness.result(first.turn_id or "")
    second = await harness.send("hello again", message_id="can-2")
    await harness.result(second.turn_id or "")
    thread_id = names.thread_workflow_id(harness.user.user_id, harness.thread_id)
    handle = harness.client.get_workflow_handle(thread_id)

    async def continued() -> bool:
        info = (await handle.describe()).raw_description.workflow_execution_info
        return info.first_run_id != info.execution.run_id

    await until(continued, "the thread to continue as new")
    again = await harness.send("hello", message_id="can-1")
    assert again.status is RouteStatus.DUPLICATE
    assert again.turn_id == first.turn_id


async def test_chat_turn_starts_classified_and_upserts_no_classification(
    harness: Harness,
) -> None:
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send("hello there")
    await harness.result(routed.turn_id or "")
    handle = harness.client.get_workflow_handle(routed.turn_id or "")
    attributes = (await handle.describe()).typed_search_attributes
    assert attributes.get(sa.CLASSIFICATION) == "respond"
    history = await handle.fetch_history()
    upserts = [
        event.upsert_workflow_search_attributes_event_attributes.search_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
    ]
    upserted = [key for attributes in upserts for key in attributes.indexed_fields]
    assert names.SA_CLASSIFICATION not in upserted, upserted

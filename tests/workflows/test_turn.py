"""AgentTurnWorkflow on the time-skipping server: stages, execution once, capability check."""

from datetime import UTC, datetime

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory

from memoir.models import EmailMessage, RouteStatus, TurnStatus, names
from memoir.models.plan import Classification
from temporal import scenarios as plans
from temporal.harness import Harness
from temporal.histories import activities_run

EMAIL = EmailMessage(
    email_id="e1",
    author="Alice <alice@example.com>",
    to="tess@example.com",
    subject="Deploy finished",
    body="The deploy of api v2 finished without errors.",
)


def _workflow_tasks(history: WorkflowHistory) -> int:
    completed = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    return sum(event.event_type == completed for event in history.events)


async def test_chat_turn_executes_the_planned_reminder(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("call mom"))
    routed = await harness.send("remind me to call mom in an hour")
    assert routed.status is RouteStatus.STARTED
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    assert [a.capability for a in result.actions] == ["reminders.create"]
    assert result.actions[0].success
    reminders = await harness.stores.reminders.list(harness.user.user_id)
    assert [r.text for r in reminders] == ["call mom"]


async def test_a_turn_runs_its_stages_in_few_server_round_trips(harness: Harness) -> None:
    """Version 2: a chat turn's context, memory and plan in one activity; resolve and remember
    as local activities, so every workflow task but the first follows an activity that decides
    what comes next."""
    harness.llm.script("Plan", await harness.remind_plan("call mom"))
    routed = await harness.send("remind me to call mom in an hour")
    result = await harness.result(routed.turn_id or "")
    history = await harness.client.get_workflow_handle(routed.turn_id or "").fetch_history()
    assert activities_run(history) == [
        names.CONTEXT_MEMORY_AND_PLAN,
        names.RESOLVE_STEP,  # local
        names.EXECUTE_STEP,
        names.WRITE_REPLY,
        names.REMEMBER_STAGES,  # local
    ]
    assert _workflow_tasks(history) == 4  # start, then after the plan, execute and the reply
    assert {"latest_action:reminders.create", "episodic.decide"} <= set(result.memory_events)


async def test_a_plan_that_answers_alone_brings_its_reply_in_the_same_activity(
    harness: Harness,
) -> None:
    """No step and no question after the plan: the reply is written and the turn remembered
    in the same activity (no `write_reply`, no remember local activity)."""
    harness.llm.script("Plan", plans.chat())
    routed = await harness.send("hi there")
    result = await harness.result(routed.turn_id or "")
    history = await harness.client.get_workflow_handle(routed.turn_id or "").fetch_history()
    assert result.status is TurnStatus.COMPLETED and result.reply
    assert activities_run(history) == [names.CONTEXT_MEMORY_AND_PLAN]
    assert _workflow_tasks(history) == 2  # start, then after the plan with its reply
    assert {"history.user", "history.agent", "episodic.decide"} <= set(result.memory_events)
    saved = await harness.stores.interactions.load_session_history(
        harness.user.user_id, harness.thread_id
    )
    assert [m.content for m in saved] == ["hi there", result.reply]


async def test_idempotency_key_is_turn_id_and_step_id(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("water plants"))
    routed = await harness.send("remind me to water plants")
    await harness.result(routed.turn_id or "")
    [reminder] = await harness.stores.reminders.list(harness.user.user_id)
    assert reminder.idempotency_key == f"{routed.turn_id}:s1"


async def test_turn_writes_history_and_latest_action(harness: Harness) -> None:
    harness.llm.script("Plan", await harness.remind_plan("stretch"))
    routed = await harness.send("remind me to stretch")
    await harness.result(routed.turn_id or "")
    history = await harness.stores.interactions.load_session_history(
        harness.user.user_id, harness.thread_id
    )
    assert [type(m).__name__ for m in history] == ["HumanMessage", "AIMessage", "ToolMessage"]
    [latest] = await harness.stores.latest_actions.latest(
        harness.user.user_id, harness.thread_id, now=datetime.now(UTC)
    )
    assert latest.capability == "reminders"


async def test_missing_capability_blocks_with_fixed_reply(harness: Harness) -> None:
    harness.llm.script("Plan", plans.send_email())
    routed = await harness.send("email Dan hello")
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.BLOCKED
    assert "Connect email" in (result.reply or "")
    assert result.actions == []


async def test_ignored_email_ends_without_planning(harness: Harness) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.IGNORE))
    routed = await harness.send("", email=EMAIL)
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.IGNORED
    assert result.classification is Classification.IGNORE
    assert "Plan" not in harness.llm.schemas_called()


async def test_disambiguation_applies_the_chosen_reminder(harness: Harness) -> None:
    for text in ("call mom", "call the bank"):
        harness.llm.script("Plan", await harness.remind_plan(text))
        routed = await harness.send(f"remind me to {text}")
        await harness.result(routed.turn_id or "")
    harness.llm.script("Plan", plans.complete("call"))
    routed = await harness.send("I'm done with the call")
    question = await harness.pending(routed.turn_id or "")
    assert question.kind == "disambiguation"
    assert len(question.options) == 2
    chosen = question.options[1]
    answered = await harness.send("2")
    assert answered.status is RouteStatus.ROUTED_TO_PENDING
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    closed = await harness.stores.reminders.get(harness.user.user_id, chosen.id)
    assert closed is not None and closed.status == "completed"

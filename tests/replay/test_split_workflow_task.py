"""A turn whose resolve step's local activity and the question after it were recorded in two
workflow tasks (a query arriving meanwhile does that) still replays: a restarted worker must
not fail it on a nondeterminism error (seen once in the chaos tests, before the patch
`ask-decided-before-resolve`)."""

import json
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from temporal.histories import HISTORY_DIR, INDEX, VERSION_0_DIR, VERSION_1_DIR
from workflows import ALL_WORKFLOWS

Event = dict[str, Any]
ID_FIELDS = (
    "scheduledEventId",
    "startedEventId",
    "workflowTaskCompletedEventId",
    "initiatedEventId",
)


def _attributes(event: Event) -> dict[str, Any]:
    return next(v for k, v in event.items() if k.endswith("Attributes"))


def _is_local_activity(event: Event) -> bool:
    return (
        event["eventType"] == "EVENT_TYPE_MARKER_RECORDED"
        and _attributes(event)["markerName"] == "core_local_activity"
    )


def _question_asked(event: Event) -> bool:
    return (
        event["eventType"] == "EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED"
        and _attributes(event)["signalName"] == "hitl_opened"
    )


def _workflow_task(events: list[Event], at: str) -> list[Event]:
    """Scheduled, started and completed events of one more workflow task, at time `at`."""
    queue = _attributes(events[1])["taskQueue"]
    return [
        {
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED",
            "eventTime": at,
            "workflowTaskScheduledEventAttributes": {"taskQueue": queue, "attempt": 1},
        },
        {
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_STARTED",
            "eventTime": at,
            "workflowTaskStartedEventAttributes": {"identity": "split"},
        },
        {
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_COMPLETED",
            "eventTime": at,
            "workflowTaskCompletedEventAttributes": {"identity": "split"},
        },
    ]


def split_after_resolve(events: list[Event]) -> list[Event]:
    """The history with a workflow task between the last local activity before the first
    question and what follows it, event ids and references renumbered."""
    asked = next(i for i, e in enumerate(events) if _question_asked(e))
    resolved = max(i for i, e in enumerate(events[:asked]) if _is_local_activity(e))
    events = [json.loads(json.dumps(e)) for e in events]
    split = events[: resolved + 1] + _workflow_task(events, events[resolved]["eventTime"])
    split += events[resolved + 1 :]
    renumbered = {e["eventId"]: str(n) for n, e in enumerate(split, 1) if "eventId" in e}
    last_completed = "0"
    for number, event in enumerate(split, 1):
        event["eventId"] = str(number)
        attributes = _attributes(event)
        for field in ID_FIELDS:
            if attributes.get(field) in renumbered:
                attributes[field] = renumbered[attributes[field]]
        if event["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_STARTED":
            attributes["scheduledEventId"] = str(number - 1)
        if event["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_COMPLETED":
            attributes.update(scheduledEventId=str(number - 2), startedEventId=str(number - 1))
            last_completed = str(number)
        elif "workflowTaskCompletedEventId" in attributes:
            attributes["workflowTaskCompletedEventId"] = last_completed
    return split


async def _replay_failure(name: str, directory: Path = VERSION_0_DIR) -> Exception | None:
    index: dict[str, str] = json.loads((directory / INDEX).read_text())
    recorded = json.loads((directory / f"{name}.turn.json").read_text())
    events = split_after_resolve(recorded["events"])
    history = WorkflowHistory.from_json(index[f"{name}.turn.json"], {"events": events})
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    return result.replay_failure


async def test_a_question_split_from_its_resolve_step_replays() -> None:
    assert await _replay_failure("approval_decided_before_resolve") is None


async def test_a_version_1_question_split_from_its_resolve_step_replays() -> None:
    """From turn version 1 the patches record no marker: nothing left to split."""
    assert await _replay_failure("approval_decided_before_resolve", VERSION_1_DIR) is None


async def test_a_version_2_question_split_from_its_resolve_step_replays() -> None:
    assert await _replay_failure("approval_decided_before_resolve", HISTORY_DIR) is None


async def test_the_same_split_fails_a_turn_that_decided_in_the_question() -> None:
    """Why the patch exists: a history recorded before it (the patch read in `_ask`, right
    after the local activity) fails this replay with the SDK of today."""
    failure = await _replay_failure("fast_approval")
    assert failure is not None and "Nondeterminism" in str(failure)

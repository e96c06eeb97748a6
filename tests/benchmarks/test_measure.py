"""How the benchmarks read a turn's history: local activities and the resume after an answer."""

from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import (
    HistoryEvent,
    MarkerRecordedEventAttributes,
    WorkflowExecutionSignaledEventAttributes,
)

from memoir.benchmarks.measure import HistoryCost, answer_and_resume
from memoir.models import names


def _event(event_id: int, event_type: EventType.ValueType, **attributes: object) -> HistoryEvent:
    event = HistoryEvent(event_id=event_id, event_type=event_type)
    for field, value in attributes.items():
        getattr(event, field).CopyFrom(value)
    return event


def _marker(event_id: int, name: str) -> HistoryEvent:
    attributes = MarkerRecordedEventAttributes(marker_name=name, details={"data": Payloads()})
    return _event(
        event_id, EventType.EVENT_TYPE_MARKER_RECORDED, marker_recorded_event_attributes=attributes
    )


def _answered_then(marker: str) -> list[HistoryEvent]:
    signal = WorkflowExecutionSignaledEventAttributes(signal_name=names.TURN_ANSWER_SIGNAL)
    return [
        _event(
            1,
            EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
            workflow_execution_signaled_event_attributes=signal,
        ),
        _event(2, EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
        _event(3, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED),
        _event(4, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        _marker(5, marker),
        _event(6, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
        _event(7, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED),
    ]


def test_a_local_activity_after_the_answer_resumes_at_its_workflow_task() -> None:
    found = answer_and_resume(_answered_then(names.LOCAL_ACTIVITY_MARKER), names.TURN_ANSWER_SIGNAL)
    assert found is not None and found[1].event_id == 3


def test_a_patch_marker_after_the_answer_is_not_a_resume() -> None:
    found = answer_and_resume(_answered_then("core_patch"), names.TURN_ANSWER_SIGNAL)
    assert found is not None and found[1].event_id == 7


def test_only_local_activity_markers_count_as_local_activities() -> None:
    events = [_marker(1, names.LOCAL_ACTIVITY_MARKER), _marker(2, "core_patch")]
    assert HistoryCost.of(events).local_activities == 1

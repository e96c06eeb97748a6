"""The text formats both providers share."""

from datetime import UTC, datetime

from memoir.llm.prompts import MEMORY_EXTRACTION_SYSTEM_PROMPT, MEMORY_GATE_SYSTEM_PROMPT
from memoir.memory.llm_calls import gate_messages, render_message_time
from memoir.memory.requests import TurnMemoryRequest
from memoir.memory.schemas import MemoryExtraction
from memoir.models import LatestAction
from memoir.planner import render_latest_actions


def test_latest_actions_block_is_newest_first_with_ids() -> None:
    older = LatestAction(
        created_at=datetime(2025, 1, 1, 9, tzinfo=UTC),
        capability="email.send",
        action="send",
        summary="Sent | email to Dan",
    )
    newer = LatestAction(
        created_at=datetime(2025, 1, 1, 10, tzinfo=UTC),
        capability="reminders.create",
        action="create",
        summary="call mom",
        when="2025-01-01T17:00:00+00:00",
        external_ids={"reminder_id": "r1"},
    )
    assert render_latest_actions([older, newer]).splitlines() == [
        "- 2025-01-01T10:00:00+00:00 | reminders.create | create | call mom"
        " | when=2025-01-01T17:00:00+00:00 | ids: reminder_id=r1",
        "- 2025-01-01T09:00:00+00:00 | email.send | send | Sent | email to Dan",
    ]


def test_latest_actions_block_keeps_only_three() -> None:
    actions = [
        LatestAction(
            created_at=datetime(2025, 1, 1, h, tzinfo=UTC),
            capability="x",
            action="a",
            summary=str(h),
        )
        for h in range(5)
    ]
    lines = render_latest_actions(actions).splitlines()
    assert [line.rsplit(" | ", 1)[1] for line in lines] == ["4", "3", "2"]


def test_the_extraction_prompt_asks_for_a_list_of_facts_and_dated_events() -> None:
    prompt = MEMORY_EXTRACTION_SYSTEM_PROMPT
    for asked in ("one item per", "subject", "kind", '"event"', "date_iso", "Message Time"):
        assert asked in prompt
    assert "yesterday" in prompt and "2023-05-07" in prompt  # resolved, with an example
    assert "encouragement" in prompt and "empty list" in prompt
    fields = MemoryExtraction.model_json_schema()["$defs"]["MemoryCandidate"]["properties"]
    assert {"subject", "kind", "date_iso", "time_phrase", "key", "summary"} <= set(fields)


def test_the_gate_prompt_keeps_events_and_refuses_encouragement() -> None:
    assert "an event that happened" in MEMORY_GATE_SYSTEM_PROMPT
    assert "encouragement" in MEMORY_GATE_SYSTEM_PROMPT


def test_the_memory_turns_prompt_carries_speaker_and_time() -> None:
    moment = datetime(2023, 5, 8, 23, 30, tzinfo=UTC)
    block = render_message_time(moment, "Pacific/Auckland")
    assert block == "Tuesday 2023-05-09 11:30, timezone Pacific/Auckland"
    assert render_message_time(None, "UTC") == "(none)"
    request = TurnMemoryRequest(
        message="hi", speaker="Maya", now=moment, timezone="Pacific/Auckland"
    )
    human = str(gate_messages(request)[-1].content)
    assert f"## Speaker\nMaya\n\n## Message Time\n{block}\n" in human
    assert human.endswith("## Latest User Message\nhi")

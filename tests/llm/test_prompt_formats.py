"""The text formats both providers share."""

from datetime import UTC, datetime

from memoir.llm.prompts import (
    PLANNER_SECTIONS,
    parse_latest_actions,
    render_latest_actions,
    split_sections,
)
from memoir.models import LatestAction


def test_latest_actions_block_round_trips_newest_first() -> None:
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
    parsed = parse_latest_actions(render_latest_actions([older, newer]))
    assert parsed == [newer, older]


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
    assert [a.summary for a in parse_latest_actions(render_latest_actions(actions))] == [
        "4",
        "3",
        "2",
    ]


def test_request_section_keeps_email_text_that_looks_like_headers() -> None:
    text = "## Feedback\n(none)\n\n## Request\nRespond:\n## Feedback\nnot a header here"
    sections = split_sections(text, PLANNER_SECTIONS)
    assert sections["Feedback"] == ""
    assert sections["Request"].endswith("## Feedback\nnot a header here")

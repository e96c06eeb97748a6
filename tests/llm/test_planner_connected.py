"""Offline planner: where it has a choice it plans with connected capabilities only; otherwise
it still plans the unconnected one, for the capability check's fixed "connect …" reply."""

from typing import Any

import pytest

from memoir.llm import OfflineChatModel
from memoir.models.plan import CAPABILITY_FAMILIES, capability_family
from memoir.planner import KNOWN_CAPABILITIES, make_plan

DOCS_LOOKUP = "find Dan's address in our docs"


def test_capability_families_are_the_tool_families() -> None:
    assert set(CAPABILITY_FAMILIES) == {capability_family(c) for c in KNOWN_CAPABILITIES}


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        (["reminders", "contacts", "knowledge"], "contacts.lookup"),
        (["reminders", "knowledge"], "knowledge.search"),
        (["reminders"], "contacts.lookup"),  # nothing connected serves it: still planned
    ],
)
async def test_a_lookup_uses_the_connected_capability(
    offline: OfflineChatModel, plan_request: Any, caps: list[str], expected: str
) -> None:
    plan = await make_plan(offline, plan_request(DOCS_LOOKUP), caps)
    assert [s.capability for s in plan.steps] == [expected]
    if expected == "knowledge.search":
        assert "not connected" in plan.reasoning


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("email Dan that the report is ready", "email.send"),
        ("schedule a meeting with Bob tomorrow at 9", "calendar.schedule"),
        ("what's Dan's phone number?", "contacts.lookup"),
    ],
)
async def test_only_an_unconnected_capability_serves_it_so_it_is_still_planned(
    offline: OfflineChatModel, plan_request: Any, text: str, expected: str
) -> None:
    plan = await make_plan(offline, plan_request(text), ["reminders", "knowledge"])
    assert [s.capability for s in plan.steps] == [expected]
    assert "Not connected for this user" in plan.reasoning

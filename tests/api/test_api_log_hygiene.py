"""Logs carry no message content or personal data: a chat turn and an email turn with a canary
name run through the real API, worker and memory engine, and no log record holds the canary
(unless content logging is switched on)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from memoir import logging_hygiene as hygiene
from memoir.models import Classification
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, answer, finished_view, post_message

CANARY = "Zorblatt"


@pytest.fixture
def content_logging(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Content logging as the test's parameter says, as it was afterwards."""
    before = hygiene.content_logging()
    hygiene.set_content_logging(request.param)
    yield request.param
    hygiene.set_content_logging(before)


async def _turns_with_the_canary(http: httpx.AsyncClient, harness: Harness, user: ApiUser) -> None:
    """A chat turn that makes a memory of the canary, and an email turn that asks about it."""
    harness.llm.script("Plan", plans.chat())
    routed = await post_message(http, user, harness.thread_id, "m1", f"my dog {CANARY} is 3")
    await harness.result(routed.json()["turn_id"])
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    email = {
        "id": "canary-1",
        "from": f"{CANARY} Vet <{CANARY.lower()}@example.com>",
        "to": "tess@example.com",
        "subject": f"{CANARY}'s vaccination",
        "body": f"{CANARY} is due for a booster on Friday.",
    }
    routed = await http.post("/v1/emails", json=email, headers=user.headers)
    request = await harness.pending(routed.json()["turn_id"])
    assert (await answer(http, user, request.hitl_id, {"type": "accept"})).status_code == 202
    await finished_view(http, harness, user, request.turn_id)


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    """Everything the captured records would show: formatted lines, messages and fields."""
    parts = [caplog.text]
    for record in caplog.records:
        parts += [record.getMessage(), str(getattr(record, "fields", ""))]
    return "\n".join(parts).lower()


@pytest.mark.parametrize("content_logging", [False], indirect=True)
async def test_no_log_record_holds_the_canary(
    http: httpx.AsyncClient,
    harness: Harness,
    user: ApiUser,
    caplog: pytest.LogCaptureFixture,
    content_logging: bool,
) -> None:
    caplog.set_level(logging.INFO)
    await _turns_with_the_canary(http, harness, user)
    assert any(getattr(r, "event", "") == "memory.create" for r in caplog.records)
    assert CANARY.lower() not in _logged(caplog)


@pytest.mark.parametrize("content_logging", [True], indirect=True)
async def test_content_logging_on_lets_the_canary_through(
    http: httpx.AsyncClient,
    harness: Harness,
    user: ApiUser,
    caplog: pytest.LogCaptureFixture,
    content_logging: bool,
) -> None:
    caplog.set_level(logging.INFO)
    await _turns_with_the_canary(http, harness, user)
    assert CANARY.lower() in _logged(caplog)

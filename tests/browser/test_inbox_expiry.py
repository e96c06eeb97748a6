"""The inbox page's countdown counts down, and a request that expires leaves the page.

The app asks with a short MEMOIR_HITL_TTL_SECONDS; the real workflow timer expires the request.
"""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import expect
from temporalio.client import Client

from api.app import create_app
from memoir.models import TurnStatus
from memoir.settings import Settings
from memoir.stores import Stores
from temporal.harness import Harness
from tests.api.support import ApiUser, approval_asked
from tests.browser.support import InboxPage

TTL_SECONDS = 6
COUNTDOWN = re.compile(r"expires in 0:0(\d)")


@pytest.fixture
def app(settings: Settings, temporal_client: Client, stores: Stores) -> FastAPI:
    """The app, asking with a time to live of a few seconds."""
    short = settings.model_copy(update={"hitl_ttl_seconds": TTL_SECONDS})
    return create_app(short, client=temporal_client, stores=stores)


async def _seconds_left(inbox: InboxPage, hitl_id: str) -> int:
    text = await inbox.card(hitl_id).locator(".expiry").inner_text()
    match = COUNTDOWN.fullmatch(text)
    assert match, text
    return int(match.group(1))


async def test_countdown_counts_down_and_the_expired_request_leaves(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    card = await inbox.open(http, user, request.hitl_id)
    await expect(card.locator(".expiry")).to_have_text(COUNTDOWN)
    first = await _seconds_left(inbox, request.hitl_id)
    assert 2 <= first <= TTL_SECONDS

    sooner = "|".join(str(n) for n in range(1, first))
    await expect(card.locator(".expiry")).to_have_text(re.compile(f"expires in 0:0({sooner})"))
    assert await _seconds_left(inbox, request.hitl_id) < first

    await expect(card).to_have_count(0, timeout=(TTL_SECONDS + 5) * 1000)
    await expect(inbox.page.locator("#status")).to_have_text("Nothing is waiting for you.")
    result = await harness.result(request.turn_id)
    assert result.status is TurnStatus.EXPIRED
    assert await harness.stores.reminders.list(user.user_id) == []
    # Read again from the server, the page still shows nothing: the request is gone, not hidden.
    await inbox.page.get_by_role("button", name="Refresh").click()
    await expect(inbox.page.locator("#status")).to_have_text("Nothing is waiting for you.")
    await expect(inbox.page.locator("section.card")).to_have_count(0)

"""Markdown from an email never runs script on the inbox page: <script>, handlers and javascript:
links in an email show as text, while its https links stay links."""

from __future__ import annotations

import httpx
from playwright.async_api import expect
from temporalio.client import Client

from api.app import create_app
from memoir.models import Classification
from memoir.settings import Settings
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, http_client
from tests.browser.support import InboxPage

SCRIPT = '<script>alert("script ran")</script>'
BODY = "\n".join(
    [
        f"Hello! {SCRIPT}",
        "<img src=x onerror=\"alert('img ran')\">",
        "Pay here: [Click me](javascript:alert('link ran')) or [open](JAVASCRIPT:alert(1))",
        "Also javascript:alert('bare') and <a href=\"javascript:alert('a ran')\">this</a>",
        "",
        "Details: [the docs](https://example.com/docs) and **bold** `code`",
    ]
)
EMAIL = {
    "id": "xss-1",
    "from": "Mallory <mallory@example.com>",
    "to": "tess@example.com",
    "subject": "Invoice <script>alert('subject ran')</script>",
    "body": BODY,
}


async def _notified(http: httpx.AsyncClient, user: ApiUser, harness: Harness) -> str:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await http.post("/v1/emails", json=EMAIL, headers=user.headers)
    assert routed.status_code == 202, routed.text
    return (await harness.pending(routed.json()["turn_id"])).hitl_id


async def test_email_markdown_with_script_and_javascript_links_runs_nothing(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, inbox: InboxPage
) -> None:
    card = await inbox.open(http, user, await _notified(http, user, harness))
    description = card.locator(".description")

    await expect(description).to_contain_text(f"Hello! {SCRIPT}")
    await expect(description).to_contain_text("<img src=x onerror=\"alert('img ran')\">")
    await expect(description).to_contain_text("Invoice <script>alert('subject ran')</script>")
    await expect(description).to_contain_text("[Click me](javascript:alert('link ran'))")
    await expect(description.locator("script, img, [onerror]")).to_have_count(0)
    await description.get_by_text("Click me", exact=False).click()
    await inbox.page.wait_for_timeout(300)
    await inbox.screenshot("notification-escaped")

    protocols = await inbox.page.locator("a").evaluate_all("links => links.map(a => a.protocol)")
    assert protocols == ["https:"]
    await expect(description.get_by_role("link", name="the docs")).to_have_attribute(
        "href", "https://example.com/docs"
    )
    await expect(description.locator("strong", has_text="bold")).to_have_count(1)
    assert inbox.dialogs == []


async def test_inbox_page_runs_only_its_own_script(temporal_client: Client, stores: Stores) -> None:
    async with http_client(create_app(Settings(), client=temporal_client, stores=stores)) as http:
        response = await http.get("/inbox")
    policy = response.headers["content-security-policy"]
    assert "script-src 'sha256-" in policy and "'unsafe-inline'" not in policy.split("style")[0]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy

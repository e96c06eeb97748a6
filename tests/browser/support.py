"""Helpers of the browser tests: the app served over real HTTP, and the inbox page as a person
sees it in chromium (open it with a token, find a request's card, take a screenshot)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import httpx
from playwright.async_api import Dialog, Locator, Page

from temporal.harness import until
from tests.api.support import ApiUser, inbox_of


@dataclass
class InboxPage:
    """The inbox page in one browser tab, with what the tab said: dialogs and script errors."""

    page: Page
    base_url: str
    screenshots: Path
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    async def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        await dialog.dismiss()

    async def open(self, http: httpx.AsyncClient, user: ApiUser, hitl_id: str) -> Locator:
        """Open /inbox once the API lists `hitl_id`, save the user's token; that request's card."""

        async def listed() -> bool:
            return any(item["hitl_id"] == hitl_id for item in await inbox_of(http, user))

        await until(listed, f"{hitl_id} in the inbox")
        await self.page.goto(f"{self.base_url}/inbox")
        await self.page.get_by_placeholder("Paste your API token").fill(user.token)
        await self.page.get_by_role("button", name="Save token").click()
        card = self.card(hitl_id)
        await card.wait_for()
        return card

    def card(self, hitl_id: str) -> Locator:
        """The card of one request (absent once it left the page)."""
        return self.page.locator(f'section.card[data-hitl-id="{hitl_id}"]')

    async def screenshot(self, name: str) -> Path:
        """A full-page screenshot in the run's output folder."""
        path = self.screenshots / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path

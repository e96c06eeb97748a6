"""Browser fixtures: Debian's chromium under Playwright (one per session), the real stack of the
API tests (dev server, worker, Postgres; only the LLM scripted) served over HTTP by uvicorn, and
the inbox page in a fresh tab per test. Screenshots land in MEMOIR_TEST_OUTPUT (default
.memoir/test-output) under browser/.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from playwright.async_api import BrowserContext, async_playwright

from memoir.serving import serve_app

# The API tests' real stack: the same fixtures, for this package too.
from tests.api.conftest import (  # noqa: F401
    app,
    gc_between_tests,
    harness,
    http,
    settings,
    temporal_client,
    temporal_env,
    user,
)
from tests.browser.chromium import chromium_path, launch_chromium
from tests.browser.support import InboxPage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the run's screenshots go (kept after the run; `make clean` removes the default)."""
    base = Path(os.environ.get("MEMOIR_TEST_OUTPUT", ROOT / ".memoir" / "test-output"))
    folder = base / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserContext]:
    """Headless chromium with a fresh profile, for the whole session."""
    try:
        chromium_path()
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
    async with async_playwright() as playwright:
        context = await launch_chromium(playwright, tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield context
        finally:
            await context.close()


@pytest.fixture
async def base_url(app: FastAPI) -> AsyncIterator[str]:  # noqa: F811 (the imported fixture)
    """The test's app over real HTTP."""
    async with serve_app(app, lifespan="on") as url:
        yield url


@pytest.fixture
async def inbox(
    browser: BrowserContext, base_url: str, screenshots: Path
) -> AsyncIterator[InboxPage]:
    """A new tab on the test's app; the page must raise no script error and open no dialog."""
    page = await browser.new_page()
    tab = InboxPage(page, base_url, screenshots)
    try:
        yield tab
    finally:
        await page.close()
    assert tab.dialogs == [], f"the page opened dialogs: {tab.dialogs}"
    assert tab.errors == [], f"the page logged errors: {tab.errors}"

"""Debian's chromium under Playwright: where it is, how it starts (headless, nothing fetched)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright

CHROMIUM = "/usr/bin/chromium"
# Headless, no GPU, and nothing that reaches out: no QUIC, first-run page, background traffic,
# component updates or sync. Playwright's own browsers are never installed (`playwright install`).
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MISSING = (
    "The browser tests need Debian's chromium at {path}. `make test` installs it "
    "(apt-get install -y chromium); or set MEMOIR_CHROMIUM to a chromium binary."
)


def chromium_path() -> str:
    """The chromium binary to drive (MEMOIR_CHROMIUM, else Debian's); raises when it is missing."""
    path = os.environ.get("MEMOIR_CHROMIUM", CHROMIUM)
    found = shutil.which(path)
    if found is None:
        raise FileNotFoundError(MISSING.format(path=path))
    return found


async def launch_chromium(playwright: Playwright, user_data_dir: Path) -> BrowserContext:
    """A headless chromium with a fresh profile in `user_data_dir` (which must be new)."""
    return await playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=chromium_path(),
        args=LAUNCH_ARGS,
        headless=True,
        viewport={"width": 1000, "height": 900},
    )

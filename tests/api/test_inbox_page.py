"""The /inbox page offers a notification's three answers: Respond, Acknowledge, Ignore."""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from memoir.models import Channel, EmailMessage, IncomingMessage
from workflows.hitl import RequestFactory

RENDER = Path(__file__).with_name("inbox_render.js")


def notify_request_json() -> str:
    email = EmailMessage(
        email_id="n1",
        author="CI <ci@example.com>",
        to="t@example.com",
        subject="Nightly build passed",
        body="All tests passed.",
    )
    message = IncomingMessage(
        user_id="u",
        thread_id="t",
        message_id="n1",
        channel=Channel.EMAIL,
        text=email.markdown(),
        email=email,
    )
    request = RequestFactory(message, "turn:u:t:n1", 300).notify(datetime.now(UTC))
    return request.model_dump_json()


async def test_inbox_page_answers_a_notification_with_acknowledge(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    page = (await http.get("/inbox")).text
    # Acknowledge is the Agent Inbox `accept`; a notify request's options map to their answers.
    assert 'acknowledge: "accept"' in page and 'request.kind === "notify" ? "Acknowledge"' in page
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script was not run")
    served = tmp_path / "inbox.html"
    served.write_text(page, encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        node, str(RENDER), str(served), notify_request_json(), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert process.returncode == 0
    assert out.decode().splitlines() == ["Respond", "Acknowledge", "Ignore", "Respond"]

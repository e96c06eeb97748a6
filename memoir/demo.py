"""`memoir demo`: a sample inbox through the HTTP API, approvals answered, a table of outcomes.

It only speaks HTTP to a running API, as any client would.
"""

import asyncio
import json
import time
import uuid
from importlib import resources
from typing import Any

import httpx
from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import Progress
from rich.prompt import Prompt
from rich.table import Table

from memoir.models import Classification

TERMINAL = {"completed", "ignored", "expired", "blocked", "failed"}


class DemoChat(BaseModel):
    text: str
    auto: str | None = Field(None, description="Chat answer to a question, or 'expire'.")


class DemoEmail(BaseModel):
    id: str
    sender: str = Field(alias="from")
    to: str
    subject: str
    body: str
    person: Classification = Field(
        description="What a sensible person does with it: respond to a real request, "
        "acknowledge a notification that was right to show, ignore junk."
    )
    auto: str | None = Field(
        None, description="An answer that overrides the person's, e.g. 'expire' (left unanswered)."
    )

    def payload(self, run: str) -> dict[str, str]:
        return {
            "id": f"{self.id}-{run}",
            "from": self.sender,
            "to": self.to,
            "subject": self.subject,
            "body": self.body,
        }


class DemoContact(BaseModel):
    name: str
    email: str


class DemoInbox(BaseModel):
    contacts: list[DemoContact] = Field(default_factory=list)
    chats: list[DemoChat]
    emails: list[DemoEmail]


class DemoRow(BaseModel):
    channel: str
    message: str
    classification: str = ""
    hitl: list[str] = Field(default_factory=list)
    actions: list[str] = Field(default_factory=list)
    status: str = ""
    reply: str = ""


def load_inbox() -> DemoInbox:
    raw = resources.files("memoir.data").joinpath("demo_inbox.json").read_text()
    return DemoInbox.model_validate(json.loads(raw))


class DemoRunner:
    def __init__(
        self, api: httpx.AsyncClient, console: Console, *, interactive: bool, ttl: int
    ) -> None:
        self._api = api
        self._console = console
        self._interactive = interactive
        self._ttl = ttl
        self._run = uuid.uuid4().hex[:6]
        self._thread = f"demo-chat-{self._run}"
        self._count = 0

    def _message_id(self) -> str:
        self._count += 1
        return f"demo-{self._run}-{self._count}"

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await self._api.post(path, json=body)
        if response.status_code >= 400:
            raise RuntimeError(f"POST {path} → {response.status_code}: {response.text}")
        result: dict[str, Any] = response.json()
        return result

    async def chat(self, item: DemoChat) -> DemoRow:
        row = DemoRow(channel="chat", message=item.text)
        body = {"thread_id": self._thread, "message_id": self._message_id(), "text": item.text}
        routed = await self._post("/v1/messages", body)
        if routed["status"] != "started":
            row.status, row.reply = routed["status"], routed.get("reply") or ""
            return row
        return await self._follow(routed["turn_id"], row, item.auto)

    async def email(self, item: DemoEmail) -> DemoRow:
        row = DemoRow(channel="email", message=item.subject)
        routed = await self._post("/v1/emails", item.payload(self._run))
        return await self._follow(routed["turn_id"], row, item.auto, item.person)

    async def _follow(
        self, turn_id: str, row: DemoRow, auto: str | None, person: Classification | None = None
    ) -> DemoRow:
        """Poll the turn; answer each question it asks; stop when it ends."""
        answered: set[str] = set()
        while True:
            view = await self._wait(turn_id, answered)
            pending = view.get("pending")
            if view["status"] in TERMINAL or not pending:
                break
            answered.add(pending["hitl_id"])
            row.hitl.append(f"asked {pending['kind']}")
            answer = self._choose(pending, auto, person)
            auto = None  # a scripted answer is for the first question; later ones get defaults
            if answer == "expire":
                row.hitl.append("left to expire")
                continue
            await self._answer(pending, answer)
            row.hitl.append(f"answered {answer!r}")
        row.status = view["status"]
        row.classification = view.get("classification") or ""
        row.reply = view.get("reply") or ""
        row.actions = [
            f"{a['capability']} {'✓' if a['success'] else '✗'}" for a in view.get("actions", [])
        ]
        if row.status == "expired":
            row.hitl.append("expired")
        return row

    async def _wait(self, turn_id: str, answered: set[str]) -> dict[str, Any]:
        deadline = time.monotonic() + self._ttl + 120
        while time.monotonic() < deadline:
            response = await self._api.get(f"/v1/turns/{turn_id}")
            if response.status_code == 200:
                view: dict[str, Any] = response.json()
                pending = view.get("pending")
                if view["status"] in TERMINAL or (pending and pending["hitl_id"] not in answered):
                    return view
            await asyncio.sleep(0.2)
        raise TimeoutError(f"turn {turn_id} did not finish")

    def _choose(
        self, pending: dict[str, Any], auto: str | None, person: Classification | None = None
    ) -> str:
        if self._interactive:
            self._console.print(f"\n[bold]{pending['kind']}[/]: {pending['question']}")
            self._console.print(pending["description"])
            return Prompt.ask("your answer (or 'expire')")
        return scripted_answer(pending["kind"], auto, person)

    async def _answer(self, pending: dict[str, Any], answer: str) -> None:
        if pending["thread_id"].startswith("email-"):
            await self._post(f"/v1/inbox/{pending['hitl_id']}", _inbox_response(pending, answer))
            return
        body = {"thread_id": pending["thread_id"], "message_id": self._message_id(), "text": answer}
        await self._post("/v1/messages", body)


# How a sensible person answers a notify question about an email: what the email deserves.
NOTIFY_ANSWERS = {
    Classification.NOTIFY: "acknowledge",  # seen, thanks: notifying was right
    Classification.IGNORE: "ignore",  # junk: don't show me emails like it
    Classification.RESPOND: "respond",  # it needs a reply after all
}


def scripted_answer(kind: str, auto: str | None, person: Classification | None) -> str:
    """The scripted person's answer to a question of `kind`: the item's `auto` answer if any;
    for a notify question, what the email deserves (`person`); else yes (approve)."""
    if auto:
        return auto
    if kind == "notify":
        return NOTIFY_ANSWERS[person or Classification.NOTIFY]
    return "yes"


def _inbox_response(pending: dict[str, Any], answer: str) -> dict[str, Any]:
    """The inbox form of a demo answer: notify's respond needs a response, yes is accept, and
    so is acknowledge (a notification read: "seen, thanks")."""
    word = answer.strip().lower()
    if word in ("ignore", "no"):
        return {"type": "ignore"}
    if word in ("accept", "yes", "acknowledge") and pending["config"]["allow_accept"]:
        return {"type": "accept"}
    if word == "respond":
        return {"type": "response", "args": "Please reply briefly and politely."}
    return {"type": "response", "args": answer}


def outcome_table(rows: list[DemoRow]) -> Table:
    table = Table(title="Memoir demo: what happened to each message", show_lines=True)
    for column in ("#", "channel", "message", "class", "HITL", "actions", "status", "reply"):
        table.add_column(column, overflow="fold")
    for number, row in enumerate(rows, start=1):
        table.add_row(
            str(number),
            row.channel,
            row.message[:48],
            row.classification,
            "\n".join(row.hitl),
            "\n".join(row.actions),
            row.status,
            " ".join(row.reply.split())[:200],
        )
    return table


async def run_demo(
    api_url: str, token: str, console: Console, *, interactive: bool = False, ttl: int = 300
) -> list[DemoRow]:
    """Send every sample message, one after another, and collect what happened."""
    inbox = load_inbox()
    headers = {"Authorization": f"Bearer {token}"}
    rows: list[DemoRow] = []
    async with httpx.AsyncClient(base_url=api_url, headers=headers, timeout=30) as api:
        runner = DemoRunner(api, console, interactive=interactive, ttl=ttl)
        total = len(inbox.chats) + len(inbox.emails)
        with Progress(console=console, transient=interactive) as progress:
            task = progress.add_task("sending the sample inbox", total=total)
            for chat in inbox.chats:
                progress.update(task, description=f"chat: {chat.text[:40]}")
                rows.append(await runner.chat(chat))
                progress.advance(task)
            for email in inbox.emails:
                progress.update(task, description=f"email: {email.subject[:40]}")
                rows.append(await runner.email(email))
                progress.advance(task)
    return rows

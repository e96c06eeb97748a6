"""The reply of a turn (seed 002 JoinNode → ResponseFormatterNode → ResponseWriterNode).

Join: which steps worked and which failed. Format: one plain sentence per step, dates in the
user's timezone. Write: the writer (`memoir.llm.providers.write`) turns the typed
`WriterRequest` into the message: a chat model reads it rendered (`reply_messages`, texts in
`memoir.llm.prompts`), the offline writer reads its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.llm.offline_writer import write_reply_offline
from memoir.llm.prompts import NONE, REPLY_SYSTEM_PROMPT, REPLY_USER_PROMPT, render_bullets
from memoir.llm.providers import write
from memoir.models import Classification, ExecutionResult, PlanStep, ReplyRequest
from memoir.text import one_line, second_person

__all__ = [
    "ResultLine",
    "WriterRequest",
    "format_result",
    "format_when",
    "join_status",
    "reply_messages",
    "write_reply",
    "writer_request",
]


class ResultLine(BaseModel):
    """One step as the writer reads it: worked or not, its capability, a sentence, sub-items."""

    ok: bool
    capability: str
    text: str
    items: list[str] = Field(default_factory=list)


class WriterRequest(BaseModel):
    """Everything the reply prompt shows: the writer's typed request."""

    name: str = ""
    timezone: str = "UTC"
    language: str = "en"
    profile: str = ""
    memory: list[str] = Field(default_factory=list)
    now_line: str = ""
    request: str = Field(default="", description="The message, or the email's markdown.")
    email_subject: str = ""
    email_author: str = ""
    intent: str = ""
    intent_type: str = ""
    classification: Classification | None = None
    status: str = "nothing_executed"
    note: str = ""
    results: list[ResultLine] = Field(default_factory=list)
    response_preferences: str = ""
    cal_preferences: str = ""


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except Exception:
        return ZoneInfo("UTC")


def format_when(value: Any, now: datetime, tz: str) -> str:
    """An ISO datetime as the user reads it: "17:00 tomorrow (Europe/Paris)"."""
    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    zone = _zone(tz)
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    local, today = when.astimezone(zone), now.astimezone(zone).date()
    days = (local.date() - today).days
    if days == 0:
        day = "today"
    elif days == 1:
        day = "tomorrow"
    elif days == -1:
        day = "yesterday"
    elif 1 < days < 7:
        day = f"on {local:%A}"
    elif local.year == today.year:
        day = f"on {local:%a} {local.day} {local:%b}"
    else:
        day = f"on {local:%a} {local.day} {local:%b %Y}"
    return f"{local:%H:%M} {day} ({tz})"


def join_status(results: list[ExecutionResult]) -> str:
    """Seed 002 JoinNode: all_succeeded, partial_failure, all_failed or nothing_executed."""
    if not results:
        return "nothing_executed"
    failed = sum(1 for r in results if not r.success)
    if failed == 0:
        return "all_succeeded"
    if failed == len(results):
        return "all_failed"
    return f"partial_failure ({failed} of {len(results)} steps failed)"


def _reminder_phrase(text: str) -> str:
    text = second_person(text.strip())
    first = text.split()[0].lower() if text.split() else ""
    if first in ("the", "a", "an", "your", "about"):
        return f"about {text.removeprefix('about ')}"
    return f"to {text}"


def _items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _label(args: dict[str, Any]) -> str:
    return str(args.get("title") or args.get("text") or args.get("query") or "it")


def format_result(
    result: ExecutionResult, step: PlanStep | None, now: datetime, tz: str
) -> ResultLine:
    """Seed 002 ResponseFormatterNode: one step as a sentence (and its items)."""
    args: dict[str, Any] = {**(step.args if step else {}), **result.data}
    cap = result.capability

    def when(key: str) -> str:
        return format_when(args[key], now, tz) if args.get(key) else ""

    items: list[str] = []
    if not result.success:
        failure = _failure_phrase(cap, args)
        reason = one_line(result.error or result.summary or "unknown error", 200)
        return ResultLine(ok=False, capability=cap, text=f"I couldn't {failure}: {reason}")
    if cap == "reminders.create" and args.get("text"):
        text = f"I'll remind you {_reminder_phrase(str(args['text']))}"
        text += f" at {when('due_at')}" if args.get("due_at") else ""
    elif cap == "reminders.list" and isinstance(args.get("reminders"), list):
        reminders = _items(args["reminders"])
        text = "Here are your reminders" if reminders else "You have no reminders"
        for r in reminders:
            due = format_when(r["due_at"], now, tz) if r.get("due_at") else ""
            items.append(one_line(str(r.get("text", ""))) + (f" — {due}" if due else ""))
    elif cap == "reminders.complete":
        text = f"I marked “{_label(args)}” as done"
    elif cap == "reminders.delete":
        if args.get("all"):
            count = args.get("count", args.get("deleted"))
            text = "I deleted all your reminders" + (f" ({count})" if count is not None else "")
        else:
            text = f"I deleted the reminder “{_label(args)}”"
    elif cap == "email.send" and args.get("to"):
        text = f"I sent your email to {args['to']}"
        text += f" (“{one_line(str(args['subject']), 80)}”)" if args.get("subject") else ""
    elif cap == "calendar.schedule":
        text = f"I scheduled “{_label(args)}”" + (
            f" at {when('start')}" if args.get("start") else ""
        )
        if args.get("attendees"):
            text += " with " + ", ".join(str(a) for a in args["attendees"])
    elif cap == "calendar.update":
        text = f"I moved “{_label(args)}”" + (f" to {when('start')}" if args.get("start") else "")
    elif cap == "calendar.cancel":
        text = f"I cancelled “{_label(args)}”"
    elif cap == "calendar.availability" and isinstance(args.get("events"), list):
        events = _items(args["events"])
        text = "Here's what's on your calendar" if events else "Your calendar is free then"
        for e in events:
            start = format_when(e["start"], now, tz) if e.get("start") else ""
            items.append(one_line(str(e.get("title", "busy"))) + (f" — {start}" if start else ""))
    elif cap == "knowledge.search" and isinstance(args.get("chunks"), list):
        chunks = _items(args["chunks"])
        query = one_line(str(args.get("query", "")), 120)
        text = (
            "From your documents"
            if chunks
            else f"I found nothing about “{query}” in your documents"
        )
        for c in chunks:
            items.append(
                f"According to {c.get('document')}: {one_line(str(c.get('text', '')), 600)}"
            )
    elif cap in ("notes.draft", "handoff.draft") and isinstance(args.get("lines"), list):
        text = str(args.get("heading") or result.summary.split("\n", 1)[0])
        items.extend(one_line(str(line), 2000) for line in args["lines"])
    else:
        text = result.summary or f"{cap} done"
    return ResultLine(ok=True, capability=cap, text=one_line(text, 400), items=items)


def _failure_phrase(cap: str, args: dict[str, Any]) -> str:
    label = _label(args)
    phrases = {
        "reminders.create": f"set the reminder {_reminder_phrase(str(args.get('text', label)))}",
        "reminders.list": "list your reminders",
        "reminders.complete": f"mark “{label}” as done",
        "reminders.delete": "delete your reminders"
        if args.get("all")
        else f"delete the reminder “{label}”",
        "email.send": f"send the email to {args.get('to', 'them')}",
        "calendar.schedule": f"schedule “{label}”",
        "calendar.update": f"move “{label}”",
        "calendar.cancel": f"cancel “{label}”",
        "calendar.availability": "check your calendar",
        "contacts.lookup": f"look up {args.get('name', 'the contact')}",
        "knowledge.search": "search your documents",
        "notes.draft": "draft the notes",
        "handoff.draft": "draft the handoff",
    }
    return phrases.get(cap, f"run {cap}")


def _result_lines(request: ReplyRequest, tz: str) -> list[ResultLine]:
    """Every step's line; after a failure, the steps that never ran say so."""
    now = request.turn.context.now
    steps = {s.id: s for s in request.plan.steps} if request.plan else {}
    lines = [format_result(r, steps.get(r.step_id), now, tz) for r in request.results]
    if request.plan and any(not r.success for r in request.results):
        done = {r.step_id for r in request.results}
        for step in request.plan.steps:
            if step.id not in done:
                phrase = _failure_phrase(step.capability, dict(step.args))
                text = f"I didn't {phrase}: an earlier step failed"
                lines.append(ResultLine(ok=False, capability=step.capability, text=text))
    return lines


def writer_request(
    request: ReplyRequest, preferences: Mapping[str, str] | None = None
) -> WriterRequest:
    """The writer's typed request: the joined and formatted results, and what the prompt shows.

    `preferences` may hold the `response_preferences` and `cal_preferences` texts.
    """
    turn = request.turn
    user = turn.context.user
    tz = user.timezone or "UTC"
    local = turn.context.now.astimezone(_zone(tz))
    message = turn.message
    prefs = preferences or {}
    return WriterRequest(
        name=user.name,
        timezone=tz,
        language=user.language or "en",
        profile="\n".join(
            line for line in (f"Name: {user.name}", turn.memory.profile_line) if line.strip()
        ),
        memory=list(turn.memory.bullets),
        now_line=turn.memory.now_line or f"Now: {local:%A %Y-%m-%d %H:%M} {tz}",
        request=message.email.markdown() if message.email else message.text,
        email_subject=message.email.subject if message.email else "",
        email_author=message.email.author if message.email else "",
        intent=request.plan.intent if request.plan else "",
        intent_type=request.plan.intent_type if request.plan else "",
        classification=request.classification,
        status=join_status(request.results),
        note=(request.note or "").strip(),
        results=_result_lines(request, tz),
        response_preferences=prefs.get("response_preferences", ""),
        cal_preferences=prefs.get("cal_preferences", ""),
    )


def _render_results(results: list[ResultLine]) -> str:
    """The `## Results` lines: "- ok | capability | sentence", sub-items indented."""
    lines: list[str] = []
    for r in results:
        lines.append(f"- {'ok' if r.ok else 'failed'} | {r.capability} | {r.text}")
        lines.extend(f"  - {i}" for i in r.items)
    return "\n".join(lines) or NONE


def render_preferences(response: str, calendar: str) -> str:
    """The `## Preferences` block: the response and calendar preference texts, or (none)."""
    parts = [
        f"{label}:\n{text.strip()}"
        for label, text in (("Response preferences", response), ("Calendar preferences", calendar))
        if text.strip()
    ]
    return "\n\n".join(parts) or NONE


def reply_messages(request: WriterRequest) -> list[BaseMessage]:
    """The rendered reply prompts."""
    intent_lines = [f"{request.intent} ({request.intent_type})"] if request.intent else []
    if request.classification is not None:
        intent_lines.append(f"Classification: {request.classification.value}")
    system = REPLY_SYSTEM_PROMPT.format(
        name=request.name or "the user",
        timezone=request.timezone,
        language=request.language,
        profile=request.profile or NONE,
        memory=render_bullets(request.memory),
        preferences=render_preferences(request.response_preferences, request.cal_preferences),
        now_line=request.now_line,
    )
    user_prompt = REPLY_USER_PROMPT.format(
        request=request.request,
        intent="\n".join(intent_lines) or NONE,
        status=request.status,
        note=request.note or NONE,
        results=_render_results(request.results),
    )
    return [SystemMessage(content=system), HumanMessage(content=user_prompt)]


async def write_reply(
    llm: BaseChatModel, request: ReplyRequest, *, preferences: Mapping[str, str] | None = None
) -> str:
    """The turn's final message, written by `llm` (or offline) from the formatted results."""
    typed = writer_request(request, preferences)
    text = await write(llm, typed, render=reply_messages, offline=write_reply_offline)
    return text.strip() or write_reply_offline(typed)

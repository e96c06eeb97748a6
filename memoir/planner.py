"""The planner (seed 002 PlannerNode): a request in, a validated `Plan` out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.llm.offline_planner import plan_offline
from memoir.llm.prompts import (
    APPROVAL_FEEDBACK,
    CAPABILITY_ARGS,
    CLARIFICATION_FEEDBACK,
    NONE,
    PLANNER_SYSTEM_PROMPT,
    PLANNER_USER_PROMPT,
    RESPOND_FEEDBACK,
    render_bullets,
    render_recent_messages,
)
from memoir.llm.providers import ask
from memoir.models import (
    EmailMessage,
    LatestAction,
    Plan,
    PlanRequest,
    PlanStep,
    RecentMessage,
)
from memoir.text import one_line

__all__ = [
    "APPROVAL_CAPABILITIES",
    "KNOWN_CAPABILITIES",
    "Feedback",
    "PlannerRequest",
    "approval_feedback",
    "clarification_feedback",
    "make_plan",
    "planner_messages",
    "planner_request",
    "render_latest_actions",
    "respond_feedback",
    "validate_plan",
]

KNOWN_CAPABILITIES: tuple[str, ...] = (
    "reminders.create",
    "reminders.list",
    "reminders.complete",
    "reminders.delete",
    "email.send",
    "calendar.availability",
    "calendar.schedule",
    "calendar.update",
    "calendar.cancel",
    "contacts.lookup",
    "knowledge.search",
    "notes.draft",
    "handoff.draft",
)
assert set(KNOWN_CAPABILITIES) == set(CAPABILITY_ARGS)

# Steps with these capabilities always need a person's approval (seed 002 HITL gate).
APPROVAL_CAPABILITIES = frozenset(
    {"email.send", "calendar.schedule", "calendar.update", "calendar.cancel", "reminders.delete"}
)
DROP_PENALTY = 0.7  # confidence multiplier per dropped step
EMAIL_REQUEST_PREFIX = "Respond to the email"


def respond_feedback(feedback: str) -> str:
    """Feedback line for a notify email the user chose to respond to (seed 000)."""
    return RESPOND_FEEDBACK.format(feedback=feedback.strip())


def clarification_feedback(answer: str) -> str:
    """Feedback line for an answer to a clarification / intent_unclear / missing_fields ask."""
    return CLARIFICATION_FEEDBACK.format(answer=answer.strip())


def approval_feedback(action: str, feedback: str) -> str:
    """Feedback line for an Agent Inbox `response` on an approval (e.g. on email.send)."""
    return APPROVAL_FEEDBACK.format(action=action, feedback=feedback.strip())


class Feedback(BaseModel):
    """A person's answer to an earlier question of the turn."""

    kind: Literal["clarification", "draft"] = Field(
        description="clarification: completes or replaces the request; draft: revises the draft."
    )
    text: str
    action: str | None = Field(default=None, description="The proposed capability it is about.")

    def line(self) -> str:
        """The feedback line the prompt shows."""
        if self.kind == "clarification":
            return clarification_feedback(self.text)
        return (
            approval_feedback(self.action, self.text)
            if self.action
            else respond_feedback(self.text)
        )


class PlannerRequest(BaseModel):
    """Everything the planner prompt shows, typed: the offline planner reads these fields."""

    request: str = Field(description="The user's message (an email turn: the email's text).")
    email: EmailMessage | None = Field(default=None, description="The email to answer, if any.")
    recent_messages: list[RecentMessage] = Field(default_factory=list)
    reply_to: str | None = None
    feedback: list[Feedback] = Field(default_factory=list)
    name: str = ""
    language: str = "en"
    profile_line: str = ""
    memory: list[str] = Field(default_factory=list)
    latest_actions: list[LatestAction] = Field(default_factory=list)
    now: datetime = Field(description="Now, in the user's timezone.")
    timezone: str = "UTC"
    now_line: str = ""
    capabilities: list[str] = Field(default_factory=list)
    response_preferences: str = ""
    cal_preferences: str = ""


# The workflow's feedback lines (PlanRequest.feedback): seed 000's notify → respond message, an
# approval's feedback on the proposed step, a clarification. "Respond to the email: …" lines
# repeat the turn's email and are left out.
_APPROVAL_LINE = re.compile(
    r"^(?:User gave feedback|Feedback) on the proposed (?P<action>[\w.]+):\s*(?P<text>.*)$", re.S
)
_RESPOND_PREFIX = respond_feedback("")
_CLARIFICATION_PREFIX = clarification_feedback("")


def read_feedback(lines: list[str]) -> list[Feedback]:
    """Typed feedback from the workflow's feedback lines."""
    out = []
    for line in (raw.strip() for raw in lines):
        if m := _APPROVAL_LINE.match(line):
            out.append(Feedback(kind="draft", action=m["action"], text=m["text"].strip()))
        elif line.startswith(_RESPOND_PREFIX.strip()):
            out.append(Feedback(kind="draft", text=line[len(_RESPOND_PREFIX.strip()) :].strip()))
        elif line.startswith(_CLARIFICATION_PREFIX.strip()):
            text = line[len(_CLARIFICATION_PREFIX.strip()) :].strip()
            out.append(Feedback(kind="clarification", text=text))
        elif line and not line.startswith(EMAIL_REQUEST_PREFIX):
            out.append(Feedback(kind="clarification", text=line))
    return [f for f in out if f.text]


def planner_request(
    request: PlanRequest,
    capabilities: list[str],
    preferences: Mapping[str, str] | None = None,
) -> PlannerRequest:
    """The typed planner request of a turn; `preferences` may hold the `response_preferences`
    and `cal_preferences` texts (seed 000: the response agent reads them)."""
    turn = request.turn
    context, prefs = turn.context, preferences or {}
    tz = context.user.timezone or "UTC"
    try:
        local = context.now.astimezone(ZoneInfo(tz))
    except Exception:  # unknown zone: fall back to UTC rather than fail the turn
        tz, local = "UTC", context.now.astimezone(ZoneInfo("UTC"))
    message = turn.message
    return PlannerRequest(
        request=message.email.body if message.email else message.text,
        email=message.email,
        recent_messages=context.recent_messages,
        reply_to=context.reply_context,
        feedback=read_feedback(request.feedback),
        name=context.user.name,
        language=context.user.language,
        profile_line=turn.memory.profile_line,
        memory=turn.memory.bullets,
        latest_actions=sorted(context.latest_actions, key=lambda a: a.created_at, reverse=True),
        now=local,
        timezone=tz,
        now_line=turn.memory.now_line or f"Now: {local:%A %Y-%m-%d %H:%M} {tz}",
        capabilities=list(capabilities),
        response_preferences=prefs.get("response_preferences", "").strip(),
        cal_preferences=prefs.get("cal_preferences", "").strip(),
    )


def render_tools(names: Iterable[str]) -> str:
    """The tool list of the planner prompt."""
    return "\n".join(f"- {name} {CAPABILITY_ARGS.get(name, '{}')}" for name in names)


def render_latest_actions(actions: Sequence[LatestAction], limit: int = 3) -> str:
    """The `## Latest Actions` block, newest first, one line each:
    `- {created_at ISO} | {capability} | {action} | {summary} | when={when} | ids: k=v, k=v`"""
    ordered = sorted(actions, key=lambda a: a.created_at, reverse=True)[:limit]
    lines = []
    for a in ordered:
        parts = [a.created_at.isoformat(), a.capability, a.action, one_line(a.summary, 200)]
        if a.when:
            parts.append(f"when={a.when}")
        if a.external_ids:
            parts.append("ids: " + ", ".join(f"{k}={v}" for k, v in a.external_ids.items()))
        lines.append("- " + " | ".join(parts))
    return "\n".join(lines) if lines else NONE


def render_email_request(email: EmailMessage) -> str:
    """The `## Request` of a turn that answers an email (seed 000 "Respond to the email")."""
    return f"{EMAIL_REQUEST_PREFIX} (id {email.email_id}):\n\n{email.markdown()}"


def planner_messages(request: PlannerRequest) -> list[BaseMessage]:
    """The rendered planner prompts (texts in `memoir.llm.prompts`)."""
    profile = "\n".join(
        line
        for line in (f"Name: {request.name}", f"Language: {request.language}", request.profile_line)
        if line.strip()
    )
    pref_text = "\n\n".join(
        f"{label}:\n{text}"
        for label, text in (
            ("Response preferences", request.response_preferences),
            ("Calendar preferences", request.cal_preferences),
        )
        if text
    )
    system = PLANNER_SYSTEM_PROMPT.format(
        email_request_prefix=EMAIL_REQUEST_PREFIX,
        tools=render_tools(KNOWN_CAPABILITIES),
        capabilities=render_bullets(request.capabilities),
        profile=profile or NONE,
        memory=render_bullets(request.memory),
        preferences=pref_text or NONE,
        latest_actions=render_latest_actions(request.latest_actions),
        now_line=request.now_line,
        now_iso=request.now.isoformat(),
        timezone=request.timezone,
    )
    user_prompt = PLANNER_USER_PROMPT.format(
        recent_messages=render_recent_messages(request.recent_messages),
        reply_to=request.reply_to.strip() if request.reply_to else NONE,
        feedback=render_bullets(f.line() for f in request.feedback),
        request=render_email_request(request.email) if request.email else request.request,
    )
    return [SystemMessage(content=system), HumanMessage(content=user_prompt)]


async def make_plan(
    llm: BaseChatModel,
    request: PlanRequest,
    capabilities: list[str],
    preferences: Mapping[str, str] | None = None,
) -> Plan:
    """Plan the turn's request with `llm` (or offline), then `validate_plan` it.

    `capabilities` are the user's connected tools; `preferences` may hold the
    `response_preferences` and `cal_preferences` texts.
    """
    typed = planner_request(request, capabilities, preferences)
    plan = await ask(llm, Plan, typed, render=planner_messages, offline=plan_offline)
    return validate_plan(plan)


def _drop_cycles(steps: list[PlanStep]) -> tuple[list[PlanStep], list[str]]:
    """Kahn's algorithm: steps never freed are on (or behind) a cycle."""
    remaining = {s.id: set(s.depends_on) for s in steps}
    done: set[str] = set()
    progress = True
    while progress:
        progress = False
        for step_id, deps in list(remaining.items()):
            if deps <= done:
                done.add(step_id)
                del remaining[step_id]
                progress = True
    kept = [s for s in steps if s.id in done]
    return kept, sorted(remaining)


def validate_plan(plan: Plan) -> Plan:
    """Drop invalid steps (unknown tool, duplicate id, dangling or cyclic depends_on), lower the
    confidence for each, and make approval-only tools need approval."""
    problems: list[str] = []
    dropped = 0
    steps: list[PlanStep] = []
    seen: set[str] = set()
    for step in plan.steps:
        if step.capability not in KNOWN_CAPABILITIES:
            problems.append(f"dropped {step.id}: unknown capability {step.capability!r}")
        elif not step.id.strip() or step.id in seen:
            problems.append(f"dropped {step.id!r}: duplicate or empty step id")
        else:
            seen.add(step.id)
            deps = list(dict.fromkeys(step.depends_on))
            steps.append(step.model_copy(update={"depends_on": deps}))
            continue
        dropped += 1
    changed = True
    while changed:  # dropping a step can leave its dependents dangling
        changed = False
        ids = {s.id for s in steps}
        kept = []
        for step in steps:
            bad = [d for d in step.depends_on if d not in ids or d == step.id]
            if bad:
                problems.append(f"dropped {step.id}: depends on missing step(s) {bad}")
                dropped += 1
                changed = True
            else:
                kept.append(step)
        steps = kept
    steps, cyclic = _drop_cycles(steps)
    if cyclic:
        problems.append(f"dropped {cyclic}: cyclic depends_on")
        dropped += len(cyclic)

    update: dict[str, object] = {"steps": steps}
    confidence = plan.confidence
    if dropped:
        confidence = round(confidence * DROP_PENALTY**dropped, 3)
        if plan.steps and not steps:
            confidence = min(confidence, 0.3)
            if not plan.question:
                update["question"] = (
                    "Sorry, I couldn't work out how to do that — could you rephrase?"
                )
    update["confidence"] = confidence
    needs = sorted({s.capability for s in steps} & APPROVAL_CAPABILITIES)
    if needs and not plan.needs_approval:
        update["needs_approval"] = True
        problems.append(f"{', '.join(needs)} always need approval")
        if plan.risk == "low":
            update["risk"] = "medium"
    if problems:
        update["reasoning"] = (plan.reasoning + " Validation: " + "; ".join(problems) + ".").strip()
    return plan.model_copy(update=update)

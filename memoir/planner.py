"""The planner (seed 002 PlannerNode): a request in, a validated `Plan` out."""

from __future__ import annotations

from collections.abc import Mapping
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memoir.llm import structured
from memoir.llm.prompts import (
    CAPABILITY_ARGS,
    EMAIL_REQUEST_PREFIX,
    NONE,
    PLANNER_SYSTEM_PROMPT,
    PLANNER_USER_PROMPT,
    render_bullets,
    render_email_request,
    render_latest_actions,
    render_recent_messages,
    render_tools,
)
from memoir.models import Plan, PlanRequest, PlanStep

__all__ = [
    "APPROVAL_CAPABILITIES",
    "KNOWN_CAPABILITIES",
    "make_plan",
    "planner_messages",
    "request_text",
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


def request_text(request: PlanRequest) -> str:
    """What to plan: the message, or "Respond to the email …" for an email turn."""
    message = request.turn.message
    if message.email is not None:
        return render_email_request(message.email)
    return message.text


def _now_line(request: PlanRequest) -> tuple[str, str, str]:
    context = request.turn.context
    tz = context.user.timezone or "UTC"
    try:
        local = context.now.astimezone(ZoneInfo(tz))
    except Exception:  # unknown zone: fall back to UTC rather than fail the turn
        tz, local = "UTC", context.now.astimezone(ZoneInfo("UTC"))
    line = request.turn.memory.now_line or f"Now: {local:%A %Y-%m-%d %H:%M} {tz}"
    return line, local.isoformat(), tz


def planner_messages(
    request: PlanRequest,
    capabilities: list[str],
    preferences: Mapping[str, str] | None = None,
) -> list[BaseMessage]:
    """The rendered planner prompts (formats in `memoir.llm.prompts`)."""
    turn = request.turn
    user = turn.context.user
    now_line, now_iso, tz = _now_line(request)
    profile = "\n".join(
        line
        for line in (f"Name: {user.name}", f"Language: {user.language}", turn.memory.profile_line)
        if line.strip()
    )
    prefs = preferences or {}
    pref_text = "\n\n".join(
        f"{label}:\n{prefs[key].strip()}"
        for key, label in (
            ("response_preferences", "Response preferences"),
            ("cal_preferences", "Calendar preferences"),
        )
        if prefs.get(key, "").strip()
    )
    system = PLANNER_SYSTEM_PROMPT.format(
        email_request_prefix=EMAIL_REQUEST_PREFIX,
        tools=render_tools(KNOWN_CAPABILITIES),
        capabilities=render_bullets(capabilities),
        profile=profile or NONE,
        memory=render_bullets(turn.memory.bullets),
        preferences=pref_text or NONE,
        latest_actions=render_latest_actions(turn.context.latest_actions),
        now_line=now_line,
        now_iso=now_iso,
        timezone=tz,
    )
    user_prompt = PLANNER_USER_PROMPT.format(
        recent_messages=render_recent_messages(turn.context.recent_messages),
        reply_to=turn.context.reply_context.strip() if turn.context.reply_context else NONE,
        feedback=render_bullets(request.feedback),
        request=request_text(request),
    )
    return [SystemMessage(content=system), HumanMessage(content=user_prompt)]


async def make_plan(
    llm: BaseChatModel,
    request: PlanRequest,
    capabilities: list[str],
    *,
    preferences: Mapping[str, str] | None = None,
) -> Plan:
    """Plan the turn's request with `llm`, then `validate_plan` it.

    `capabilities` are the user's connected tools; `preferences` may hold the
    `response_preferences` and `cal_preferences` texts (seed 000: the response agent reads them).
    """
    runnable = structured(llm, Plan)
    plan = await runnable.ainvoke(planner_messages(request, capabilities, preferences))
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

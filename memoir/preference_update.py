"""Preference memory updates (seed 000 `update_memory`): targeted, never a rewrite.

The updater takes a typed `PreferenceRequest` (namespace, current profile, decision, the email,
the draft's original and edited args, the feedback, the triage lesson) through
`memoir.llm.providers.ask`: a chat model reads it rendered (`preference_update_messages`), the
offline learner (`memoir.llm.offline_preferences`) reads its fields.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memoir.lessons import Lesson, add_lesson, has_lesson, lesson_for_decision
from memoir.llm.offline_preferences import update_preferences_offline
from memoir.llm.prompts import (
    DECISION_MESSAGES,
    LESSON_MESSAGE,
    MEMORY_UPDATE_INSTRUCTIONS,
    MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT,
    MEMORY_UPDATE_RULES,
)
from memoir.llm.providers import ask
from memoir.models import EmailMessage, PreferenceNamespace, PreferenceUpdate, UserPreferences
from memoir.models.turn import normalize_decision
from memoir.text import loads_object

__all__ = [
    "NAMESPACE_FOR_DECISION",
    "PreferenceRequest",
    "preference_request",
    "preference_update_messages",
    "preserves_profile",
    "request_for_update",
    "updated_preferences",
]

# Seed 000 section 4: which human decision updates which preference memory.
NAMESPACE_FOR_DECISION: dict[str, PreferenceNamespace] = {
    "notify.respond": "triage_preferences",
    "notify.ignore": "triage_preferences",
    "notify.acknowledge": "triage_preferences",
    "email.edit": "response_preferences",
    "calendar.edit": "cal_preferences",
    "email.ignore": "triage_preferences",
    "calendar.ignore": "triage_preferences",
    "question.ignore": "triage_preferences",
    "email.feedback": "response_preferences",
    "calendar.feedback": "cal_preferences",
}
assert set(NAMESPACE_FOR_DECISION) == set(DECISION_MESSAGES)


@dataclass(frozen=True)
class PreferenceRequest:
    """What the updater sees for one human decision."""

    namespace: str
    profile: str
    decision: str
    email: EmailMessage | None = None
    original: dict[str, Any] = field(default_factory=dict)
    edited: dict[str, Any] = field(default_factory=dict)
    feedback: str = ""
    lesson: Lesson | None = None
    context: list[str] = field(default_factory=list)  # other words of the decision, shown as is


def preference_request(
    namespace: str,
    profile: str,
    decision: str,
    *,
    email: EmailMessage | None = None,
    original: dict[str, Any] | None = None,
    edited: dict[str, Any] | None = None,
    feedback: str | None = None,
    context: list[str] | None = None,
) -> PreferenceRequest:
    """The request for `decision` (capability spellings such as "email.send.edit" accepted);
    a triage decision on an email gets its lesson (`memoir.lessons`)."""
    decision = normalize_decision(decision)
    if decision not in DECISION_MESSAGES:
        raise ValueError(
            f"unknown decision {decision!r}; expected one of {list(DECISION_MESSAGES)}"
        )
    lesson = None
    if namespace == "triage_preferences" and email is not None:
        lesson = lesson_for_decision(decision, email, profile)
    return PreferenceRequest(
        namespace=namespace,
        profile=profile,
        decision=decision,
        email=email,
        original=dict(original or {}),
        edited=dict(edited or {}),
        feedback=(feedback or "").strip(),
        lesson=lesson,
        context=list(context or []),
    )


def _args(text: str) -> dict[str, Any]:
    """Args the turn workflow wrote with str(dict): literals only, never code."""
    if loads_object(text):
        return loads_object(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


_WORKFLOW_LINE = re.compile(
    r"^(?:(?P<proposed>Proposed [\w.]+:)|(?P<edited>Edited to:)|(?P<feedback>User feedback:))"
    r"\s*(?P<rest>.*)$",
    re.S,
)


def request_for_update(update: PreferenceUpdate, profile: str) -> PreferenceRequest:
    """The request of a `PreferenceUpdate` from the turn workflow: its typed fields, or the
    "Proposed …: {args}" / "Edited to: {args}" / "User feedback: …" messages it sends."""
    typed: dict[str, Any] = {"original": None, "edited": None, "feedback": None}
    context: list[str] = []
    email_text = update.email.markdown() if update.email else None
    for message in update.messages:
        m = _WORKFLOW_LINE.match(message.strip())
        if m is None:
            if message.strip() != email_text:
                context.append(message)
            continue
        rest = m.group("rest").strip()
        if m.group("proposed"):
            typed["original"] = _args(rest)
        elif m.group("edited"):
            typed["edited"] = _args(rest)
        else:
            typed["feedback"] = rest
    return preference_request(
        update.namespace,
        profile,
        update.decision,
        email=update.email,
        original=update.original or typed["original"],
        edited=update.edited or typed["edited"],
        feedback=update.feedback or typed["feedback"],
        context=context,
    )


def _json(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)


def preference_update_messages(request: PreferenceRequest) -> list[BaseMessage]:
    """Seed 000's update call: the instructions with the profile; the email's markdown; the
    decision message (with the draft's `<original>`/`<edited>` args or the `<feedback>`) ending
    in a "Decision:" line; the triage lesson to write word for word; the reinforcement."""
    system = MEMORY_UPDATE_INSTRUCTIONS.format(
        rules=MEMORY_UPDATE_RULES, current_profile=request.profile, namespace=request.namespace
    )
    humans = [*request.context]
    if request.email is not None:
        humans.append(f"The email this decision is about:\n\n{request.email.markdown()}")
    parts = [DECISION_MESSAGES[request.decision]]
    if request.decision.endswith(".edit"):
        parts += [f"<original>{_json(request.original)}</original>", "Here is the edited version:"]
        parts.append(f"<edited>{_json(request.edited)}</edited>")
    if request.feedback:
        parts.append(f"<feedback>{request.feedback}</feedback>")
    humans.append("\n".join([*parts, f"Decision: {request.decision}"]))
    if request.lesson is not None:
        heading = request.lesson.action.value.capitalize()
        humans.append(LESSON_MESSAGE.format(heading=heading, line=request.lesson.line))
    humans.append(MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT)
    return [SystemMessage(content=system), *(HumanMessage(content=h) for h in humans)]


def preserves_profile(current: str, updated: str) -> bool:
    """Whether `updated` keeps the current profile: at most one line in five changed, at least
    one line may always be corrected, and it is never emptied."""
    if current.strip() and not updated.strip():
        return False
    lines = [line.strip() for line in current.splitlines() if line.strip()]
    kept = {line.strip() for line in updated.splitlines()}
    lost = [line for line in lines if line not in kept]
    return len(lost) <= max(1, len(lines) // 5)


async def updated_preferences(llm: BaseChatModel, request: PreferenceRequest) -> UserPreferences:
    """The profile after a targeted update for `request`.

    A result that would rewrite the profile (lose more than a line in five) is refused: the
    current profile comes back unchanged, and `chain_of_thought` says why. A triage lesson is
    always written as planned: a result without it gets it added under its heading.
    """
    current = request.profile
    result = await ask(
        llm,
        UserPreferences,
        request,
        render=preference_update_messages,
        offline=update_preferences_offline,
    )
    if not preserves_profile(current, result.user_preferences):
        result = UserPreferences(
            chain_of_thought="Refused the update: it rewrote the profile instead of a targeted "
            f"change. Model said: {result.chain_of_thought}",
            user_preferences=current,
        )
    lesson = request.lesson
    if lesson is not None and not has_lesson(result.user_preferences, lesson):
        text, what = add_lesson(result.user_preferences, lesson)
        result = UserPreferences(
            chain_of_thought=f"{result.chain_of_thought} The lesson was missing, so: {what}.",
            user_preferences=text,
        )
    return result

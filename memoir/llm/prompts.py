"""Every prompt Memoir sends to a chat model: the texts of `memoir/data/prompts.yaml` (one constant
each), rendered from typed requests by the modules that send them: triage (seed 000's router) by
`memoir.triage`, the preference updater by `memoir.preference_update`, the reply writer (seed 002)
by `memoir.responder`, drafts (seed 004) by `memoir.drafting`, the memory calls (seeds 001, 003) by
`memoir.memory.llm_calls`, the planner's by `memoir.planner` with the helpers below. The offline
provider reads the requests instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from memoir.llm.tables import table
from memoir.models import EmailMessage, LatestAction, RecentMessage
from memoir.text import one_line

_TEXTS: dict[str, Any] = table("prompts")

# Default preference profiles (seed 000 defaults; written by `get_memory` on first read)
DEFAULT_BACKGROUND: str = _TEXTS["default_background"]
DEFAULT_TRIAGE_INSTRUCTIONS: str = _TEXTS["default_triage_instructions"]
DEFAULT_RESPONSE_PREFERENCES: str = _TEXTS["default_response_preferences"]
DEFAULT_CAL_PREFERENCES: str = _TEXTS["default_cal_preferences"]

TRIAGE_SYSTEM_PROMPT: str = _TEXTS["triage_system_prompt"]
TRIAGE_USER_PROMPT: str = _TEXTS["triage_user_prompt"]
LESSON_MESSAGE: str = _TEXTS["lesson_message"]

CAPABILITY_ARGS: dict[str, str] = _TEXTS["capability_args"]
PLANNER_SYSTEM_PROMPT: str = _TEXTS["planner_system_prompt"]
PLANNER_USER_PROMPT: str = _TEXTS["planner_user_prompt"]
EMAIL_REQUEST_PREFIX = "Respond to the email"
NONE = "(none)"

MEMORY_UPDATE_RULES: str = _TEXTS["memory_update_rules"]
MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT = "Remember:\n" + MEMORY_UPDATE_RULES
MEMORY_UPDATE_INSTRUCTIONS: str = _TEXTS["memory_update_instructions"]
DECISION_MESSAGES: dict[str, str] = _TEXTS["decision_messages"]

REPLY_SYSTEM_PROMPT: str = _TEXTS["reply_system_prompt"]
REPLY_USER_PROMPT: str = _TEXTS["reply_user_prompt"]
DRAFT_SYSTEM_PROMPT: str = _TEXTS["draft_system_prompt"]
DRAFT_USER_PROMPT: str = _TEXTS["draft_user_prompt"]

MEMORY_GATE_SYSTEM_PROMPT: str = _TEXTS["memory_gate_system_prompt"]
MEMORY_EXTRACTION_SYSTEM_PROMPT: str = _TEXTS["memory_extraction_system_prompt"]
MEMORY_TURNS_PROMPT: str = _TEXTS["memory_turns_prompt"]
SAME_FACT_SYSTEM_PROMPT: str = _TEXTS["same_fact_system_prompt"]
SAME_FACT_USER_PROMPT: str = _TEXTS["same_fact_user_prompt"]
COMPOSE_SYSTEM_PROMPT: str = _TEXTS["compose_system_prompt"]
COMPOSE_USER_PROMPT: str = _TEXTS["compose_user_prompt"]
USER_SPEAKER = "User"  # the `## Speaker` of a message the user wrote as themself
EPISODIC_SYSTEM_PROMPT: str = _TEXTS["episodic_system_prompt"]
EPISODIC_USER_PROMPT: str = _TEXTS["episodic_user_prompt"]
PROFILE_UPDATE_SYSTEM_PROMPT: str = _TEXTS["profile_update_system_prompt"]
PROFILE_UPDATE_USER_PROMPT: str = _TEXTS["profile_update_user_prompt"]


def respond_feedback(feedback: str) -> str:
    """Feedback line for a notify email the user chose to respond to (seed 000)."""
    return _TEXTS["respond_feedback"].format(feedback=feedback.strip())


def clarification_feedback(answer: str) -> str:
    """Feedback line for an answer to a clarification / intent_unclear / missing_fields ask."""
    return _TEXTS["clarification_feedback"].format(answer=answer.strip())


def approval_feedback(action: str, feedback: str) -> str:
    """Feedback line for an Agent Inbox `response` on an approval (e.g. on email.send)."""
    return _TEXTS["approval_feedback"].format(action=action, feedback=feedback.strip())


def render_bullets(items: Iterable[str]) -> str:
    """'- item' lines, or (none)."""
    lines = [f"- {one_line(i)}" for i in items if i and i.strip()]
    return "\n".join(lines) if lines else NONE


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


def render_recent_messages(messages: Sequence[RecentMessage], limit: int = 8) -> str:
    """The last `limit` messages, oldest first: '- user: …' / '- assistant: …'."""
    lines = [f"- {m.role}: {one_line(m.content)}" for m in messages[-limit:]]
    return "\n".join(lines) if lines else NONE


def render_email_request(email: EmailMessage) -> str:
    """The `## Request` of a turn that answers an email (seed 000 "Respond to the email")."""
    return f"{EMAIL_REQUEST_PREFIX} (id {email.email_id}):\n\n{email.markdown()}"


def normalize_decision(decision: str) -> str:
    """A decision of `DECISION_MESSAGES` from a capability spelling: "email.send.edit" →
    "email.edit", "calendar.schedule.response" → "calendar.feedback"."""
    name = re.sub(
        r"^(?:(email)\.send|(calendar)\.(?:schedule|update|cancel))\.", r"\1\2.", decision.strip()
    )
    return re.sub(r"(^|\.)response$", r"\1feedback", name)


def render_preferences(response: str, calendar: str) -> str:
    """The `## Preferences` block: the response and calendar preference texts, or (none)."""
    parts = [
        f"{label}:\n{text.strip()}"
        for label, text in (("Response preferences", response), ("Calendar preferences", calendar))
        if text.strip()
    ]
    return "\n\n".join(parts) or NONE

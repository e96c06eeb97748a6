"""Every prompt Memoir sends to a chat model: the texts of `memoir/data/prompts.yaml` (one constant
each), rendered from typed requests by the modules that send them: triage (seed 000's router) by
`memoir.triage`, the preference updater by `memoir.preference_update`, the reply writer (seed 002)
by `memoir.responder`, drafts (seed 004) by `memoir.drafting`, the memory calls (seeds 001, 003) by
`memoir.memory.llm_calls`, the planner's by `memoir.planner`. The helpers below render the blocks
several of them share. The offline provider reads the requests instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memoir.llm.tables import table
from memoir.models import RecentMessage
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
RESPOND_FEEDBACK: str = _TEXTS["respond_feedback"]
CLARIFICATION_FEEDBACK: str = _TEXTS["clarification_feedback"]
APPROVAL_FEEDBACK: str = _TEXTS["approval_feedback"]
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


def render_bullets(items: Iterable[str]) -> str:
    """'- item' lines, or (none)."""
    lines = [f"- {one_line(i)}" for i in items if i and i.strip()]
    return "\n".join(lines) if lines else NONE


def render_recent_messages(messages: Sequence[RecentMessage], limit: int = 8) -> str:
    """The last `limit` messages, oldest first: '- user: …' / '- assistant: …'."""
    lines = [f"- {m.role}: {one_line(m.content)}" for m in messages[-limit:]]
    return "\n".join(lines) if lines else NONE

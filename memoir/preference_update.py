"""Preference memory updates (seed 000 `update_memory`): targeted, never a rewrite."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memoir.llm import structured
from memoir.llm.prompts import (
    DECISION_LINE_RE,
    DECISION_MESSAGES,
    LESSON_MESSAGE,
    MEMORY_UPDATE_INSTRUCTIONS,
    MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT,
    normalize_decision,
    preference_messages,
)
from memoir.llm.triage_lessons import Lesson, add_lesson, has_lesson
from memoir.models import PreferenceNamespace, UserPreferences

__all__ = [
    "NAMESPACE_FOR_DECISION",
    "lesson_message",
    "preference_messages",
    "preference_update_messages",
    "preserves_profile",
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


def preference_update_messages(
    namespace: str, current: str, messages: list[str], decision: str | None = None
) -> list[BaseMessage]:
    """Seed 000's update call: the instructions, the decision messages, the reinforcement.

    `decision` (e.g. `PreferenceUpdate.decision`) is added as a "Decision:" line when the
    messages do not carry one already.
    """
    system = MEMORY_UPDATE_INSTRUCTIONS.format(current_profile=current, namespace=namespace)
    out: list[BaseMessage] = [SystemMessage(content=system)]
    out.extend(HumanMessage(content=m) for m in messages)
    if decision and not any(DECISION_LINE_RE.search(m) for m in messages):
        out.append(HumanMessage(content=f"Decision: {normalize_decision(decision)}"))
    if not any(MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT in m for m in messages):
        out.append(HumanMessage(content=MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT))
    return out


def preserves_profile(current: str, updated: str) -> bool:
    """Whether `updated` keeps the current profile: at most one line in five changed, at least
    one line may always be corrected, and it is never emptied."""
    if current.strip() and not updated.strip():
        return False
    lines = [line.strip() for line in current.splitlines() if line.strip()]
    kept = {line.strip() for line in updated.splitlines()}
    lost = [line for line in lines if line not in kept]
    return len(lost) <= max(1, len(lines) // 5)


def lesson_message(lesson: Lesson) -> str:
    """The message that hands a triage lesson to the updater, with the heading it goes under."""
    return LESSON_MESSAGE.format(heading=lesson.action.value.capitalize(), line=lesson.line)


async def updated_preferences(
    llm: BaseChatModel,
    namespace: str,
    current: str,
    messages: list[str],
    *,
    decision: str | None = None,
    lesson: Lesson | None = None,
) -> UserPreferences:
    """The profile after a targeted update from `messages` (see `preference_messages`).

    Pass `decision` (`PreferenceUpdate.decision`) when the messages were not built with
    `preference_messages`: it makes the decision explicit to the model.

    A result that would rewrite the profile (lose more than a line in five) is refused: the
    current profile comes back unchanged, and `chain_of_thought` says why.

    A triage `lesson` (`memoir.llm.triage_lessons`) is handed to the model word for word; a result
    without it gets it added under its heading, so the lesson is always written as planned.
    """
    if lesson is not None:
        messages = [*messages, lesson_message(lesson)]
    runnable = structured(llm, UserPreferences)
    prompt = preference_update_messages(namespace, current, messages, decision)
    result = await runnable.ainvoke(prompt)
    if not preserves_profile(current, result.user_preferences):
        result = UserPreferences(
            chain_of_thought="Refused the update: it rewrote the profile instead of a targeted "
            f"change. Model said: {result.chain_of_thought}",
            user_preferences=current,
        )
    if lesson is not None and not has_lesson(result.user_preferences, lesson):
        text, what = add_lesson(result.user_preferences, lesson)
        result = UserPreferences(
            chain_of_thought=f"{result.chain_of_thought} The lesson was missing, so: {what}.",
            user_preferences=text,
        )
    return result

"""Offline triage skill: seed 000's router as explainable general rules plus targeted lessons.

Reads the rendered `TRIAGE_SYSTEM_PROMPT` / `TRIAGE_USER_PROMPT`. The general rules
(`memoir.llm.triage_rules`) classify first; then the lessons of the `< Rules >` block (the
user's triage preferences, e.g. `- Ignore: emails from newsletters@shop.example`) are read back
(`memoir.llm.triage_lessons`), and the most specific one whose scope covers the email decides. A
lesson never touches an email outside its scope; the reasoning says which lesson fired.
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

from memoir.llm._text import human_texts, system_text
from memoir.llm.triage_lessons import deciding_lesson, parse_lessons
from memoir.llm.triage_rules import (
    RESPOND_MARKERS,
    TriageEmail,
    classify_by_rules,
    direct_questions,
)
from memoir.models import TriageDecision

__all__ = [
    "RESPOND_MARKERS",
    "TriageEmail",
    "classify_by_rules",
    "direct_questions",
    "parse_triage_prompt",
    "triage_offline",
]


def parse_triage_prompt(messages: list[BaseMessage]) -> tuple[str, TriageEmail]:
    """(the `< Rules >` text, the email) from the rendered triage prompts."""
    system = system_text(messages)
    rules_match = re.search(r"< Rules >\n(.*?)\n</ Rules >", system, re.S)
    rules = rules_match.group(1) if rules_match else ""
    user = "\n\n".join(human_texts(messages))
    start = user.find("Please determine how to handle")
    if start >= 0:
        user = user[start:]

    def field(name: str) -> str:
        m = re.search(rf"^{name}:[ \t]*(.*)$", user, re.M)
        return m.group(1).strip() if m else ""

    subject_line = re.search(r"^Subject:[ \t]*.*$", user, re.M)
    body = user[subject_line.end() :].strip() if subject_line else user
    return rules, TriageEmail(field("From"), field("To"), field("Subject"), body)


def triage_offline(messages: list[BaseMessage]) -> TriageDecision:
    """Classify the email in `messages`, explaining which rule or lesson decided."""
    rules_text, email = parse_triage_prompt(messages)
    classification, reason = classify_by_rules(email)
    steps = [
        f'1. Email from {email.author or "an unknown sender"} about "{email.subject}".',
        f"2. General rules: {classification.value}, because {reason}.",
    ]
    lessons = parse_lessons(rules_text)
    lesson = deciding_lesson(lessons, email)
    if lesson is None:
        steps.append(
            f"3. No learned lesson covers this email ({len(lessons)} checked): the general "
            "rules decide."
        )
    elif lesson.action is classification:
        steps.append(f"3. Lesson `{lesson.line}` covers this email and agrees.")
    else:
        steps.append(
            f"3. Lesson `{lesson.line}` covers this email ({lesson.scope.kind.value} scope) and "
            f"overrides the general rules: {lesson.action.value}."
        )
        classification = lesson.action
    steps.append(f"Classification: {classification.value}.")
    return TriageDecision(reasoning="\n".join(steps), classification=classification)

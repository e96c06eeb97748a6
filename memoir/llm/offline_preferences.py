"""Offline preference updater: seed 000 `update_memory` as one targeted line, never a rewrite.

Reads `MEMORY_UPDATE_INSTRUCTIONS` (the current profile in the last `<memory_profile>` block)
and the human messages built by `prompts.preference_messages` (the email's markdown, then a
decision message ending in `Decision: <decision>`). The profile comes back unchanged except for
one line added, or one learned line corrected in place. A triage decision writes a targeted
lesson (`memoir.llm.triage_lessons`) under the heading of its action: the line handed over in the
"Lesson to record" message, else the lesson planned from the email's sender and subject.
"""

from __future__ import annotations

import ast
import re
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage

from memoir.llm._text import human_texts, loads_object, system_text
from memoir.llm.prompts import (
    DECISION_LINE_RE,
    LESSON_MESSAGE_RE,
    normalize_decision,
    one_line,
)
from memoir.llm.triage_lessons import (
    LESSON_DECISIONS,
    Lesson,
    add_lesson,
    lesson_for_decision,
    parse_lesson,
)
from memoir.llm.triage_rules import TriageEmail
from memoir.models import UserPreferences


def _current_profile(system: str) -> tuple[str, str]:
    """(namespace, current profile) from the rendered instructions."""
    ns = re.search(r"^# Process current profile for (\S+)", system, re.M)
    namespace = ns.group(1) if ns else ""
    tail = system[ns.end() :] if ns else system
    blocks = re.findall(r"<memory_profile>\n?(.*?)\n?</memory_profile>", tail, re.S)
    return namespace, (blocks[-1] if blocks else "")


def _infer_decision(text: str, namespace: str) -> str | None:
    """The decision: its `Decision:` line, else read from the wording (seed 000 and variants)."""
    lines = DECISION_LINE_RE.findall(text)
    if lines:
        return normalize_decision(str(lines[-1]))
    low = text.lower()
    calendar = namespace == "cal_preferences" or (
        namespace != "response_preferences" and "calendar." in low
    )
    kind = "calendar" if calendar else "email"
    if "<edited>" in low or "edited to:" in low or re.search(r"\bedited the\b", low):
        return f"{kind}.edit"
    if re.search(r"\backnowledged\b|\bseen, thanks\b", low):
        return "notify.acknowledge"
    if re.search(r"\b(?:decided|chose|wants?) to (?:respond|reply)\b", low):
        return "notify.respond"
    if re.search(r"\b(?:ignored|decided to ignore|chose to ignore)\b", low):
        if "proposed email" in low or "email draft" in low:
            return "email.ignore"
        if "proposed calendar" in low or "calendar invitation" in low:
            return "calendar.ignore"
        if "question" in low:
            return "question.ignore"
        return "notify.ignore"
    if "<feedback>" in low or "user feedback:" in low or "gave feedback" in low:
        return f"{kind}.feedback"
    return None


def _email_field(text: str, name: str) -> str:
    m = re.search(rf"^\*\*{name}\*\*:[ \t]*(.*)$", text, re.M) or re.search(
        rf"^{name}:[ \t]*(.*)$", text, re.M
    )
    return m.group(1).strip() if m else ""


def _tag(text: str, tag: str) -> str | None:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S)
    return m.group(1).strip() if m else None


def _args(text: str, tag: str, line_prefix: str) -> dict[str, Any]:
    """Args given as `<tag>JSON</tag>`, or as a "Prefix: {python dict}" line."""
    tagged = _tag(text, tag)
    if tagged is not None:
        return _literal(tagged)
    m = re.search(rf"^{line_prefix}[^:\n]*:\s*(\{{.*\}})\s*$", text, re.M)
    return _literal(m.group(1)) if m else {}


def _literal(text: str) -> dict[str, Any]:
    value = loads_object(text)
    if value:
        return value
    try:
        parsed = ast.literal_eval(text)  # a dict written with str(): literals only, no code
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _feedback(text: str) -> str | None:
    tagged = _tag(text, "feedback")
    if tagged:
        return tagged
    m = re.search(r"^User feedback:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else None


def _lines(body: str) -> list[str]:
    return [line.strip() for line in body.splitlines() if line.strip()]


def _signoff(body: str) -> str:
    lines = _lines(body)
    if not lines:
        return ""
    if len(lines) >= 2 and lines[-2].endswith(",") and len(lines[-1].split()) <= 3:
        return f"{lines[-2]} {lines[-1]}"
    return lines[-1] if len(lines[-1].split()) <= 6 else ""


def _greeting(body: str) -> str:
    lines = _lines(body)
    if not lines:
        return ""
    first = lines[0]
    is_greeting = first.endswith(",") or re.match(r"^(hi|hello|hey|dear|good)\b", first, re.I)
    return first if is_greeting and len(first.split()) <= 6 else ""


def _greeting_template(body: str) -> str:
    """The greeting with the recipient's name as <name>: "Hey Dan," → "Hey <name>,"."""
    return re.sub(
        r"^(hi|hello|hey|dear|good morning|good afternoon)\s+[\w.'-]+",
        r"\1 <name>",
        _greeting(body),
        flags=re.I,
    )


def describe_email_edit(original: dict[str, Any], edited: dict[str, Any]) -> list[str]:
    """What an edit of an email draft changed, as preference phrases."""
    parts: list[str] = []
    o_subject, e_subject = str(original.get("subject", "")), str(edited.get("subject", ""))
    if e_subject and e_subject != o_subject:
        parts.append(f'subjects like "{one_line(e_subject, 80)}"')
    o_body, e_body = str(original.get("body", "")), str(edited.get("body", ""))
    if e_body and e_body.strip() != o_body.strip():
        before = len(parts)
        greeting = _greeting_template(e_body)
        if greeting and greeting != _greeting_template(o_body):
            parts.append(f'opening with "{greeting}"')
        signoff = _signoff(e_body)
        if signoff and signoff != _signoff(o_body):
            parts.append(f'signing off with "{signoff}"')
        o_words, e_words = len(o_body.split()), len(e_body.split())
        if o_words and e_words <= 0.7 * o_words:
            parts.append(f"shorter emails (about {e_words} words)")
        elif o_words and e_words >= 1.5 * o_words:
            parts.append("more detailed emails")
        if len(parts) == before:
            parts.append(f'wording like "{one_line(e_body, 120)}"')
    return parts


def _time_of_day(value: Any) -> str | None:
    try:
        return datetime.fromisoformat(str(value)).strftime("%H:%M")
    except ValueError:
        return None


def describe_calendar_edit(original: dict[str, Any], edited: dict[str, Any]) -> list[str]:
    """What an edit of a calendar invitation changed, as preference phrases."""
    parts: list[str] = []
    for key in sorted(set(original) | set(edited)):
        before, after = original.get(key), edited.get(key)
        if after is None or after == before:
            continue
        if key in ("duration_minutes", "duration"):
            parts.append(f"{after}-minute meetings")
        elif key in ("start", "start_time"):
            o_time, e_time = _time_of_day(before), _time_of_day(after)
            if e_time and e_time != o_time:
                parts.append(f"meetings around {e_time}")
            elif e_time is None:
                parts.append(f"start {after}")
        elif key in ("title", "subject"):
            parts.append(f'titles like "{one_line(str(after), 80)}"')
        elif key == "attendees" and isinstance(after, list):
            added = [str(a) for a in after if not isinstance(before, list) or a not in before]
            if added:
                parts.append(f"inviting {', '.join(added)}")
        elif key not in ("end", "end_time", "event_id", "id"):
            parts.append(f"{key.replace('_', ' ')} {one_line(str(after), 80)}")
    return parts


def _email_in(text: str) -> TriageEmail | None:
    """The email of the decision messages (its Agent Inbox markdown), or None."""
    subject, author = _email_field(text, "Subject"), _email_field(text, "From")
    if not (subject or author):
        return None
    to_line = re.search(r"^(?:\*\*To\*\*|To):.*$", text, re.M)
    body = text[to_line.end() :] if to_line else ""
    body = body.split("\n---", 1)[0].strip()
    return TriageEmail(author or "anyone", _email_field(text, "To"), subject, body)


def _triage_lesson(text: str, decision: str, profile: str) -> tuple[Lesson | None, str]:
    """The lesson to write and where it came from; (None, why) when there is none."""
    handed = LESSON_MESSAGE_RE.search(text)
    lesson = parse_lesson(handed.group("line")) if handed else None
    if lesson is not None:
        return lesson, "the lesson handed over"
    email = _email_in(text)
    if email is None:
        return None, "the email (subject and sender) is missing, so there is nothing to learn"
    lesson = lesson_for_decision(decision, email, profile)
    if lesson is None:
        return None, "a lesson already decides this email that way: no change"
    return lesson, f"a lesson scoped to the email ({lesson.scope.kind.value})"


def _append(profile: str, line: str) -> str:
    body = profile.rstrip("\n")
    return f"{body}\n{line}" if body else line


def _apply_line(profile: str, line: str) -> tuple[str, str]:
    if any(existing.strip() == line for existing in profile.splitlines()):
        return profile, f"`{line}` is already in the profile: no change"
    return _append(profile, line), f"added `{line}`"


def update_preferences_offline(messages: list[BaseMessage]) -> UserPreferences:
    """One targeted change to the profile, explained in `chain_of_thought`."""
    namespace, profile = _current_profile(system_text(messages))
    text = "\n\n".join(human_texts(messages))
    decision = _infer_decision(text, namespace)
    steps = [f"Namespace {namespace or '(unknown)'}; decision {decision or '(none found)'}."]
    changed = profile
    if decision is not None and decision in LESSON_DECISIONS:
        lesson, source = _triage_lesson(text, decision, profile)
        if lesson is None:
            steps.append(f"{source[0].upper()}{source[1:]}.")
        else:
            changed, what = add_lesson(profile, lesson)
            steps.append(
                f"The user's decision teaches {lesson.action.value} for "
                f"{lesson.scope.phrase()}, from {source}: {what}."
            )
    elif decision in ("email.edit", "calendar.edit"):
        original = _args(text, "original", "Proposed")
        edited = _args(text, "edited", "Edited to")
        if decision == "email.edit":
            parts, prefix = describe_email_edit(original, edited), "- When replying, prefer: "
        else:
            parts, prefix = describe_calendar_edit(original, edited), "- When scheduling, prefer: "
        if parts:
            changed, what = _apply_line(profile, prefix + "; ".join(parts))
            steps.append(f"The edit changed {', '.join(parts)}: {what}.")
        else:
            steps.append("The edited version equals the original: nothing to learn.")
    elif decision in ("email.feedback", "calendar.feedback"):
        feedback = _feedback(text)
        if feedback:
            prefix = "- When replying, remember: "
            if decision == "calendar.feedback":
                prefix = "- When scheduling, remember: "
            changed, what = _apply_line(profile, prefix + one_line(feedback, 200))
            steps.append(f"The user's feedback is a preference: {what}.")
        else:
            steps.append("No feedback text was given: nothing to learn.")
    else:
        steps.append("No decision this updater knows: the profile is kept as it is.")
    steps.append("Everything else in the profile is preserved word for word.")
    return UserPreferences(chain_of_thought=" ".join(steps), user_preferences=changed)

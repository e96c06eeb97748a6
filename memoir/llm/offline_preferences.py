"""Offline preference learner: seed 000 `update_memory` as targeted lines, never a rewrite.

A triage decision writes its scoped lesson (`triage_lessons.add_lesson`). Feedback on a draft
is cut into clauses and only the GENERAL ones are kept, judged by the rules and the nearest
example of `memoir/data/preference_examples.yaml`; an edit teaches what changed in general form.
Lines take the canonical forms `memoir.llm.preference_kinds` reads back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time
from functools import cache
from typing import TYPE_CHECKING, Any

from memoir.embeddings import Embedder
from memoir.llm.preference_kinds import read_calendar_rules, read_response_style
from memoir.llm.tables import Examples, table
from memoir.llm.triage_lessons import LESSON_DECISIONS, add_lesson
from memoir.models import UserPreferences

if TYPE_CHECKING:
    from memoir.preference_update import PreferenceRequest

__all__ = ["Learned", "clauses", "learn_from_edit", "learn_from_feedback"]


def _table() -> dict[str, Any]:
    return table("preference_examples")


@cache
def _examples() -> Examples:
    return Examples(e["text"] for e in _table()["examples"])


@dataclass(frozen=True)
class Learned:
    """One general preference: its kind, its value (None for a fixed line), and why."""

    kind: str
    value: Any
    why: str


def clauses(text: str) -> list[str]:
    """The clauses of feedback: cut where the table's `clauses` pattern matches (sentence ends,
    ";", "and/but/also …" before a clause, commas before a lower-case word), never in quotes."""
    parts, start = [], 0
    for m in re.finditer(_table()["clauses"], text):
        if m.group("quoted") is None:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip(" ,.;!?") for p in parts if p.strip(" ,.;!?")]


def _nearest(clause: str, kinds: set[str], embedder: Embedder) -> tuple[dict[str, Any], float]:
    """The example of one of `kinds` closest to `clause` (cosine of normalised MiniLM vectors)."""
    examples: list[dict[str, Any]] = _table()["examples"]
    among = (i for i, example in enumerate(examples) if example["kind"] in kinds)
    best, score = _examples().nearest(clause, embedder, among)
    return examples[best], score


def _judge(clause: str, namespace: str, embedder: Embedder) -> tuple[str, Any, str]:
    """(kind, example value, why) of one clause; kind "draft" when it is about this draft only."""
    table = _table()
    general = {k for k, spec in table["kinds"].items() if spec.get("namespace") == namespace}
    general.add("other")
    if re.search(table["general"], clause, re.I):
        example, score = _nearest(clause, general, embedder)
        why = f'general by its wording, of the kind of "{example["text"]}" ({score:.2f})'
        return example["kind"], example.get("value"), why
    if re.search(table["draft"], clause, re.I):
        return "draft", None, "about this draft only (it names this draft, a day or a change)"
    example, score = _nearest(clause, general | {"draft"}, embedder)
    if score < table["min_similarity"]:
        return "draft", None, f"near no example (best {score:.2f}), so about this draft only"
    why = f'nearest example "{example["text"]}" ({score:.2f})'
    return example["kind"], example.get("value"), why


def _values(clause: str, kind: str, value: Any, namespace: str) -> dict[str, Any]:
    """Kind → value of a general clause: the example's own value, else what the namespace's
    reader finds in it, else its kind's fixed line (brief), else the clause in its own words."""
    if value is not None:
        return {kind: value}
    reader = read_response_style if namespace == "response_preferences" else read_calendar_rules
    read = reader(clause).model_dump(exclude={"other"})
    found = {k: v for k, v in read.items() if v}
    if found.get("tone") == "brief":  # "keep it short" is said by its own line
        del found["tone"]
        found["brief"] = None
    if found:
        return found
    if kind == "brief":
        return {kind: None}
    return {"other": clause[0].upper() + clause[1:] + "."}


def learn_from_feedback(feedback: str, namespace: str, embedder: Embedder) -> list[Learned]:
    """The general preferences in feedback on a draft, with why each clause was kept or not."""
    learned: list[Learned] = []
    for clause in clauses(feedback):
        kind, value, why = _judge(clause, namespace, embedder)
        why = f'"{clause}": {why}'
        if kind == "draft":
            learned.append(Learned(kind, None, why))
            continue
        for found, found_value in _values(clause, kind, value, namespace).items():
            learned.append(Learned(found, found_value, why))
    return learned


def _lines(body: str) -> list[str]:
    return [line.strip() for line in body.splitlines() if line.strip()]


def _signoff(body: str) -> str:
    """The closing of a body: "Best,\nAna" → "Best, Ana"; a short last line that is no
    sentence ("Cheers, Ana"); else none."""
    lines = _lines(body)
    if len(lines) >= 3 and lines[-2].endswith(",") and len(lines[-1].split()) <= 3:
        return f"{lines[-2]} {lines[-1]}"
    short = len(lines) >= 2 and len(lines[-1].split()) <= 4
    return lines[-1] if short and re.match(r"[A-Z][^.!?:]*$", lines[-1]) else ""


def _greeting(body: str) -> str:
    """The opening line with the recipient's name as <name>: "Hey Dan," → "Hey <name>,"."""
    first = (_lines(body) or [""])[0]
    if len(first.split()) > 4 or not re.match(r"(?:hi|hello|hey|dear|good \w+)\b.*,$", first, re.I):
        return ""
    return re.sub(r"^(hi|hello|hey|dear|good \w+)\s+[\w.'-]+", r"\1 <name>", first, flags=re.I)


def learn_from_edit(original: dict[str, Any], edited: dict[str, Any]) -> list[Learned]:
    """What an edit changed that holds for every draft: the sign-off, the greeting, a much
    shorter email, the meeting length; new wording, subjects and times are this draft's own."""
    learned: list[Learned] = []
    before, after = str(original.get("body", "")), str(edited.get("body", ""))
    if after.strip() and after.strip() != before.strip():
        if _signoff(after) and _signoff(after) != _signoff(before):
            learned.append(Learned("sign_off", _signoff(after), "the edit changed the sign-off"))
        if _greeting(after) and _greeting(after) != _greeting(before):
            learned.append(Learned("greeting", _greeting(after), "the edit changed the greeting"))
        if len(after.split()) <= 0.7 * len(before.split()):
            learned.append(Learned("brief", None, "the edit cut the email by a third or more"))
    minutes = edited.get("duration_minutes")
    if minutes and minutes != original.get("duration_minutes"):
        learned.append(Learned("meeting_minutes", minutes, "the edit changed the meeting length"))
    return learned


def _spoken(value: Any) -> str:
    """A value as the canonical line says it: 10:00, Mondays and Fridays, a and b."""
    if isinstance(value, time):
        return f"{value:%H:%M}"
    if isinstance(value, list):
        return " and ".join(f"{v}s" if v.endswith("day") else str(v) for v in value)
    return str(value)


def _write(profile: str, learned: Learned) -> tuple[str, str]:
    """The profile with the learned line: replacing a line of the same kind, else appended;
    days to avoid and attendees are joined with what the profile already says."""
    spec = _table()["kinds"][learned.kind]
    value = learned.value
    if spec.get("merge"):
        value = list(dict.fromkeys([*getattr(read_calendar_rules(profile), learned.kind), *value]))
    line = "- " + spec["line"].format(value=_spoken(value))
    head = spec["line"].split("{value}")[0]
    lines = profile.rstrip("\n").splitlines()
    if line in (existing.strip() for existing in lines):
        return profile, f"`{line}` is already in the profile: no change"
    for i, existing in enumerate(lines):
        if head and existing.strip().removeprefix("- ").startswith(head):
            lines[i] = line
            return "\n".join(lines), f"`{existing.strip()}` corrected to `{line}`"
    return "\n".join([*lines, line]) if profile.strip() else line, f"added `{line}`"


def update_preferences_offline(request: PreferenceRequest, embedder: Embedder) -> UserPreferences:
    """Targeted changes to the profile, each explained in `chain_of_thought`."""
    steps = [f"Namespace {request.namespace}; decision {request.decision}."]
    changed, learned = request.profile, []
    if request.decision in LESSON_DECISIONS:
        if request.lesson is None:
            steps.append("No lesson: the email is missing, or a lesson already decides it.")
        else:
            changed, what = add_lesson(changed, request.lesson)
            steps.append(f"The decision teaches {request.lesson.action.value}: {what}.")
    elif request.decision.endswith(".edit"):
        learned = learn_from_edit(request.original, request.edited)
        steps.append("The edit changed nothing general." if not learned else "")
    elif request.decision.endswith(".feedback"):
        learned = learn_from_feedback(request.feedback, request.namespace, embedder)
        steps.append("No feedback text: nothing to learn." if not learned else "")
    for item in learned:
        if item.kind == "draft":
            steps.append(f"{item.why}: it revises this draft only, nothing is learned.")
            continue
        changed, what = _write(changed, item)
        steps.append(f"{item.why}: {what}.")
    steps.append("Everything else in the profile is kept word for word.")
    text = " ".join(s for s in steps if s)
    return UserPreferences(chain_of_thought=text, user_preferences=changed)

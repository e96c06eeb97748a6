"""Offline preferences: typed readers of the preference texts, and the learner that writes them.

The texts stay free prose a person can edit, read by the rules of planner_preferences.yaml. The
learner is seed 000 `update_memory` as targeted lines, never a rewrite: a triage decision writes
its scoped lesson (`memoir.lessons`); of feedback on a draft only the GENERAL clauses are kept,
judged by the rules and nearest example of preference_examples.yaml; an edit teaches what changed
in general form. Lines take that table's canonical forms, which the readers read back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from memoir import lessons  # a module: memoir.lessons imports memoir.llm in turn
from memoir.embeddings import Embedder
from memoir.llm.tables import Examples, lines, table
from memoir.models import UserPreferences
from memoir.timeparse import clock_time, duration_minutes

if TYPE_CHECKING:
    from memoir.preference_update import PreferenceRequest

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ResponseStyle(BaseModel):
    """What the response preferences say about writing emails."""

    sign_off: str | None = None
    greeting: str | None = Field(default=None, description='"Hey <name>,": <name> is replaced.')
    tone: str | None = Field(default=None, description='e.g. "warm", "formal", "brief and warm".')
    other: list[str] = Field(default_factory=list)


class CalendarRules(BaseModel):
    """What the calendar preferences say about scheduling meetings."""

    meeting_minutes: int | None = None
    avoid_before: time | None = None
    avoid_after: time | None = None
    avoid_days: list[str] = Field(default_factory=list, description="Weekday names, e.g. Friday.")
    default_attendees: list[str] = Field(default_factory=list, description="Email addresses.")
    other: list[str] = Field(default_factory=list)


def _quoted(text: str) -> str | None:
    m = re.search(r"[\"“]([^\"”]+)[\"”]|(?<!\w)'([^']+)'(?!\w)", text)
    if m:
        return (m.group(1) or m.group(2)).strip()
    m = re.search(r"\b(?:with|as)\s+([A-Z][^.;:!?]*(?:,\s*[A-Z][\w'-]*)?)", text)
    return m.group(1).strip() if m else None


def _tone(text: str) -> str | None:
    found: list[tuple[int, str]] = []
    for tone, words in table("planner_preferences")["tones"].items():
        spots = [m.start() for w in words for m in re.finditer(rf"\b{re.escape(w)}\b", text, re.I)]
        if spots:
            found.append((min(spots), tone))
    return " and ".join(tone for _, tone in sorted(found)) or None


def _weekdays(text: str) -> list[str] | None:
    days = [d for d in WEEKDAYS if re.search(rf"\b{d[:3]}(?:{d[3:-3]}day)?s?\b", text, re.I)]
    if re.search(r"\bweekends?\b", text, re.I):
        days += ["Saturday", "Sunday"]
    return list(dict.fromkeys(days)) or None


READERS: dict[str, Callable[[str], Any]] = {
    "quoted": _quoted,
    "tone": _tone,
    "minutes": duration_minutes,
    "time": clock_time,
    "weekdays": _weekdays,
    "emails": lambda text: re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text) or None,
}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“'])")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def _sentences(text: str) -> list[str]:
    """Lines, cut at sentence ends; list markers and "When replying, prefer:" heads dropped."""
    parts = (p for line in text.splitlines() for p in _SENTENCE_END.split(line.strip()))
    return [p for p in (_LIST_MARK.sub("", p).strip() for p in parts) if p]


def _read(text: str, rules: list[dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    """Field values from the sentences of `text` (later ones win), and the unread sentences."""
    values: dict[str, Any] = {}
    other: list[str] = []
    for sentence in _sentences(text):
        read_any = False
        for rule in rules:
            cued = re.search(rule["cue"], sentence, re.I)
            at = re.search(rule.get("at", ""), sentence, re.I)  # no `at`: the whole sentence
            if not cued or not at or re.search(rule.get("unless", "(?!)"), sentence, re.I):
                continue
            if (value := READERS[rule["read"]](sentence[at.end() :])) is not None:
                values[rule["field"]] = value
                read_any = True
        if not read_any:
            other.append(sentence)
    return values, other


def read_response_style(text: str) -> ResponseStyle:
    """The sign-off, greeting and tone that the response preferences ask for."""
    values, other = _read(text, table("planner_preferences")["response_style"])
    return ResponseStyle(**values, other=other)


def read_calendar_rules(text: str) -> CalendarRules:
    """Meeting length, hours and days to avoid, and default attendees of the cal preferences."""
    values, other = _read(text, table("planner_preferences")["calendar_rules"])
    return CalendarRules(**values, other=other)


_TABLE: dict[str, Any] = table("preference_examples")
_EXAMPLES = Examples(e["text"] for e in _TABLE["examples"])  # embedded on first use


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
    for m in re.finditer(_TABLE["clauses"], text):
        if m.group("quoted") is None:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip(" ,.;!?") for p in parts if p.strip(" ,.;!?")]


def _nearest(clause: str, kinds: set[str], embedder: Embedder) -> tuple[dict[str, Any], float]:
    """The example of one of `kinds` closest to `clause` (cosine of normalised MiniLM vectors)."""
    examples: list[dict[str, Any]] = _TABLE["examples"]
    among = (i for i, example in enumerate(examples) if example["kind"] in kinds)
    best, score = _EXAMPLES.nearest(clause, embedder, among)
    return examples[best], score


def _judge(clause: str, namespace: str, embedder: Embedder) -> tuple[str, Any, str]:
    """(kind, example value, why) of one clause; kind "draft" when it is about this draft only."""
    general = {k for k, spec in _TABLE["kinds"].items() if spec.get("namespace") == namespace}
    general.add("other")
    if re.search(_TABLE["general"], clause, re.I):
        example, score = _nearest(clause, general, embedder)
        why = f'general by its wording, of the kind of "{example["text"]}" ({score:.2f})'
        return example["kind"], example.get("value"), why
    if re.search(_TABLE["draft"], clause, re.I):
        return "draft", None, "about this draft only (it names this draft, a day or a change)"
    example, score = _nearest(clause, general | {"draft"}, embedder)
    if score < _TABLE["min_similarity"]:
        return "draft", None, f"near no example (best {score:.2f}), so about this draft only"
    why = f'nearest example "{example["text"]}" ({score:.2f})'
    return example["kind"], example.get("value"), why


def _values(clause: str, kind: str, value: Any, namespace: str) -> dict[str, Any]:
    """Kind → value of a clause: none for a draft's own, the example's value, else what the
    namespace's reader finds, else its kind's fixed line (brief), else the clause itself."""
    if value is not None or kind == "draft":
        return {kind: value}
    reader = read_response_style if namespace == "response_preferences" else read_calendar_rules
    read = reader(clause).model_dump(exclude={"other"})
    found = {k: v for k, v in read.items() if v}
    if found.get("tone") == "brief":  # "keep it short" is said by its own line
        del found["tone"]
        found["brief"] = None
    fixed = "{value}" not in _TABLE["kinds"][kind]["line"]
    return found or ({kind: None} if fixed else {"other": clause[0].upper() + clause[1:] + "."})


def learn_from_feedback(feedback: str, namespace: str, embedder: Embedder) -> list[Learned]:
    """The general preferences in feedback on a draft, with why each clause was kept or not."""
    learned: list[Learned] = []
    for clause in clauses(feedback):
        kind, value, why = _judge(clause, namespace, embedder)
        for found, found_value in _values(clause, kind, value, namespace).items():
            learned.append(Learned(found, found_value, f'"{clause}": {why}'))
    return learned


def _signoff(body: str) -> str:
    """The closing of a body: "Best,\nAna" → "Best, Ana"; a short last line that is no
    sentence ("Cheers, Ana"); else none."""
    said = lines(body)
    if len(said) >= 3 and said[-2].endswith(",") and len(said[-1].split()) <= 3:
        return f"{said[-2]} {said[-1]}"
    short = len(said) >= 2 and len(said[-1].split()) <= 4
    return said[-1] if short and re.match(r"[A-Z][^.!?:]*$", said[-1]) else ""


def _greeting(body: str) -> str:
    """The opening line with the recipient's name as <name>: "Hey Dan," → "Hey <name>,"."""
    first = (lines(body) or [""])[0]
    if len(first.split()) > 4 or not re.match(r"(?:hi|hello|hey|dear|good \w+)\b.*,$", first, re.I):
        return ""
    return re.sub(r"^(hi|hello|hey|dear|good \w+)\s+[\w.'-]+", r"\1 <name>", first, flags=re.I)


def learn_from_edit(original: dict[str, Any], edited: dict[str, Any]) -> list[Learned]:
    """What an edit changed that holds for every draft: the sign-off, the greeting, a much
    shorter email, the meeting length; new wording, subjects and times are this draft's own."""
    learned: list[Learned] = []
    before, after = str(original.get("body", "")), str(edited.get("body", ""))
    if after.strip() and after.strip() != before.strip():
        for kind, read in (("sign_off", _signoff), ("greeting", _greeting)):
            if read(after) and read(after) != read(before):
                why = f"the edit changed the {kind.replace('_', '-')}"
                learned.append(Learned(kind, read(after), why))
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
    spec = _TABLE["kinds"][learned.kind]
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
    if request.decision in lessons.LESSON_DECISIONS:
        if request.lesson is None:
            steps.append("No lesson: the email is missing, or a lesson already decides it.")
        else:
            changed, what = lessons.add_lesson(changed, request.lesson)
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

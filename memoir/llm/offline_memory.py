"""Offline memory skills (seeds 001, 003): explainable rules for the memory engine's questions.

Reads the prompts of the long-term memory section of `memoir.llm.prompts`:

- `HotpathDecision`: the gate. The latest user message is split into sentences; questions
  (meta / capability), one-off requests ("remind me …") and time-bound events are not
  memories; a sentence that states a stable fact (the rules in `memoir.llm.offline_facts`) is.
- `MemoryCandidate`: the most important fact of the latest message, with its category,
  third-person summary, importance and deterministic key.
- `SameFact`: equal keys, or the same entity and attribute read back from both summaries, or
  the same words.
- `ComposedSummary`: the newer fact wins on conflict; details of the older one it does not
  contradict are kept ("User's dog Luna is 3 years old." + "User's pet Luna is 4 years old."
  → "User's dog Luna is 4 years old.").
- `EpisodicSummary`: topic from the request, approach from the actions (or the reply), notable
  only with an outcome (an action's result, or a recap the user asked for).
- `ProfileUpdate`: city, name, tone, language, timezone, goals, interests from one memory.
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

from memoir.llm._text import human_texts, second_person, system_text
from memoir.llm.offline_facts import (
    LANGUAGE_CODES,
    Fact,
    content_words,
    gate_sentences,
    read_summary,
    render_fact,
)
from memoir.llm.prompts import (
    COMPOSE_SECTIONS,
    EPISODIC_SECTIONS,
    MEMORY_TURNS_SECTIONS,
    PROFILE_UPDATE_SECTIONS,
    SAME_FACT_SECTIONS,
    one_line,
    parse_memory_fields,
    parse_profile_fields,
    split_sections,
)
from memoir.memory.schemas import (
    ComposedSummary,
    EpisodicSummary,
    HotpathDecision,
    MemoryCandidate,
    ProfileUpdate,
    SameFact,
)
from memoir.memory.timephrases import has_recall_intent
from memoir.timeparse import strip_when

__all__ = [
    "candidate_offline",
    "compose_offline",
    "episodic_offline",
    "gate_offline",
    "profile_update_offline",
    "same_fact_offline",
]


def _text(messages: list[BaseMessage]) -> str:
    return system_text(messages) + "\n\n" + "\n\n".join(human_texts(messages))


def _turns(messages: list[BaseMessage]) -> tuple[list[str], str]:
    """(earlier user turns, latest user message) from the gate / candidate prompt."""
    sec = split_sections(_text(messages), MEMORY_TURNS_SECTIONS)
    earlier = [
        line[2:].strip()
        for line in sec.get("Earlier User Turns", "").splitlines()
        if line.startswith("- ")
    ]
    latest = sec.get("Latest User Message")
    if latest is None:
        humans = human_texts(messages)
        latest = humans[-1] if humans else ""
    return earlier, latest.strip()


def _facts(messages: list[BaseMessage]) -> tuple[list[Fact], list[str]]:
    earlier, latest = _turns(messages)
    return gate_sentences(latest, earlier)


# ----- hot path ------------------------------------------------------------------------------


def gate_offline(messages: list[BaseMessage]) -> HotpathDecision:
    """Create only when a sentence of the latest message states a stable fact."""
    facts, notes = _facts(messages)
    steps = list(notes)
    if facts:
        best = facts[0]
        steps.append(
            f"It states a stable fact ({best.rule}: “{best.source}”), so it is worth a semantic "
            "memory: create."
        )
        return HotpathDecision(reasoning=" ".join(steps), should_create=True)
    if not steps:
        steps.append("The message states no stable fact, preference, goal or relationship.")
    steps.append("Do not create.")
    return HotpathDecision(reasoning=" ".join(steps), should_create=False)


def candidate_offline(messages: list[BaseMessage]) -> MemoryCandidate:
    """The most important fact of the latest message as a candidate memory."""
    facts, _notes = _facts(messages)
    if not facts:
        _earlier, latest = _turns(messages)
        return MemoryCandidate(
            category="other", summary=f"User said: {one_line(latest, 200)}", importance=0.2
        )
    best = facts[0]
    return MemoryCandidate(
        category=best.category, summary=best.summary, importance=best.importance, key=best.key
    )


def same_fact_offline(messages: list[BaseMessage]) -> SameFact:
    """Same key, or same entity and attribute, or the same words: the same fact."""
    sec = split_sections(_text(messages), SAME_FACT_SECTIONS)
    old_key, _old_cat, old_summary = parse_memory_fields(sec.get("Existing Memory", ""))
    new_key, _new_cat, new_summary = parse_memory_fields(sec.get("Candidate", ""))
    if old_key and new_key:
        if old_key == new_key:
            return SameFact(reasoning=f"Both have the key {new_key}.", same_fact=True)
        return SameFact(
            reasoning=f"Different keys ({old_key} vs {new_key}): different facts.",
            same_fact=False,
        )
    old_fact, new_fact = read_summary(old_summary, old_key), read_summary(new_summary, new_key)
    if old_fact and new_fact:
        same = old_fact.slot == new_fact.slot
        verdict = "the same" if same else "different"
        return SameFact(
            reasoning=f"Existing is about {old_fact.describe()}, candidate about "
            f"{new_fact.describe()}: {verdict} entity and attribute.",
            same_fact=same,
        )
    old_words, new_words = content_words(old_summary), content_words(new_summary)
    if old_words and new_words and (old_words <= new_words or new_words <= old_words):
        return SameFact(reasoning="One summary says everything the other says.", same_fact=True)
    return SameFact(
        reasoning="They name no common entity and attribute, and say different things.",
        same_fact=False,
    )


def compose_offline(messages: list[BaseMessage]) -> ComposedSummary:
    """The newer fact wins; the older one's details it does not contradict are kept."""
    sec = split_sections(_text(messages), COMPOSE_SECTIONS)
    old_key, _c, old_summary = parse_memory_fields(sec.get("Existing Memory (older)", ""))
    new_key, _c2, new_summary = parse_memory_fields(sec.get("New Memory (newer)", ""))
    old_fact, new_fact = read_summary(old_summary, old_key), read_summary(new_summary, new_key)
    if old_fact and new_fact and old_fact.slot == new_fact.slot:
        merged = {**old_fact.attrs}
        kept = []
        for name, value in new_fact.attrs.items():
            if value and not (name == "kind" and value == "pet" and merged.get("kind")):
                merged[name] = value
            elif merged.get(name):
                kept.append(f"{name} {merged[name]}")
        summary = render_fact(new_fact.rule, merged) or new_summary
        why = f"Same {new_fact.describe()}: the newer memory wins"
        why += f", keeping the older {', '.join(kept)}." if kept else "."
        return ComposedSummary(reasoning=why, summary=summary)
    old_words, new_words = content_words(old_summary), content_words(new_summary)
    if old_words and old_words > new_words:
        return ComposedSummary(
            reasoning="The older memory already says all of the newer one, with more detail.",
            summary=old_summary,
        )
    return ComposedSummary(
        reasoning="The newer memory replaces the older one (newer wins on conflict).",
        summary=new_summary or old_summary,
    )


# ----- episodic ------------------------------------------------------------------------------

_ACTION_RE = re.compile(r"^- (?P<ok>ok|failed) \| (?P<cap>[^|]+?) \| (?P<text>.*)$")
_POLITE = re.compile(
    r"^(?:(?:hi|hey|hello|ok|okay|so|please|pls|kindly|can you|could you|would you|will you|"
    r"i need you to|i want you to|i'd like you to)[,!]?\s+)+",
    re.I,
)


def _topic(request: str, recall: bool) -> str:
    """A short noun phrase for what the request was about, addressed to the user."""
    text = one_line(request.strip(), 400)
    email = re.match(r"^Email from (?P<who>.+?): [“\"](?P<subject>.*)[”\"]", text)
    if email:
        return f"the email “{email.group('subject')}” from {email.group('who')}"
    if recall:
        return "what we talked about before"
    text = _POLITE.sub("", text).rstrip(" ?.!")
    remind = re.match(r"^remind me (?:to|about|that)\s+(?P<what>.+)$", text, re.I)
    if remind:
        return f"a reminder to {second_person(strip_when(remind.group('what')))}"
    mail = re.match(r"^(?:send\s+)?(?:an?\s+)?e-?mail\s+(?:to\s+)?(?P<who>[\w.@-]+)", text, re.I)
    if mail:
        return f"an email to {mail.group('who')}"
    words = second_person(text).split()
    phrase = " ".join(words[:14]) + (" …" if len(words) > 14 else "")
    return f"“{phrase}”" if phrase else "a short exchange"


def episodic_offline(messages: list[BaseMessage]) -> EpisodicSummary:
    """Topic from the request, approach from the actions or the reply; notable with an outcome."""
    sec = split_sections(_text(messages), EPISODIC_SECTIONS)
    request = sec.get("Request", "")
    reply = one_line(sec.get("Reply", ""), 200)
    status = sec.get("Status", "").strip()
    actions = [m for line in sec.get("Actions", "").splitlines() if (m := _ACTION_RE.match(line))]
    recall = has_recall_intent(request)
    topic = _topic(request, recall)
    steps = [f"The request is about {topic}."]
    if actions:
        parts = []
        for m in actions:
            text = m.group("text").strip().rstrip(".")
            parts.append(text if m.group("ok") == "ok" else f"tried but failed: {text}")
        approach = "; ".join(parts)
        steps.append(f"{len(actions)} action(s) ran: an outcome, so it is notable.")
        return EpisodicSummary(
            reasoning=" ".join(steps), topic=topic, approach=approach, notable=True
        )
    if recall:
        approach = f"I recapped our earlier conversations ({reply})" if reply else "I recapped"
        steps.append("The user asked to recall earlier conversations: a recap is notable.")
        return EpisodicSummary(
            reasoning=" ".join(steps), topic=topic, approach=approach, notable=True
        )
    approach = f"I replied: {reply}" if reply else "I replied"
    steps.append(f"No action ran (status {status or 'unknown'}): a routine turn, not notable.")
    return EpisodicSummary(reasoning=" ".join(steps), topic=topic, approach=approach, notable=False)


# ----- profile -------------------------------------------------------------------------------

_TONE_OF_LENGTH = {"short": "concise", "detailed": "detailed"}


def profile_update_offline(messages: list[BaseMessage]) -> ProfileUpdate:
    """Profile fields one memory implies, only where they differ from the current profile."""
    sec = split_sections(_text(messages), PROFILE_UPDATE_SECTIONS)
    current = parse_profile_fields(sec.get("Current Profile", ""))
    key, category, summary = parse_memory_fields(sec.get("Memory", ""))
    fact = read_summary(summary, key)
    proposed: dict[str, str | list[str]] = {}
    why = "The memory implies no profile field."
    if fact is not None:
        attrs, slot_key = fact.attrs, fact.key or key or ""
        if slot_key == "profile:name" and attrs.get("name"):
            proposed["name"], why = attrs["name"], "The memory states the user's name."
        elif slot_key == "profile:city" and attrs.get("city"):
            proposed["city"], why = attrs["city"], "The memory states where the user lives."
        elif slot_key == "profile:timezone" and attrs.get("timezone"):
            proposed["timezone"], why = attrs["timezone"], "The user stated their timezone."
        elif slot_key == "preference:reply_length" and attrs.get("length"):
            proposed["tone"] = _TONE_OF_LENGTH.get(attrs["length"], attrs["length"])
            why = "The user prefers a reply length, which sets the tone."
        elif slot_key == "preference:tone" and attrs.get("tone"):
            proposed["tone"], why = attrs["tone"], "The user prefers a tone."
        elif slot_key in ("preference:language", "profile:language") and attrs.get("language"):
            code = LANGUAGE_CODES.get(attrs["language"].lower(), attrs["language"])
            proposed["language"], why = code, "The user prefers a language."
        elif (category or fact.category) in ("goal", "interest") and attrs.get("what"):
            field = "goals" if (category or fact.category) == "goal" else "interests"
            items = list(current.get(field) or [])
            if all(i.lower() != attrs["what"].lower() for i in items):
                proposed[field] = [*items, attrs["what"]]
            why = f"The memory is a {field[:-1]}: add it to {field}."
    changes = {}
    for name, value in proposed.items():
        now = current.get(name)
        if isinstance(value, str) and isinstance(now, str) and now.lower() == value.lower():
            continue
        changes[name] = value
    if proposed and not changes:
        why += " The profile already says so: no change."
    return ProfileUpdate(reasoning=why, changes=changes)

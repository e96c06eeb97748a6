"""Offline memory skills (seeds 001, 003): explainable rules for the memory engine's questions.

Reads the prompts of the long-term memory section of `memoir.llm.prompts`:

- `HotpathDecision` and `MemoryExtraction`: the latest message read by
  `memoir.llm.offline_extract` (clauses, subjects, tenses, dates against the `## Message Time`,
  the `## Speaker`): questions, one-off requests, plans still to come, encouragement and small
  talk are not memories; each stable fact and each past event is one (several per message).
- `MemoryCandidate`: the most important of them (for a caller that asks for one).
- `SameFact`: equal keys, or the same entity and attribute read back from both summaries, or
  the same words.
- `ComposedSummary`: the newer fact wins on conflict; details of the older one it does not
  contradict are kept ("User's dog Luna is 3 years old." + "User's pet Luna is 4 years old."
  → "User's dog Luna is 4 years old.").
- `EpisodicSummary`: topic from the request in words (a reminder to …, an email to …, booking
  the dentist; never the request quoted), approach from the actions (or the reply), notable only
  with an outcome (an action's result, or a recap the user asked for and got).
- `ProfileUpdate`: city, name, tone, language, timezone, goals, interests from one memory.
"""

from __future__ import annotations

import re

from memoir.embeddings import Embedder
from memoir.llm._text import second_person
from memoir.llm.offline_clauses import gerund, parse_clause
from memoir.llm.offline_extract import Reading, read_message
from memoir.llm.offline_facts import (
    LANGUAGE_CODES,
    content_words,
    read_summary,
    render_fact,
)
from memoir.llm.prompts import one_line
from memoir.memory.requests import (
    ComposeRequest,
    EpisodeRequest,
    ProfileRequest,
    SameFactRequest,
    TurnMemoryRequest,
)
from memoir.memory.schemas import (
    ComposedSummary,
    EpisodicSummary,
    HotpathDecision,
    MemoryExtraction,
    ProfileUpdate,
    SameFact,
)
from memoir.memory.speakers import split_speaker
from memoir.memory.timephrases import asks_for_recap
from memoir.timeparse import strip_when

__all__ = [
    "compose_offline",
    "episodic_offline",
    "extraction_offline",
    "gate_offline",
    "profile_update_offline",
    "same_fact_offline",
]


def _reading(request: TurnMemoryRequest) -> Reading:
    """The latest message read into memories, with its speaker and time."""
    return read_message(
        request.message.strip(), request.earlier, request.speaker, request.now, request.timezone
    )


# ----- hot path ------------------------------------------------------------------------------


def gate_offline(request: TurnMemoryRequest, embedder: Embedder) -> HotpathDecision:
    """Create when a clause of the latest message states a fact or tells of a past event."""
    reading = _reading(request)
    steps = list(reading.notes)
    if reading.memories:
        said = "; ".join(f"“{m.summary}”" for m in reading.memories[:3])
        steps.append(
            f"It states {len(reading.memories)} memory(ies) worth keeping ({said}): create."
        )
        return HotpathDecision(reasoning=" ".join(steps), should_create=True)
    if not steps:
        steps.append("The message states no stable fact, preference, goal or relationship.")
    steps.append("Do not create.")
    return HotpathDecision(reasoning=" ".join(steps), should_create=False)


def extraction_offline(request: TurnMemoryRequest, embedder: Embedder) -> MemoryExtraction:
    """Every fact and event of the latest message, most important first."""
    reading = _reading(request)
    why = " ".join(reading.notes) or "Each clause was read for facts and events."
    return MemoryExtraction(reasoning=why, memories=reading.memories)


def same_fact_offline(request: SameFactRequest, embedder: Embedder) -> SameFact:
    """Same key, or same entity and attribute, or the same words: the same fact."""
    old_key, old_summary = request.existing.key, request.existing.summary
    new_key, new_summary = request.candidate.key, request.candidate.summary
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


def compose_offline(request: ComposeRequest, embedder: Embedder) -> ComposedSummary:
    """The newer fact wins; the older one's details it does not contradict are kept."""
    old_key, old_summary = request.existing.key, request.existing.summary
    new_key, new_summary = request.new.key, request.new.summary
    person = _person_of(new_key) or _person_of(old_key)
    old_fact = read_summary(_as_user(old_summary, person), _user_key(old_key))
    new_fact = read_summary(_as_user(new_summary, person), _user_key(new_key))
    if old_fact and new_fact and old_fact.slot == new_fact.slot:
        merged = {**old_fact.attrs}
        kept = []
        for name, value in new_fact.attrs.items():
            if value and not (name == "kind" and value == "pet" and merged.get("kind")):
                merged[name] = value
            elif merged.get(name):
                kept.append(f"{name} {merged[name]}")
        rendered = render_fact(new_fact.rule, merged)
        summary = _as_person(rendered, new_summary, person) if rendered else new_summary
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


def _person_of(key: str | None) -> str | None:
    """The speaker slug of a named speaker's key (person:maya:city → maya), else None."""
    m = re.match(r"^person:([^:]+):", key or "")
    return m.group(1) if m else None


def _user_key(key: str | None) -> str | None:
    """A named speaker's key read as the user's (person:maya:city → profile:city)."""
    return re.sub(r"^person:[^:]+:", "profile:", key) if key else key


def _as_user(summary: str, slug: str | None) -> str:
    """ "Maya's dog Luna is 3 years old." → "User's dog Luna is 3 years old." (for the rules)."""
    if not slug:
        return summary
    return re.sub(rf"^{re.escape(slug)}\b", "User", summary, count=1, flags=re.I)


def _as_person(rendered: str, like: str, slug: str | None) -> str:
    """A summary rendered about "User", said again about the person `like` names."""
    if not slug:
        return rendered
    m = re.match(rf"^({re.escape(slug)})\b", like, re.I)
    return re.sub(r"^User\b", m.group(1), rendered) if m else rendered


# ----- episodic ------------------------------------------------------------------------------

_NOT_VERBS = {"a", "an", "the", "this", "that", "some", "any", "no", "yes", "ok", "okay", "hi"}
_QUESTION_WORDS = re.compile(
    r"^(?:(?:what|who|whom|whose|where|when|why|how|which|is|are|am|was|were|do|does|did|can|"
    r"could|would|will|should|shall|may|have|has)(?:'s|'re)?\s+)+(?:you\s+)?(?:think\s+)?",
    re.I,
)
_POLITE = re.compile(
    r"^(?:(?:hi|hey|hello|ok|okay|so|please|pls|kindly|can you|could you|would you|will you|"
    r"i need you to|i want you to|i'd like you to)[,!]?\s+)+",
    re.I,
)


def _topic(request: EpisodeRequest, recall: bool) -> str:
    """What the request was about, in words addressed to the user (never the request quoted):
    "a reminder to call your mom", "an email to dan@x.com", "booking the dentist", "what we
    talked about before"."""
    if request.email is not None:
        return f"the email “{request.email.subject}” from {request.email.author}"
    text = one_line(request.request.strip(), 400)
    _speaker, text = split_speaker(text)
    if recall:
        about = re.search(r"\babout\s+(?P<what>[^?.!]+)", text, re.I)
        what = strip_when(about.group("what")).strip() if about else ""
        return "what we talked about before" + (f": {second_person(what)}" if what else "")
    text = _POLITE.sub("", text).rstrip(" ?.!")
    remind = re.match(r"^remind me\b(?:\s+(?:to|about|that)\s+(?P<what>.+))?", text, re.I)
    if remind:
        what = strip_when(remind.group("what") or "").strip()
        return f"a reminder to {second_person(what)}" if what else "a reminder"
    mail = re.match(r"^(?:send\s+)?(?:an?\s+)?e-?mail\s+(?:to\s+)?(?P<who>[\w.@-]+)", text, re.I)
    if mail:
        return f"an email to {mail.group('who')}"
    return _topic_words(text)


def _topic_words(text: str) -> str:
    """A request as a noun phrase ("book the dentist for Thursday" → "booking the dentist"),
    a question as "your question about …", a statement as "that you …"."""
    plain = second_person(strip_when(text)).strip(" ,.")
    words = plain.split()
    if not words:
        return "a short exchange"
    clause = parse_clause(text)
    head = words[0].lower()
    asked = text.rstrip().endswith("?") or _QUESTION_WORDS.match(plain) is not None
    if not asked and not clause.has_verb and head.isalpha() and head not in _NOT_VERBS:
        return f"{gerund(head)} {' '.join(words[1:10])}".strip()
    if asked:
        about = _QUESTION_WORDS.sub("", plain).strip(" ?") or "it"
        return f"your question about {' '.join(about.split()[:10])}"
    return f"that {plain[:1].lower()}{plain[1:]}" if len(words) <= 12 else "what you told me"


def episodic_offline(request: EpisodeRequest, embedder: Embedder) -> EpisodicSummary:
    """Topic from the request, approach from the actions or the reply; notable with an outcome."""
    reply = one_line(request.reply, 200)
    status = request.status.strip()
    actions = request.actions
    recall = request.email is None and asks_for_recap(request.request)
    topic = _topic(request, recall)
    steps = [f"The request is about {topic}."]
    if actions:
        parts = []
        for action in actions:
            text = action.text.strip().rstrip(".")
            parts.append(text if action.ok else f"tried but failed: {text}")
        approach = "; ".join(parts)
        steps.append(f"{len(actions)} action(s) ran: an outcome, so it is notable.")
        return EpisodicSummary(
            reasoning=" ".join(steps), topic=topic, approach=approach, notable=True
        )
    if recall and reply:
        approach = f"I recapped our earlier conversations ({reply})"
        steps.append("The user asked to recall earlier conversations: a recap is notable.")
        return EpisodicSummary(
            reasoning=" ".join(steps), topic=topic, approach=approach, notable=True
        )
    if recall:
        steps.append("A recap was asked for but none was given (no reply): nothing to keep.")
        return EpisodicSummary(
            reasoning=" ".join(steps), topic=topic, approach="no recap given", notable=False
        )
    approach = f"I replied: {reply}" if reply else "I replied"
    steps.append(f"No action ran (status {status or 'unknown'}): a routine turn, not notable.")
    return EpisodicSummary(reasoning=" ".join(steps), topic=topic, approach=approach, notable=False)


# ----- profile -------------------------------------------------------------------------------

_TONE_OF_LENGTH = {"short": "concise", "detailed": "detailed"}


def profile_update_offline(request: ProfileRequest, embedder: Embedder) -> ProfileUpdate:
    """Profile fields one memory implies, only where they differ from the current profile."""
    current = request.profile
    key, category, summary = request.memory.key, request.memory.category, request.memory.summary
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

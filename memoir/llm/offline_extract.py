"""The offline extractor's reading of one message into memories: facts and events, with subjects.

`read_message` returns every memory the latest message states (most important first) and notes
on what it set aside:

1. Sentences: a question or a one-off request is set aside whole; a standing instruction ("from
   now on …", "never …") keeps its preference facts (patterns of memory_words.yaml).
2. Each clause (`memoir.llm.offline_clauses`) is read: the keyed rules of memory_facts.yaml
   first (`memoir.llm.offline_facts`); then the clause's grammar: its subject (the speaker, "my
   sister Ngozi", "Luna", "she" → the last person or pet named), verb and tense. A past event
   verb is an event dated by its time phrase against the message time; a present statement
   with an object is a fact; plans still to come, opinions and words to the listener are not.
3. A statement the grammar proposes is compared with the example statements of
   memory_examples.yaml (MiniLM nearest neighbours): the nearest label keeps it (and gives its
   category) or sets it aside as talk, and the answer says which example decided.
4. Summaries name whom they are about ("User", the speaker's name, "Maya's sister Ngozi"); a
   named speaker's keys start with `person:<speaker>:` so two people's facts never merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import yaml

from memoir.embeddings import Embedder
from memoir.llm.offline_clauses import (
    Clause,
    expand_contraction,
    is_adverb,
    is_event_verb,
    is_opinion_verb,
    is_strong_verb,
    parse_clause,
    past_form,
    split_clauses,
    third_person_verb,
    vocab,
)
from memoir.llm.offline_facts import Fact, extract_facts, sentences, strip_lead
from memoir.memory.schemas import MemoryCandidate
from memoir.memory.speakers import split_speaker
from memoir.memory.timephrases import TimeFilter, span_phrase, time_filter
from memoir.timeparse import find_time_phrases

__all__ = ["Reading", "person_key", "read_message"]

MAX_MEMORIES = 6  # per message
MAX_OBJECT_WORDS = 20
USER = "User"


def _pattern(name: str) -> re.Pattern[str]:
    lines = [line.strip() for line in vocab()["patterns"][name].splitlines() if line.strip()]
    return re.compile("|".join(f"(?:{line})" for line in lines), re.I)


_QUESTION, _REQUEST, _STANDING = _pattern("question"), _pattern("request"), _pattern("standing")
_COMING, _OBJECT_END, _INFINITIVE = (
    _pattern("coming"),
    _pattern("object_end"),
    _pattern("infinitive"),
)
_ABOUT_ASSISTANT, _DETERMINED = _pattern("about_assistant"), _pattern("determined")


@dataclass(frozen=True)
class Entity:
    """A person or pet named in the conversation, and how to say it ("Maya's sister Ngozi")."""

    name: str
    phrase: str
    kind: str  # "pet" or "person"
    noun: str = ""  # "dog", "sister"


@dataclass
class Reading:
    """What one message states (most important first) and what was set aside, with why."""

    memories: list[MemoryCandidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Proposal:
    """A memory the grammar proposes, waiting for the examples' verdict."""

    memory: MemoryCandidate
    clause: str
    quoted: str
    sure: bool  # the grammar knows it for a fact or an event; else it must read like one


@dataclass
class _Context:
    speaker: str | None
    now: datetime | None
    timezone: str
    entities: dict[str, Entity] = field(default_factory=dict)
    last: Entity | None = None
    names: set[str] = field(default_factory=set)  # lower-case names seen said as names
    proposals: list[_Proposal] = field(default_factory=list)

    @property
    def owner(self) -> str:
        """Whose "my" it is: the named speaker, else the user."""
        return self.speaker or USER

    def remember(self, entity: Entity) -> None:
        self.entities[entity.name.lower()] = entity
        self.last = entity

    def kinds(self) -> dict[str, tuple[str, str]]:
        """The keyed rules' view of the entities: name → ("pet" | "person", noun)."""
        return {k: (e.kind, e.noun or e.kind) for k, e in self.entities.items() if e.noun}


def person_key(key: str | None, speaker: str | None) -> str | None:
    """A named speaker's fact key: profile:city → person:maya:city (the user's keys stay)."""
    if not key or not speaker:
        return key
    slug = re.sub(r"[^a-z0-9]+", "-", speaker.lower()).strip("-")
    return f"person:{slug}:{key.removeprefix('profile:')}"


def read_message(
    latest: str,
    earlier: list[str],
    speaker: str | None,
    now: datetime | None,
    timezone: str,
    embedder: Embedder,
) -> Reading:
    """Every memory of the latest message, and notes on the sentences set aside."""
    ctx = _Context(speaker, now, timezone)
    ctx.names = _names_in([*earlier, latest]) | ({speaker.lower()} if speaker else set())
    for turn in earlier:
        _learn_entities(turn, ctx)
    reading = Reading()
    for raw in sentences(latest):
        _read_sentence(raw, ctx, reading)
    _judge(ctx.proposals, reading, embedder)
    reading.memories = _ranked(reading.memories)[:MAX_MEMORIES]
    return reading


def _names_in(texts: list[str]) -> set[str]:
    """Words capitalized inside a sentence (names as said) and the speakers of earlier turns."""
    names: set[str] = set()
    for text in texts:
        who, body = split_speaker(text)
        names |= {who.lower()} if who else set()
        names |= {m.lower() for m in re.findall(r"(?<=[a-z,;:] )([A-Z][a-z]+)\b", body)}
    return names


def _ranked(found: list[MemoryCandidate]) -> list[MemoryCandidate]:
    """Most important first; one memory per key and per summary."""
    seen: set[str] = set()
    unique: list[MemoryCandidate] = []
    for memory in sorted(found, key=lambda m: -m.importance):
        marks = {memory.summary.lower()} | ({memory.key} if memory.key else set())
        if not marks & seen:
            unique.append(memory)
        seen |= marks
    return unique


def _learn_entities(turn: str, outer: _Context) -> None:
    """People and pets an earlier turn names (said by its own speaker), for "she" and "Luna"."""
    who, body = split_speaker(turn)
    ctx = _Context(who, None, outer.timezone, outer.entities, names=outer.names)
    for raw in sentences(body):
        sentence = strip_lead(raw)
        for fact in extract_facts(sentence):
            _entity_of_fact(fact, ctx)
        for text in split_clauses(sentence):
            clause = parse_clause(text)
            if clause.has_verb:
                _subject_phrase(clause, ctx)
    outer.last = ctx.last or outer.last


def _read_sentence(raw: str, ctx: _Context, reading: Reading) -> None:
    sentence = strip_lead(raw).strip()
    quoted = f"“{raw if len(raw) <= 80 else raw[:79] + '…'}”"
    standing = _STANDING.search(sentence) is not None and ctx.speaker is None
    if not sentence:
        return
    if not standing and (sentence.endswith("?") or _QUESTION.match(sentence)):
        about = _ABOUT_ASSISTANT.search(sentence)
        note = "is a question about the assistant (meta/capability)" if about else "is a question"
        reading.notes.append(f"{quoted} {note}, not a statement of fact.")
        return
    if not standing and _REQUEST.search(sentence):
        reading.notes.append(f"{quoted} is a one-off request, not a lasting fact.")
        return
    facts = [f for f in extract_facts(sentence) if f.category == "preference"] if standing else []
    if facts:
        reading.memories.extend(_keyed(f, ctx) for f in facts)
        return
    for text in split_clauses(sentence):
        _read_clause(text, ctx, reading, quoted)


def _read_clause(text: str, ctx: _Context, reading: Reading, quoted: str) -> None:
    clause = parse_clause(text)
    past = clause.tense in ("past", "perfect") and not clause.negated
    keyed = _one_per_thing(extract_facts(text, ctx.kinds(), ctx.last.name if ctx.last else None))
    keyed = [f for f in keyed if not (f.user_only and ctx.speaker)]  # said to a person, not us
    for fact in keyed:
        _entity_of_fact(fact, ctx)
    if not past and _is_timed(clause, ctx):
        kept = [f for f in keyed if f.allows_time]
        if len(kept) < len(keyed) or not kept:
            reading.notes.append(f"{quoted} is about a time-bound plan, not a lasting fact.")
        reading.memories.extend(_keyed(f, ctx) for f in kept)
        return
    facts = [_keyed(f, ctx) for f in keyed]
    reading.memories.extend(facts)
    subject = _subject_phrase(clause, ctx) if clause.has_verb else None
    if subject is None:
        if clause.subject.kind == "listener" and not facts:
            reading.notes.append(f"{quoted} speaks to the listener (encouragement, small talk).")
        return
    # A past act: an event when its verb is one of events, or when it reads like one.
    sure = not past or is_event_verb(clause.lemma)
    if past and not clause.copula and not is_opinion_verb(clause.lemma):
        found = _event(clause, subject, ctx)
    else:
        found = _attribute(clause, subject, ctx)
    if found is not None and (found.date_iso is not None or not facts):
        core = _OBJECT_END.split(text, maxsplit=1)[0]  # what is judged: what is remembered
        ctx.proposals.append(_Proposal(found, core, quoted, sure))


def _one_per_thing(facts: list[Fact]) -> list[Fact]:
    """One fact per thing a clause is about: "my dog Luna is 3" is Luna's age (which says she
    is a dog), not also "has a dog named Luna"."""
    kept: dict[str, Fact] = {}
    for fact in facts:  # most important first
        thing = fact.attrs.get("what") or fact.attrs.get("name") or ":".join(fact.slot)
        kept.setdefault(thing.lower(), fact)
    return list(kept.values())


def _is_timed(clause: Clause, ctx: _Context) -> bool:
    """A plan or an appointment: a time phrase or a future marker."""
    if find_time_phrases(clause.text) or _COMING.search(clause.text):
        return True
    return ctx.now is not None and time_filter(clause.text, ctx.now, ctx.timezone) is not None


# ----- the examples' verdict -------------------------------------------------------------------


@cache
def examples() -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """memory_examples.yaml and its (decision, label, text) rows."""
    text = resources.files("memoir.data").joinpath("memory_examples.yaml").read_text()
    raw: dict[str, Any] = yaml.safe_load(text)
    rows = [(d, label, t) for d in ("keep", "drop") for label, ts in raw[d].items() for t in ts]
    return raw, rows


_VECTORS: dict[int, tuple[Embedder, np.ndarray]] = {}


def _example_vectors(embedder: Embedder) -> np.ndarray:
    cached = _VECTORS.get(id(embedder))
    if cached is None or cached[0] is not embedder:
        texts = [t for _d, _l, t in examples()[1]]
        cached = _VECTORS[id(embedder)] = (embedder, np.asarray(embedder.embed(texts)))
    return cached[1]


def _judge(proposals: list[_Proposal], reading: Reading, embedder: Embedder) -> None:
    """Keep each proposal whose nearest examples are of a kept label (its category for a fact
    about the speaker), set aside the others; say which example decided."""
    if not proposals:
        return
    raw, rows = examples()
    queries = np.asarray(embedder.embed([p.clause for p in proposals]))
    for proposal, similarities in zip(
        proposals, queries @ _example_vectors(embedder).T, strict=True
    ):
        scores: dict[tuple[str, str], tuple[float, int]] = {}
        for label in {(d, lab) for d, lab, _t in rows}:
            mine = sorted(
                (i for i, r in enumerate(rows) if r[:2] == label), key=lambda i: -similarities[i]
            )
            top = mine[: raw["neighbours"]]
            scores[label] = (float(np.mean(similarities[top])), top[0])
        memory = proposal.memory
        keep = {
            k: v
            for k, v in scores.items()
            if k[0] == "keep" and (memory.kind == "event") == (k[1] == "event")
        }
        best_keep = max(keep, key=lambda k: keep[k][0])
        best = max([best_keep, *(k for k in scores if k[0] == "drop")], key=lambda k: scores[k][0])
        closest = f"“{rows[scores[best][1]][2]}” ({best[1]}, {scores[best][0]:.2f})"
        margin = raw["margin"] if proposal.sure else 0.0
        if best[0] == "drop" and scores[best][0] - scores[best_keep][0] >= margin:
            reading.notes.append(f"{proposal.quoted} reads as talk, not a fact: closest {closest}.")
            continue
        category = memory.category if memory.category != "profile" else best_keep[1]
        update = {"category": category, "importance": raw["importance"][category]}
        reading.memories.append(memory.model_copy(update=update))
        closest = f"“{rows[scores[best_keep][1]][2]}” ({category}, {scores[best_keep][0]:.2f})"
        reading.notes.append(f"{proposal.quoted} is kept as {category}: closest {closest}.")


# ----- subjects ----------------------------------------------------------------------------------


def _entity_of_fact(fact: Fact, ctx: _Context) -> None:
    name = fact.attrs.get("name")
    if not name or fact.rule == "name":
        return
    kind = "pet" if fact.category == "pet" else "person"
    noun = fact.attrs.get("relation") or fact.attrs.get("kind") or ""
    phrase = f"{ctx.owner}'s {noun} {name}" if noun else name
    ctx.remember(Entity(name, phrase, kind, noun))


def _subject_phrase(clause: Clause, ctx: _Context) -> str | None:
    """Whom the clause is about, in words; None when it is about no one to remember."""
    subject = clause.subject
    if subject.kind in ("speaker", "group"):
        return f"{ctx.owner} and {subject.partner}" if subject.partner else ctx.owner
    if subject.kind == "possessed":
        named = f" {subject.name}" if subject.name else ""
        phrase = f"{subject.owner or ctx.owner}'s {subject.noun}{named}"
        if subject.name:
            noun = subject.noun.split()[-1]
            kind = "pet" if noun in vocab()["pet_kinds"] else "person"
            ctx.remember(Entity(subject.name, phrase, kind, noun))
        return phrase
    if subject.kind == "name":
        base = _named_phrase(clause, ctx)
    elif subject.kind == "pronoun" and ctx.last is not None and subject.text != "they":
        base = ctx.last.phrase  # "she", "he": the last person or pet named
    else:
        return None
    return f"{base} and {subject.partner}" if base and subject.partner else base


def _named_phrase(clause: Clause, ctx: _Context) -> str | None:
    """A name as a subject: a known person or pet; "Mum" is the speaker's; an unknown name
    before a word that may be a plural noun ("Sea otters …") is no subject."""
    name = clause.subject.name
    if name.lower() in vocab()["family_names"]:
        return f"{ctx.owner}'s {name.lower()}"
    known = ctx.entities.get(name.lower())
    if known is None:
        first = clause.verb_phrase.split()[0] if clause.verb_phrase else ""
        if name.lower() not in ctx.names and not is_strong_verb(first):
            return None
        known = Entity(name, name, "person")
    ctx.remember(known)
    return known.phrase


def _swap_person(text: str, ctx: _Context, owner_is_subject: bool) -> str:
    """First-person words of the object said about their owner: my → their / Maya's."""
    owner, mine = ctx.owner, "their" if owner_is_subject else f"{ctx.owner}'s"
    them = "them" if owner_is_subject else owner
    swaps = {"my": mine, "our": mine, "mine": "theirs" if owner_is_subject else f"{owner}'s"}
    swaps |= {"me": them, "us": them, "i": "they" if owner_is_subject else owner}
    swaps |= {"myself": "themselves", "we": "they"}
    pattern = r"\b(?:my|our|mine|me|us|i|myself|we)\b"
    return re.sub(pattern, lambda m: swaps[m.group(0).lower()], text, flags=re.I)


def _verb(clause: Clause, *, event: bool = False) -> str:
    """The verb phrase said of the subject: contractions spelled out, third person for "I" /
    "we"; an event's in the simple past ("'ve just started" → "started")."""
    raw = clause.verb_phrase.split()
    words = [
        expand_contraction(w, raw[i + 1] if i + 1 < len(raw) else "") for i, w in enumerate(raw)
    ]
    if event:
        words = [w for w in words if not is_adverb(w) or w.lower() in ("not", "never")]
        if clause.tense == "perfect" and words and words[0].lower() in ("have", "has"):
            words = [past_form(w) for w in words[1:]]
        return " ".join(words).lower() if words else clause.verb_phrase
    if clause.subject.kind in ("speaker", "group") and not clause.subject.partner:
        first = next((i for i, w in enumerate(words) if not is_adverb(w)), None)
        if first is not None:
            words[first] = third_person_verb(words[first])
    return " ".join(words)


# ----- memories ----------------------------------------------------------------------------------


def _keyed(fact: Fact, ctx: _Context) -> MemoryCandidate:
    summary = fact.summary
    if ctx.speaker:
        summary = re.sub(r"^User\b", ctx.speaker, summary)
    key = person_key(fact.key, ctx.speaker)
    return MemoryCandidate(
        category=fact.category,
        summary=summary,
        importance=fact.importance,
        key=key,
        subject=ctx.owner,
    )


def _object(clause: Clause, ctx: _Context, window: TimeFilter | None) -> str:
    """What follows the verb, up to where another clause starts, without the event's time
    phrase, its first-person words said of their owner."""
    text = _OBJECT_END.split(clause.rest, maxsplit=1)[0]
    if window is not None:
        at = r"(?:\s*,)?\s*(?:\b(?:on|in|at|during|since|from|by)\s+)?(?:the\s+)?"
        when = at + re.escape(window.phrase)
        text = re.sub(when, "", text, count=1, flags=re.I)
    words = re.sub(r"\s+", " ", text).strip(" ,;:-").split()[:MAX_OBJECT_WORDS]
    while words and words[-1].lower().strip(",") in vocab()["dangling"]:
        words.pop()
    return _swap_person(
        " ".join(words).strip(" ,"), ctx, clause.subject.kind in ("speaker", "group")
    )


def _event_window(clause: Clause, ctx: _Context) -> TimeFilter | None:
    """When the event happened: its time phrase against the message time ("just": that day);
    a phrase inside a plan ("decided to move in March") dates the plan, not the event."""
    if ctx.now is None:
        return None
    said = clause.text.split(": ", 1)[0]  # after a colon: more of the object, not the when
    window = time_filter(said, ctx.now, ctx.timezone)
    if window is not None:
        plan = _INFINITIVE.search(clause.rest)
        where = clause.rest.lower().find(window.phrase.lower())
        future = window.start > time_filter("today", ctx.now, ctx.timezone).start  # type: ignore[union-attr]
        return None if future or (plan is not None and where > plan.start()) else window
    if re.search(r"\bjust\b", clause.verb_phrase, re.I):
        return time_filter("today", ctx.now, ctx.timezone)
    return None


def _event(clause: Clause, subject: str, ctx: _Context) -> MemoryCandidate | None:
    window = _event_window(clause, ctx)
    rest = _object(clause, ctx, window)
    first = rest.split()[0].lower() if rest else ""
    if (not rest and clause.lemma not in vocab()["whole_events"]) or first in vocab()[
        "pronoun_objects"
    ]:
        return None  # "Ada decided.", "I adopted one": nothing said of what happened
    core = f"{subject} {_verb(clause, event=True)}" + (f" {rest}" if rest else "")
    summary = (
        f"{span_phrase(window.start, window.end)} {core}."
        if window
        else f"{core[:1].upper()}{core[1:]}."
    )
    return MemoryCandidate(
        category="event",
        summary=summary,
        importance=0.6,
        subject=subject,
        kind="event",
        date_iso=window.start if window else None,
        time_phrase=window.phrase if window else None,
    )


def _attribute(clause: Clause, subject: str, ctx: _Context) -> MemoryCandidate | None:
    """A present statement about the subject with an object, or None (opinions, pronouns)."""
    if (
        not clause.lemma
        or is_opinion_verb(clause.lemma)
        or (clause.tense == "past" and not clause.copula)
    ):
        return None  # talk about the talk, or a past act that is no event ("I said")
    rest = _object(clause, ctx, None)
    words = [w.lower().strip(",.!") for w in rest.split()]
    if not words or words[0] in vocab()["pronoun_objects"] or {"you", "your"} & set(words):
        return None
    if clause.copula and not _DETERMINED.search(rest):
        return None  # "I'm so tired", "she's great": a passing state
    core = f"{subject} {_verb(clause)} {rest}"
    pet = any(e.phrase == subject and e.kind == "pet" for e in ctx.entities.values())
    category = "pet" if pet else "profile" if subject == ctx.owner else "relationship"
    return MemoryCandidate(
        category=category,
        summary=f"{core[:1].upper()}{core[1:]}.",
        importance=0.55,
        subject=subject,
    )

"""The offline extractor's reading of one message (and of the earlier turns, for the people and
pets they name) into memories, most important first, with notes on what it set aside: questions
and one-off requests whole; of each clause (`offline_clauses`), its keyed facts (`offline_facts`),
then what its grammar says (a past act an event, a present statement a fact, about its subject:
"User", "Maya's sister Ngozi", "she" the last one named), kept or set aside as talk by its
nearest examples (memory_examples.yaml, MiniLM). A named speaker's keys start with
`person:<speaker>:` so two people's facts never merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

import numpy as np

from memoir.embeddings import Embedder
from memoir.llm import offline_clauses as grammar
from memoir.llm import tables
from memoir.llm.offline_clauses import WORDS, Clause, pattern
from memoir.llm.offline_facts import FACTS, Fact, extract_facts, sentences
from memoir.llm.tables import Examples
from memoir.memory.requests import TurnMemoryRequest
from memoir.memory.schemas import MemoryCandidate
from memoir.memory.speakers import split_speaker
from memoir.memory.timephrases import TimeFilter, span_phrase, time_filter
from memoir.text import sentence as said_as_sentence
from memoir.text import swap_words
from memoir.timeparse import find_time_phrases

MAX_MEMORIES = 6  # per message
_QUESTION, _REQUEST, _STANDING = pattern("question"), pattern("request"), pattern("standing")
_COMING, _END, _INFINITIVE = pattern("coming"), pattern("object_end"), pattern("infinitive")
_ABOUT, _DETERMINED = pattern("about_assistant"), pattern("determined")
_BEFORE_TIME = r"(?:\s*,)?\s*(?:\b(?:on|in|at|during|since|from|by)\s+)?(?:the\s+)?"


@dataclass(frozen=True)
class Entity:
    """A person or pet named in the conversation, and how to say it ("Maya's sister Ngozi")."""

    name: str
    phrase: str
    kind: str  # "pet" or "person"
    noun: str = ""  # "dog", "sister"


@dataclass
class _Proposal:
    """A memory the grammar proposes, waiting for the examples' verdict."""

    memory: MemoryCandidate
    said: str  # what is judged: the clause up to where its object ends
    quoted: str
    sure: bool  # the grammar knows it for a fact or an event; else it must read like one


@dataclass
class Reading:
    """One message read: its memories and notes, and who and what it knows on the way."""

    speaker: str | None
    now: datetime | None
    timezone: str
    memories: list[MemoryCandidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    entities: dict[str, Entity] = field(default_factory=dict)
    last: Entity | None = None
    names: set[str] = field(default_factory=set)  # lower-case names seen said as names
    proposals: list[_Proposal] = field(default_factory=list)

    @property
    def owner(self) -> str:
        """Whose "my" it is: the named speaker, else the user."""
        return self.speaker or "User"

    def remember(self, entity: Entity) -> str:
        """`entity` known by its name, and as the last one named ("she")."""
        self.entities[entity.name.lower()] = self.last = entity
        return entity.phrase


def read_message(request: TurnMemoryRequest, embedder: Embedder) -> Reading:
    """Every memory of the latest message, and notes on the sentences set aside."""
    ctx, latest = Reading(request.speaker, request.now, request.timezone), request.message.strip()
    for who, body in map(split_speaker, [*request.earlier, latest]):
        named = re.findall(r"(?<=[a-z,;:] )([A-Z][a-z]+)\b", body)  # inside a sentence
        ctx.names |= {n.lower() for n in [who or "", *named, request.speaker or ""] if n}
    for who, body in map(split_speaker, request.earlier):  # the people and pets they name
        earlier = Reading(who, None, ctx.timezone, entities=ctx.entities, names=ctx.names)
        for raw in sentences(body):
            _read_sentence(raw, earlier)
        ctx.last = earlier.last or ctx.last
    for raw in sentences(latest):
        _read_sentence(raw, ctx)
    _judge(ctx, embedder)
    ctx.memories = _ranked(ctx.memories)[:MAX_MEMORIES]
    return ctx


def _ranked(found: list[MemoryCandidate]) -> list[MemoryCandidate]:
    """Most important first; one memory per key and per summary."""
    seen: set[str] = set()
    unique = []
    for memory in sorted(found, key=lambda m: -m.importance):
        marks = {memory.summary.lower(), memory.key or memory.summary.lower()}
        unique += [memory] if not marks & seen else []
        seen |= marks
    return unique


def _read_sentence(raw: str, ctx: Reading) -> None:
    """A question or request is set aside, a standing instruction keeps its preferences."""
    sentence = re.sub(FACTS["lead_in"].strip(), "", raw, flags=re.I).strip()  # lead-in out: "btw"
    quoted = f"“{raw if len(raw) <= 80 else raw[:79] + '…'}”"
    standing = _STANDING.search(sentence) is not None and ctx.speaker is None
    if not standing and (sentence.endswith("?") or _QUESTION.match(sentence)):
        about = " about the assistant (meta/capability)" if _ABOUT.search(sentence) else ""
        ctx.notes.append(f"{quoted} is a question{about}, not a statement of fact.")
        return
    if not standing and _REQUEST.search(sentence):
        ctx.notes.append(f"{quoted} is a one-off request, not a lasting fact.")
        return
    facts = [f for f in extract_facts(sentence) if f.category == "preference"] if standing else []
    ctx.memories.extend(_keyed(f, ctx) for f in facts)
    for text in grammar.split_clauses(sentence) if sentence and not facts else []:
        _read_clause(text, ctx, quoted)


def _read_clause(text: str, ctx: Reading, quoted: str) -> None:
    """A clause's keyed facts, then what its grammar says, proposed for the examples' verdict."""
    clause = grammar.parse_clause(text)
    past = clause.tense in ("past", "perfect") and not clause.negated
    known = {k: (e.kind, e.noun or e.kind) for k, e in ctx.entities.items() if e.noun}
    keyed: dict[str, Fact] = {}  # one fact per thing: "my dog Luna is 3" is Luna's age
    for fact in extract_facts(text, known, ctx.last.name if ctx.last else None):
        thing = fact.attrs.get("what") or fact.attrs.get("name") or str(fact.slot)
        if not (fact.user_only and ctx.speaker):  # an instruction said to a person, not to us
            keyed.setdefault(thing.lower(), fact)
    for fact in keyed.values():
        _entity_of_fact(fact, ctx)
    said = bool(find_time_phrases(text) or _COMING.search(text))
    timed = said or bool(ctx.now and time_filter(text, ctx.now, ctx.timezone))
    if not past and timed:
        kept = [f for f in keyed.values() if f.allows_time]
        if len(kept) < len(keyed) or not kept:
            ctx.notes.append(f"{quoted} is about a time-bound plan, not a lasting fact.")
        ctx.memories.extend(_keyed(f, ctx) for f in kept)
        return
    ctx.memories.extend(_keyed(f, ctx) for f in keyed.values())
    subject = _subject_phrase(clause, ctx) if clause.verb_phrase else None
    if subject is None:
        if clause.subject.kind == "listener" and not keyed:
            ctx.notes.append(f"{quoted} speaks to the listener (encouragement, small talk).")
        return
    if past and not clause.copula and not grammar.is_verb_of(clause.lemma, "opinion_verbs"):
        found = _event(clause, subject, ctx)  # a past act: an event, sure when its verb is one
    else:
        found = _attribute(clause, subject, ctx)
    if found is not None and (found.date_iso is not None or not keyed):  # else a keyed fact says it
        sure = not past or grammar.is_verb_of(clause.lemma, "event_verbs")
        ctx.proposals.append(_Proposal(found, _END.split(text, maxsplit=1)[0], quoted, sure))


# ----- the examples' verdict -------------------------------------------------------------------


_TABLE: dict[str, Any] = tables.table("memory_examples")
_ROWS = [((d, k), text) for d in ("keep", "drop") for k in _TABLE[d] for text in _TABLE[d][k]]
_LABELS = [label for label, _text in _ROWS]  # each example's (keep | drop, label)
_EXAMPLES = Examples(text for _label, text in _ROWS)  # embedded on first use


def _judge(ctx: Reading, embedder: Embedder) -> None:
    """Keep a proposal unless talk examples are nearer (by the margin if the grammar is sure)."""
    if not ctx.proposals:
        return
    rows = _EXAMPLES.similarities([p.said for p in ctx.proposals], embedder)
    count = _TABLE["neighbours"]  # a label's score: the mean similarity of this many nearest
    for proposal, sims in zip(ctx.proposals, rows, strict=True):
        ranked = sorted(range(len(_LABELS)), key=lambda i: -sims[i])
        near = {k: [i for i in ranked if _LABELS[i] == k][:count] for k in dict.fromkeys(_LABELS)}
        scores = {label: (float(np.mean(sims[top])), top[0]) for label, top in near.items()}
        memory, event = proposal.memory, proposal.memory.kind == "event"
        kinds = [k for k in scores if k[0] == "keep" and (k[1] == "event") == event]
        keep = max(kinds, key=lambda k: scores[k][0])
        talk = max((k for k in scores if k[0] == "drop"), key=lambda k: scores[k][0])
        margin = _TABLE["margin"] if proposal.sure else 0.0
        best = talk if scores[talk][0] - scores[keep][0] >= margin else keep
        closest = f"closest “{_EXAMPLES.texts[scores[best][1]]}” ({best[1]}, {scores[best][0]:.2f})"
        if best is talk:
            ctx.notes.append(f"{proposal.quoted} reads as talk, not a fact: {closest}.")
            continue
        category = keep[1] if memory.category == "profile" else memory.category
        update = {"category": category, "importance": _TABLE["importance"][category]}
        ctx.memories.append(memory.model_copy(update=update))
        ctx.notes.append(f"{proposal.quoted} is kept as {category}: {closest}.")


# ----- subjects ----------------------------------------------------------------------------------


def _entity_of_fact(fact: Fact, ctx: Reading) -> None:
    """The person or pet a fact names ("my sister Ngozi"), remembered."""
    name, noun = fact.attrs.get("name"), fact.attrs.get("relation") or fact.attrs.get("kind") or ""
    if name and fact.rule != "name":
        phrase = f"{ctx.owner}'s {noun} {name}" if noun else name
        ctx.remember(Entity(name, phrase, "pet" if fact.category == "pet" else "person", noun))


def _subject_phrase(clause: Clause, ctx: Reading) -> str | None:
    """Whom the clause is about, in words; None when it is about no one to remember."""
    subject, base = clause.subject, None
    if subject.kind in ("speaker", "group"):
        base = ctx.owner
    elif subject.kind == "possessed":
        phrase = f"{subject.owner or ctx.owner}'s {subject.noun} {subject.name}".rstrip()
        noun = subject.noun.split()[-1]
        kind = "pet" if noun in WORDS["pet_kinds"] else "person"
        return ctx.remember(Entity(subject.name, phrase, kind, noun)) if subject.name else phrase
    elif subject.kind == "name":
        base = _named_phrase(clause, ctx)
    elif subject.kind == "pronoun" and ctx.last is not None and subject.text != "they":
        base = ctx.last.phrase  # "she", "he": the last person or pet named
    return f"{base} and {subject.partner}" if base and subject.partner else base


def _named_phrase(clause: Clause, ctx: Reading) -> str | None:
    """A name as a subject: a known person or pet; "Mum" is the speaker's; an unknown name
    before a word that may be a plural noun ("Sea otters …") is no subject."""
    name = clause.subject.name
    if name.lower() in WORDS["family_names"]:
        return f"{ctx.owner}'s {name.lower()}"
    first = clause.verb_phrase.split()[0] if clause.verb_phrase else ""
    known = ctx.entities.get(name.lower())
    if known is None and name.lower() not in ctx.names and not grammar.is_strong_verb(first):
        return None
    return ctx.remember(known or Entity(name, name, "person"))


def _verb(clause: Clause, *, event: bool = False) -> str:
    """The verb phrase said of the subject ("I drive" → drives); an event's in the past."""
    phrase = [*clause.verb_phrase.split(), ""]
    words = [grammar.expand_contraction(w, after) for w, after in pairwise(phrase)]
    if event:
        words = [w for w in words if not grammar.is_adverb(w) or w.lower() in ("not", "never")]
        if clause.tense == "perfect" and words and words[0].lower() in ("have", "has"):
            words = [grammar.past_form(w) for w in words[1:]]
        return " ".join(words).lower() if words else clause.verb_phrase
    first = next((i for i, w in enumerate(words) if not grammar.is_adverb(w)), None)
    mine = clause.subject.kind in ("speaker", "group") and not clause.subject.partner
    if mine and first is not None:
        words[first] = grammar.third_person_verb(words[first])
    return " ".join(words)


# ----- memories ----------------------------------------------------------------------------------


def _keyed(fact: Fact, ctx: Reading) -> MemoryCandidate:
    """A keyed fact as its owner's memory (a named speaker's: "Maya's …", person:maya:…)."""
    summary, key = fact.summary, fact.key
    if ctx.speaker:
        summary = re.sub(r"^User\b", ctx.speaker, summary)
        slug = re.sub(r"[^a-z0-9]+", "-", ctx.speaker.lower()).strip("-")
        key = key and f"person:{slug}:{key.removeprefix('profile:')}"
    said = {"category": fact.category, "importance": fact.importance, "subject": ctx.owner}
    return MemoryCandidate(summary=summary, key=key, **said)


def _object(clause: Clause, ctx: Reading, window: TimeFilter | None) -> str:
    """What follows the verb, to the next clause, without its time, "my" said of its owner."""
    text = _END.split(clause.rest, maxsplit=1)[0]
    if window is not None:
        text = re.sub(_BEFORE_TIME + re.escape(window.phrase), "", text, count=1, flags=re.I)
    words = re.sub(r"\s+", " ", text).strip(" ,;:-").split()[:20]
    while words and words[-1].lower().strip(",") in WORDS["dangling"]:
        words.pop()
    whose = "about_subject" if clause.subject.kind in ("speaker", "group") else "about_owner"
    mine = {word: said.format(owner=ctx.owner) for word, said in WORDS[whose].items()}
    return swap_words(" ".join(words).strip(" ,"), mine)  # my → their / Maya's


def _event_window(clause: Clause, ctx: Reading) -> TimeFilter | None:
    """When the event happened: its time phrase against the message time ("just": that day);
    never a day to come, nor the date of a plan inside it ("decided to move in March") or of
    what follows a colon ("picked a date: 8 June")."""
    if ctx.now is None:
        return None
    today = time_filter("today", ctx.now, ctx.timezone)
    window = time_filter(clause.text.split(": ", 1)[0], ctx.now, ctx.timezone)
    if window is None:
        return today if re.search(r"\bjust\b", clause.verb_phrase, re.I) else None
    plan = _INFINITIVE.search(clause.rest)
    late = plan is not None and clause.rest.lower().find(window.phrase.lower()) > plan.start()
    return None if late or (today is not None and window.start > today.start) else window


def _event(clause: Clause, subject: str, ctx: Reading) -> MemoryCandidate | None:
    """A past act of the subject, dated if said; None if it says nothing ("I adopted one")."""
    window = _event_window(clause, ctx)
    rest = _object(clause, ctx, window)
    first = rest.split()[0].lower() if rest else ""
    if first in WORDS["pronoun_objects"] or not (rest or clause.lemma in WORDS["whole_events"]):
        return None
    core = f"{subject} {_verb(clause, event=True)}" + (f" {rest}" if rest else "")
    said = {"category": "event", "kind": "event", "importance": 0.6, "subject": subject}
    if window is None:
        return MemoryCandidate(summary=said_as_sentence(core), **said)
    said |= {"date_iso": window.start, "time_phrase": window.phrase}
    return MemoryCandidate(summary=f"{span_phrase(window.start, window.end)} {core}.", **said)


def _attribute(clause: Clause, subject: str, ctx: Reading) -> MemoryCandidate | None:
    """A lasting statement about the subject; None for talk or a passing state ("I'm tired")."""
    opinion = grammar.is_verb_of(clause.lemma, "opinion_verbs")
    if not clause.lemma or opinion or (clause.tense == "past" and not clause.copula):
        return None
    rest = _object(clause, ctx, None)
    words = [w.lower().strip(",.!") for w in rest.split()]
    if not words or words[0] in WORDS["pronoun_objects"] or {"you", "your"} & set(words):
        return None
    if clause.copula and not _DETERMINED.search(rest):
        return None
    summary = said_as_sentence(f"{subject} {_verb(clause)} {rest}")
    pet = any(e.phrase == subject and e.kind == "pet" for e in ctx.entities.values())
    category = "pet" if pet else "profile" if subject == ctx.owner else "relationship"
    return MemoryCandidate(category=category, summary=summary, importance=0.55, subject=subject)

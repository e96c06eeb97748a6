"""The offline model's reading of one message into memories: facts and events, with subjects.

`read_message(latest, earlier, speaker, now, timezone)` returns every memory the latest message
states (`MemoryCandidate`s, most important first) and notes on what it set aside:

1. Sentences; a question or a one-off request is set aside whole (a note says which).
2. Each sentence is cut into clauses (`memoir.llm.offline_clauses`); each clause is read:
   - the keyed rules of `memoir.llm.offline_facts` first (name, city, a pet's age, a partner,
     likes, …: facts with deterministic keys that later statements update);
   - else the clause's grammar: its subject (the speaker, "my sister Ngozi", "Luna", "she" →
     the last person or pet named), its verb and tense. A past event verb (went, lost, adopted,
     started, moved, bought, …) is an event, dated by its time phrase resolved against the
     message time (`memoir.memory.timephrases`: "yesterday" in a message of 8 May 2023 is
     2023-05-07); a present statement with an object ("I drive a Prius", "my sister is a
     nurse") is a fact.
   - Words to the listener ("you can do it", "never give up"), opinions about the talk ("I
     think so"), feelings ("I'm so excited"), plans still to come and modal talk are no facts.
3. Summaries name whom they are about: "User" for the user's own message, the speaker's name
   when the message names one ("Maya: …"), "Maya's sister Ngozi", "Maya's dog Luna". Keys of a
   named speaker's facts start with `person:<speaker>:` so two people's facts never merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

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
)
from memoir.llm.offline_facts import (
    PET_KINDS,
    Fact,
    content_words,
    extract_facts,
    sentences,
    strip_lead,
)
from memoir.llm.prompts import USER_SPEAKER
from memoir.memory.schemas import MemoryCandidate
from memoir.memory.speakers import split_speaker
from memoir.memory.timephrases import TimeFilter, span_phrase, time_filter
from memoir.timeparse import find_time_phrases

__all__ = ["Reading", "person_key", "read_message"]

I = re.I  # noqa: E741
MAX_MEMORIES = 6  # per message
MAX_OBJECT_WORDS = 20
EVENT_IMPORTANCE = 0.6
FACT_IMPORTANCE = 0.55

_QUESTION_START = re.compile(
    r"^(?:what|who|whom|whose|where|when|why|how|which|can|could|would|will|do|does|did|is|are|"
    r"am|was|were|should|shall|may|have|has)\b",
    I,
)
_ABOUT_ASSISTANT = re.compile(r"\b(?:you|your|yourself|memory|remember)\b", I)
_REQUEST = re.compile(
    r"^(?:please\s+|pls\s+|kindly\s+)?(?:remind|send|e-?mail|schedule|book|cancel|move|"
    r"reschedule|create|add|delete|remove|set|call(?!\s+me\b)|text|message|find|search|look\s+up|"
    r"check|draft|write|reply|respond|forward|show|list|tell|give|mark|complete|make|get|buy|"
    r"order|open|read|summari[sz]e|translate|plan|invite|help|let'?s|go)\b"
    r"|\bremind\s+me\b|\b(?:i\s+need\s+you\s+to|i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|"
    r"i\s+would\s+like\s+you\s+to)\b",
    I,
)
_STANDING = re.compile(
    r"^(?:please\s+)?(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|always|never|"
    r"don't\s+ever|do\s+not\s+ever)\b"
    r"|^(?!.*\bremind\s+me\b).*\b(?:always|from\s+now\s+on|going\s+forward)\b",
    I,
)
_COMING = re.compile(
    r"\b(?:tomorrow|tonight|next\s+\w+|this\s+(?:morning|afternoon|evening|weekend)|"
    r"appointment|meeting|flight|trip|party|interview|deadline|going\s+to|gonna|will|i'll|"
    r"soon|later)\b",
    I,
)
_PRONOUN_OBJECTS = {"it", "that", "this", "them", "those", "these", "one", "so", "too", "you"}
_DETERMINED = re.compile(
    r"\b(?:a|an|the|my|our|his|her|their|two|three|four|five|six|seven|eight|nine|ten|\d+)\b|"
    r"^(?:from|in|at|into|on|with|for)\s+\S",
    I,
)
_STATUS = re.compile(
    r"^(?:now\s+)?(?:married|single|divorced|engaged|widowed|pregnant|retired|unemployed|vegan|"
    r"vegetarian|pescatarian|diabetic|sober|bilingual|self-employed|left-handed)\b",
    I,
)
# Where an object ends and another clause begins: "…, so everyone is on edge", "… but there
# are no chargers", "…, it was a disaster", "…, by the way".
_OBJECT_END = re.compile(
    r",?\s+(?:so|but|because|though|although|which|while|since|unless|until|whereas)\b|"
    r",\s+(?:and|by\s+the\s+way|anyway|actually|like|as|if|when|it|this|that|there|he|she|"
    r"they|we|i|you)\b|\s+[-–—]\s+",
    I,
)
_DANGLING = {"the", "a", "an", "of", "to", "on", "in", "at", "for", "and", "or", "with", "my"}
_INFINITIVE = re.compile(
    r"\b[Tt]o\s+(?!(?:the|a|an|my|our|his|her|their|this|that|some|work|school|bed|church)\b)"
    r"[a-z]+\b"
)
# Events whole without an object ("I retired", "she graduated", "we got engaged").
_WHOLE_EVENTS = frozenset(
    {"retire", "graduate", "die", "marry", "divorce", "resign", "quit", "recover", "engage"}
)
_FAMILY = r"mum|mom|mother|dad|father|grandma|granny|grandpa|grandad|nana|papa|mama"
_FEELINGS = re.compile(r"^(?:so|really|very|super|pretty|quite|too|a\s+bit|kind\s+of)\b", I)


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
class _Context:
    speaker: str | None
    now: datetime | None
    timezone: str
    entities: dict[str, Entity] = field(default_factory=dict)
    last: Entity | None = None
    names: set[str] = field(default_factory=set)  # lower-case names seen said as names

    @property
    def owner(self) -> str:
        """Whose "my" it is: the named speaker, else the user."""
        return self.speaker or USER_SPEAKER

    def remember(self, entity: Entity) -> None:
        self.entities[entity.name.lower()] = entity
        self.last = entity

    def legacy_entities(self) -> dict[str, tuple[str, str]]:
        """The keyed rules' view: name → ("pet" | "person", kind)."""
        return {k: (e.kind, e.noun or e.kind) for k, e in self.entities.items() if e.noun}


def person_key(key: str | None, speaker: str | None) -> str | None:
    """A named speaker's fact key: profile:city → person:maya:city (the user's keys stay)."""
    if not key or not speaker:
        return key
    slug = re.sub(r"[^a-z0-9]+", "-", speaker.lower()).strip("-")
    rest = key[len("profile:") :] if key.startswith("profile:") else key
    return f"person:{slug}:{rest}"


# ----- the message ---------------------------------------------------------------------------


def read_message(
    latest: str,
    earlier: list[str],
    speaker: str | None,
    now: datetime | None,
    timezone: str = "UTC",
) -> Reading:
    """Every memory of the latest message, and notes on the sentences set aside."""
    ctx = _Context(speaker, now, timezone)
    ctx.names = _names_in([*earlier, latest]) | ({speaker.lower()} if speaker else set())
    for turn in earlier:
        _learn_entities(turn, ctx)
    reading = Reading()
    for raw in sentences(latest):
        _read_sentence(raw, ctx, reading)
    reading.memories = _ranked(reading.memories)[:MAX_MEMORIES]
    return reading


def _names_in(texts: list[str]) -> set[str]:
    """Words written capitalized inside a sentence (not at its start): names as said, and the
    speakers of earlier turns."""
    names: set[str] = set()
    for text in texts:
        who, body = split_speaker(text)
        if who:
            names.add(who.lower())
        for m in re.finditer(r"(?<=[a-z,;:] )([A-Z][a-z]+)\b", body):
            names.add(m.group(1).lower())
    return names


def _ranked(found: list[MemoryCandidate]) -> list[MemoryCandidate]:
    """Most important first; one memory per key and per summary."""
    ranked = sorted(enumerate(found), key=lambda pair: (-pair[1].importance, pair[0]))
    seen: set[str] = set()
    unique: list[MemoryCandidate] = []
    for _i, memory in ranked:
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
    if not sentence:
        return
    quoted = f"“{raw if len(raw) <= 80 else raw[:79] + '…'}”"
    standing = _STANDING.match(sentence) is not None and ctx.speaker is None
    if not standing and (sentence.endswith("?") or _QUESTION_START.match(sentence)):
        about = "about the assistant (meta/capability)" if _ABOUT_ASSISTANT.search(sentence) else ""
        note = f"is a question {about}" if about else "is a question, not a statement of fact"
        reading.notes.append(f"{quoted} {note.strip()}.")
        return
    if not standing and _REQUEST.search(sentence):
        reading.notes.append(f"{quoted} is a one-off request, not a lasting fact.")
        return
    if standing:
        facts = [f for f in extract_facts(sentence) if f.category == "preference"]
        if facts:
            reading.memories.extend(_keyed(f, ctx) for f in facts)
            return
    for text in split_clauses(sentence):
        _read_clause(text, ctx, reading, quoted)


def _read_clause(text: str, ctx: _Context, reading: Reading, quoted: str) -> None:
    clause = parse_clause(text)
    past = clause.tense in ("past", "perfect") and not clause.negated
    timed = not past and _is_timed(clause, ctx)
    keyed = _one_per_thing(extract_facts(text, ctx.legacy_entities(), _last_name(ctx)))
    if ctx.speaker is not None:
        keyed = [f for f in keyed if f.rule != "instruction"]  # said to a person, not to us
    for fact in keyed:
        _entity_of_fact(fact, ctx)
    if timed:
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
    if past and is_event_verb(clause.lemma) and not clause.copula:
        found = _event(clause, subject, ctx)
    else:
        found = _attribute(clause, subject, ctx)
    if found is not None and not _covered(found, facts, clause):
        reading.memories.append(found)


def _one_per_thing(facts: list[Fact]) -> list[Fact]:
    """One fact per thing a clause is about: "my dog Luna is 3" is Luna's age (which says she
    is a dog), not also "has a dog named Luna"; "I love hiking" is one like, not two."""
    kept: dict[str, Fact] = {}
    for fact in facts:  # most important first
        thing = fact.attrs.get("what") or fact.attrs.get("name") or ":".join(fact.slot)
        kept.setdefault(thing.lower(), fact)
    return list(kept.values())


def _is_timed(clause: Clause, ctx: _Context) -> bool:
    """A plan or an appointment: a time phrase ("tomorrow", "in July", "at 5pm") or a future
    marker in a clause that does not tell of the past."""
    text = clause.text
    if find_time_phrases(text) or _COMING.search(text):
        return True
    return ctx.now is not None and time_filter(text, ctx.now, ctx.timezone) is not None


def _covered(found: MemoryCandidate, facts: list[MemoryCandidate], clause: Clause) -> bool:
    """What a keyed fact of the clause already says: "I moved to Porto" → lives in Porto, "my
    dog Luna is 3" → Luna's age (a dated event always adds its date)."""
    if found.date_iso is not None or not facts:
        return False
    said = set().union(*(content_words(f.summary) for f in facts))
    return content_words(clause.rest) <= said


def _last_name(ctx: _Context) -> str | None:
    return ctx.last.name if ctx.last else None


# ----- subjects ------------------------------------------------------------------------------


def _entity_of_fact(fact: Fact, ctx: _Context) -> None:
    name = fact.attrs.get("name")
    if not name or fact.rule == "name":
        return
    kind = "pet" if fact.rule in ("pet", "pet age") else "person"
    noun = fact.attrs.get("relation") or fact.attrs.get("kind") or ""
    phrase = f"{_possessive(ctx.owner)} {noun} {name}" if noun else name
    ctx.remember(Entity(name, phrase, kind, noun))


def _possessive(owner: str) -> str:
    return f"{owner}'s"


def _subject_phrase(clause: Clause, ctx: _Context) -> str | None:
    """Whom the clause is about, in words; None when it is about no one to remember."""
    subject = clause.subject
    if subject.kind in ("speaker", "group"):
        return f"{ctx.owner} and {subject.partner}" if subject.partner else ctx.owner
    if subject.kind == "possessed":
        return _possessed_phrase(clause, ctx)
    if subject.kind == "name":
        base = _named_phrase(clause, ctx)
    elif subject.kind == "pronoun" and ctx.last is not None and subject.text != "they":
        base = ctx.last.phrase  # "she", "he": the last person or pet named
    else:
        return None
    if base is None:
        return None
    return f"{base} and {subject.partner}" if subject.partner else base


def _possessed_phrase(clause: Clause, ctx: _Context) -> str:
    """ "my sister Ngozi" → "Maya's sister Ngozi" (and remembered); "Carmen's highlight"."""
    subject = clause.subject
    named = f" {subject.name}" if subject.name else ""
    phrase = f"{_possessive(subject.owner or ctx.owner)} {subject.noun}{named}"
    if subject.name:
        noun = subject.noun.split()[-1]
        kind = "pet" if re.fullmatch(PET_KINDS, noun, I) else "person"
        ctx.remember(Entity(subject.name, phrase, kind, noun))
    return phrase


def _named_phrase(clause: Clause, ctx: _Context) -> str | None:
    """A name as a subject: a known person or pet; "Mum" is the speaker's; an unknown name
    before a word that may be a plural noun ("Sea otters …") is no subject."""
    name = clause.subject.name
    if re.fullmatch(_FAMILY, name, I):
        return f"{_possessive(ctx.owner)} {name.lower()}"
    known = ctx.entities.get(name.lower())
    if known is None:
        first = clause.verb_phrase.split()[0] if clause.verb_phrase else ""
        if name.lower() not in ctx.names and not is_strong_verb(first):
            return None
        known = Entity(name, name, "person")
    ctx.remember(known)
    return known.phrase


def _swap_person(text: str, ctx: _Context, subject_is_owner: bool) -> str:
    """First-person words of the object said about their owner: my → their / Maya's."""
    owner = ctx.owner
    mine = "their" if subject_is_owner else _possessive(owner)
    swaps = {
        "my": mine,
        "our": mine,
        "mine": _possessive(owner) if not subject_is_owner else "theirs",
        "me": "them" if subject_is_owner else owner,
        "us": "them" if subject_is_owner else owner,
        "i": "they" if subject_is_owner else owner,
        "myself": "themselves",
        "we": "they",
    }
    return re.sub(
        r"\b(?:my|our|mine|me|us|i|myself|we)\b",
        lambda m: swaps[m.group(0).lower()],
        text,
        flags=I,
    )


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
        for i, word in enumerate(words):
            if not is_adverb(word):
                words[i] = third_person_verb(word)
                break
    return " ".join(words)


# ----- memories ------------------------------------------------------------------------------


def _keyed(fact: Fact, ctx: _Context) -> MemoryCandidate:
    summary = fact.summary
    if ctx.speaker:
        summary = re.sub(r"^User's\b", _possessive(ctx.speaker), summary)
        summary = re.sub(r"^User\b", ctx.speaker, summary)
    return MemoryCandidate(
        category=fact.category,
        summary=summary,
        importance=fact.importance,
        key=person_key(fact.key, ctx.speaker),
        subject=ctx.owner,
    )


def _object(clause: Clause, ctx: _Context, window: TimeFilter | None) -> str:
    """What follows the verb, up to where another clause starts, without the event's time
    phrase, its first-person words said of their owner."""
    text = _OBJECT_END.split(clause.rest, maxsplit=1)[0]
    if window is not None:
        phrase = re.escape(window.phrase)
        text = re.sub(
            rf"(?:\s*,)?\s*(?:\b(?:on|in|at|during|since|from|by)\s+)?(?:the\s+)?{phrase}",
            "",
            text,
            count=1,
            flags=I,
        )
    words = re.sub(r"\s+", " ", text).strip(" ,;:-").split()
    if len(words) > MAX_OBJECT_WORDS:
        words = words[:MAX_OBJECT_WORDS]
    while words and words[-1].lower().strip(",") in _DANGLING:
        words.pop()
    owner_is_subject = clause.subject.kind in ("speaker", "group")
    return _swap_person(" ".join(words).strip(" ,"), ctx, owner_is_subject)


def _event_window(clause: Clause, ctx: _Context) -> TimeFilter | None:
    """When the event happened: its time phrase against the message time ("just": that day);
    a phrase inside a plan ("decided to move in March") dates the plan, not the event."""
    if ctx.now is None:
        return None
    window = time_filter(clause.text, ctx.now, ctx.timezone)
    if window is not None:
        plan = _INFINITIVE.search(clause.rest)
        where = clause.rest.lower().find(window.phrase.lower())
        if plan is not None and where > plan.start():
            return None
        return window
    if re.search(r"\bjust\b", clause.verb_phrase, I):
        return time_filter("today", ctx.now, ctx.timezone)
    return None


def _event(clause: Clause, subject: str, ctx: _Context) -> MemoryCandidate | None:
    window = _event_window(clause, ctx)
    rest = _object(clause, ctx, window)
    first = rest.split()[0].lower() if rest else ""
    if (not rest and clause.lemma not in _WHOLE_EVENTS) or first in _PRONOUN_OBJECTS:
        return None  # "Ada decided.", "I adopted one": nothing said of what happened
    core = f"{subject} {_verb(clause, event=True)}" + (f" {rest}" if rest else "")
    if window is not None:
        summary = f"{span_phrase(window.start, window.end)} {core}."
    else:
        summary = f"{core[:1].upper()}{core[1:]}."
    return MemoryCandidate(
        category="event",
        summary=summary,
        importance=EVENT_IMPORTANCE,
        subject=subject,
        kind="event",
        date_iso=window.start if window else None,
        time_phrase=window.phrase if window else None,
    )


def _attribute(clause: Clause, subject: str, ctx: _Context) -> MemoryCandidate | None:
    """A stable statement about the subject, or None (opinions, feelings, pronoun objects)."""
    if not clause.lemma or is_opinion_verb(clause.lemma):
        return None
    if clause.tense == "past" and not clause.copula:
        return None  # a past act that is no event ("I said", "I had a great time")
    rest = _object(clause, ctx, None)
    words = [w.lower().strip(",.!") for w in rest.split()]
    if not words or words[0] in _PRONOUN_OBJECTS or any(w in ("you", "your") for w in words):
        return None
    if clause.copula and not (_DETERMINED.search(rest) or _STATUS.match(rest)):
        return None  # "I'm so tired", "she's great": a feeling or a passing state
    if _FEELINGS.match(rest) and not _STATUS.match(rest):
        return None
    core = f"{subject} {_verb(clause)} {rest}"
    category = "profile" if subject == ctx.owner else "relationship"
    category = "pet" if _is_pet(subject, ctx) else category
    return MemoryCandidate(
        category=category,
        summary=f"{core[:1].upper()}{core[1:]}.",
        importance=FACT_IMPORTANCE,
        subject=subject,
    )


def _is_pet(subject: str, ctx: _Context) -> bool:
    return any(e.phrase == subject and e.kind == "pet" for e in ctx.entities.values())

"""The offline extractor (seeds 001, 003): the memory engine's model calls answered from the
fields of their typed requests (`memoir.memory.requests`), each answer saying what decided: the
gate and the extraction read the message (`offline_extract`); same fact and compose read both
summaries back (`offline_facts`); the episode's topic follows memory_episodes.yaml, the profile
fields the `profile` table of memory_facts.yaml.
"""

from __future__ import annotations

import re

from memoir.embeddings import Embedder
from memoir.llm import tables
from memoir.llm.offline_clauses import WORDS, known_verb, parse_clause
from memoir.llm.offline_extract import Reading, read_message
from memoir.llm.offline_facts import FACTS, PERSON, content_words, read_summary, render, rules
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
from memoir.text import one_line, second_person
from memoir.timeparse import strip_when

_READ: dict[tuple[str, int], Reading] = {}


def _reading(request: TurnMemoryRequest, embedder: Embedder) -> Reading:
    """The message read once for the gate and the extraction that follows it."""
    key = (request.model_dump_json(), id(embedder))
    if key not in _READ:
        _READ.clear()  # only the last message is asked about twice
        _READ[key] = read_message(request, embedder)
    return _READ[key]


def gate_offline(request: TurnMemoryRequest, embedder: Embedder) -> HotpathDecision:
    """Create when a clause of the latest message states a fact or tells of a past event."""
    reading = _reading(request, embedder)
    steps = list(reading.notes)
    if count := len(reading.memories):
        said = "; ".join(f"“{m.summary}”" for m in reading.memories[:3])
        steps.append(f"It states {count} memory(ies) worth keeping ({said}): create.")
    else:
        steps = steps or ["The message states no stable fact, preference, goal or relationship."]
        steps.append("Do not create.")
    return HotpathDecision(reasoning=" ".join(steps), should_create=bool(reading.memories))


def extraction_offline(request: TurnMemoryRequest, embedder: Embedder) -> MemoryExtraction:
    """Every fact and event of the latest message, most important first."""
    reading = _reading(request, embedder)
    why = " ".join(reading.notes) or "Each clause was read for facts and events."
    return MemoryExtraction(reasoning=why, memories=reading.memories)


def same_fact_offline(request: SameFactRequest, embedder: Embedder) -> SameFact:
    """Same key, or same entity and attribute, or the same words: the same fact."""
    old, new = request.existing, request.candidate
    if old.key and new.key:
        same = old.key == new.key
        why = f"Both have the key {new.key}" if same else f"Different keys ({old.key} vs {new.key})"
        return SameFact(reasoning=f"{why}.", same_fact=same)
    old_fact, new_fact = read_summary(old.summary, old.key), read_summary(new.summary, new.key)
    if old_fact and new_fact:
        same = old_fact.slot == new_fact.slot
        verdict = "the same" if same else "different"
        why = f"Existing is about {old_fact.describe()}, candidate about {new_fact.describe()}"
        return SameFact(reasoning=f"{why}: {verdict} entity and attribute.", same_fact=same)
    old_words, new_words = content_words(old.summary), content_words(new.summary)
    if old_words and new_words and (old_words <= new_words or new_words <= old_words):
        return SameFact(reasoning="One summary says everything the other says.", same_fact=True)
    why = "They name no common entity and attribute, and say different things."
    return SameFact(reasoning=why, same_fact=False)


def compose_offline(request: ComposeRequest, embedder: Embedder) -> ComposedSummary:
    """The newer fact wins; the older one's details it does not contradict are kept."""
    old, new = request.existing, request.new
    person = next((m[1] for k in (new.key, old.key) if (m := re.match(PERSON, k or ""))), None)
    old_fact = read_summary(old.summary, old.key, person)
    new_fact = read_summary(new.summary, new.key, person)
    if old_fact and new_fact and old_fact.slot == new_fact.slot:
        merged = {**old_fact.attrs, **new_fact.attrs}
        why = f"Same {new_fact.describe()}: the newer memory wins"
        if new_fact.attrs.get("kind") == "pet" and old_fact.attrs.get("kind"):  # "it turned 4"
            merged["kind"] = old_fact.attrs["kind"]
            why += f", keeping the older kind {merged['kind']}"
        rule = next(r for r in rules() if r.name == new_fact.rule)
        summary = render(rule.spec["says"], merged)
        said = re.match(rf"^({re.escape(person)})\b", new.summary, re.I) if person else None
        summary = re.sub(r"^User\b", said[1], summary, flags=re.I) if summary and said else summary
        return ComposedSummary(reasoning=f"{why}.", summary=summary or new.summary)
    if content_words(old.summary) > content_words(new.summary):
        why = "The older memory already says all of the newer one, with more detail."
        return ComposedSummary(reasoning=why, summary=old.summary)
    why = "The newer memory replaces the older one (newer wins on conflict)."
    return ComposedSummary(reasoning=why, summary=new.summary or old.summary)


# ----- episodic ----------------------------------------------------------------------------------


def _verb_first(word: str, text: str) -> bool:
    """Whether a request opens with a verb and has no subject ("book the dentist"; not "Dan,
    the book club was fun")."""
    return known_verb(word) and not parse_clause(text).verb_phrase


def _topic(request: EpisodeRequest, recall: bool) -> str:
    """What the request was about, said to the user: "a reminder to call your mom"."""
    if request.email is not None:
        return f"the email “{request.email.subject}” from {request.email.author}"
    table = tables.table("memory_episodes")
    _speaker, text = split_speaker(one_line(request.request.strip(), 400))
    text = re.sub(table["polite"], "", text, flags=re.I).rstrip(" ?.!")
    plain = second_person(strip_when(text)).strip(" ,.")  # said back, without its time
    for topic in table["recap" if recall else "topics"]:
        m = re.match(topic["when"], plain, re.I)
        if m and (not topic.get("bare verb") or _verb_first(m["verb"], text)):
            return render(topic["says"], m.groupdict()) or topic["says"]
    return str(table["otherwise"])


def episodic_offline(request: EpisodeRequest, embedder: Embedder) -> EpisodicSummary:
    """Topic from the request; approach, why and whether notable by the turn's outcome."""
    reply = one_line(request.reply, 200)
    recall = request.email is None and asks_for_recap(request.request)
    failed = "tried but failed: "
    done = [f"{'' if a.ok else failed}{a.text.strip().rstrip('.')}" for a in request.actions]
    case = "done" if done else ("recap" if reply else "no recap") if recall else "routine"
    outcome = tables.table("memory_episodes")["outcomes"][case]
    words = {"done": "; ".join(done), "count": str(len(done)), "reply": reply}
    words["status"] = request.status or "unknown"
    topic, why = _topic(request, recall), render(outcome["why"], words)
    return EpisodicSummary(
        reasoning=f"The request is about {topic}. {why}",
        topic=topic,
        approach=render(outcome["approach"], words) or "",
        notable=case in ("done", "recap"),
    )


# ----- profile -----------------------------------------------------------------------------------


def profile_update_offline(request: ProfileRequest, embedder: Embedder) -> ProfileUpdate:
    """The profile field one memory implies, only where it differs from the current profile."""
    current, memory = request.profile, request.memory
    fact = read_summary(memory.summary, memory.key)
    nothing = ProfileUpdate(reasoning="The memory implies no profile field.", changes={})
    if fact is None:
        return nothing
    key, what = fact.key or memory.key or "", fact.attrs.get("what", "")
    for entry in FACTS["profile"]:
        if key in entry["keys"] and (said := fact.attrs.get(entry["slot"])):
            values = WORDS[entry["codes"]] if "codes" in entry else entry.get("values", {})
            field, value = entry["field"], values.get(said.lower(), said)
            same = str(current.get(field) or "").lower() == value.lower()
            why = entry["why"] + (" The profile already says so: no change." if same else "")
            return ProfileUpdate(reasoning=why, changes={} if same else {field: value})
    field = FACTS["profile_lists"].get(memory.category or fact.category)
    if not field or not what:
        return nothing
    items = list(current.get(field) or [])
    known = any(item.lower() == what.lower() for item in items)
    why = f"The memory is a {field[:-1]}: add it to {field}."
    return ProfileUpdate(reasoning=why, changes={} if known else {field: [*items, what]})

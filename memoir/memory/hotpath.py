"""Stage 2, the semantic hot path (seeds 001, 003): create, merge or skip semantic memories.

1. The last 2–3 user turns go to the gate (`HotpathDecision`), with the latest message's
   speaker (a transcript line "Maya: …" names one; else the user) and its time; no → only the
   profile line.
2. The extraction (`MemoryExtraction`): every fact and past event the message states, each a
   `MemoryCandidate` (category, summary naming whom it is about, importance, deterministic key,
   subject, kind, the event's date resolved against the message time). Steps 3–5 run for each.
3. Its neighbour: the memory with the same key, else a vector search in the same user and
   category (top `MEMORY_MERGE_TOPK`); an event never merges into an event of another date.
4. Bands: best score ≥ `MEMORY_MERGE_AUTO_UPDATE` → merge; else neighbours ≥
   `MEMORY_MERGE_CHECK_LOW` go to the same-fact classifier in order, first match wins → merge;
   else create when importance ≥ `MEMORY_SEMANTIC_MIN_IMPORTANCE`, else skip.
5. Merge (`MEMORY_MERGE_MODE`): `recreate` composes a summary and writes a new memory with the
   merged provenance, then deletes the old; `update` changes it in place. Every change is
   re-embedded and verified (`last_verified_at`). Never episodic here.
6. A created or merged fact about the user syncs the profile (never an event, never another
   person's fact); the profile line comes back every turn.

When nothing is written, the cost after the gate and the extraction is one batch of embeddings
and one vector query per candidate: no classifier (nothing close enough), no composing, no profile
sync. The turn's action is the strongest of its candidates' (update, create, skip).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from langchain_core.language_models import BaseChatModel

from memoir.embeddings import Embedder
from memoir.llm.offline_memory import (
    compose_offline,
    extraction_offline,
    gate_offline,
    same_fact_offline,
)
from memoir.llm.prompts import USER_SPEAKER
from memoir.memory.events import (
    MEMORY_CREATE,
    MEMORY_DECIDE,
    MEMORY_MATCH,
    MEMORY_SEARCH,
    MEMORY_UPDATE,
    EventLog,
)
from memoir.memory.llm_calls import (
    ask,
    compose_messages,
    embed_many,
    embed_one,
    extraction_messages,
    gate_messages,
    same_fact_messages,
    stable_memory_id,
)
from memoir.memory.models import Memory, MemoryKind
from memoir.memory.profile_sync import sync_profile
from memoir.memory.requests import (
    ComposeRequest,
    MemoryFields,
    SameFactRequest,
    TurnMemoryRequest,
)
from memoir.memory.schemas import (
    ComposedSummary,
    HotpathDecision,
    MemoryCandidate,
    MemoryExtraction,
    SameFact,
)
from memoir.memory.speakers import message_speaker
from memoir.memory.timephrases import time_filter
from memoir.models import Channel, TurnRequest
from memoir.settings import Settings
from memoir.stores.memories import UNSET, DuplicateMemoryKeyError, MemoryStore
from memoir.stores.user_context import UserContextStore, profile_line
from memoir.text import one_line

__all__ = [
    "MAX_CANDIDATES",
    "Band",
    "HotpathResult",
    "Match",
    "Outcome",
    "find_match",
    "memory_fields",
    "memory_hotpath",
    "normalized",
    "score_band",
    "user_turns",
]

USER_TURNS = 3  # the latest message and up to two earlier user turns
MAX_CANDIDATES = 6  # memories one message may write
EVENT_CATEGORY = "event"

Band = Literal["auto_update", "check", "below"]
Action = Literal["none", "skip", "create", "update"]


@dataclass(frozen=True)
class Match:
    """The existing memory a candidate states again, and how that was decided."""

    memory: Memory
    by: Literal["key", "auto_update", "same_fact"]
    score: float | None = None
    reasoning: str = ""


@dataclass
class Outcome:
    """What became of one candidate: skip, create or update, the memory written, its match."""

    action: Literal["skip", "create", "update"]
    candidate: MemoryCandidate
    memory: Memory | None = None
    replaced: Memory | None = None
    match: Match | None = None
    reason: str = ""


_STRENGTH = {"update": 3, "create": 2, "skip": 1}


@dataclass
class HotpathResult:
    """What the hot path did: the action (the strongest of its candidates': update, create,
    skip; none when the gate said no), the first memory written and the one it replaced, every
    candidate's outcome, and the profile line."""

    action: Action
    profile_line: str
    memory: Memory | None = None
    replaced: Memory | None = None
    match: Match | None = None
    reason: str = ""
    events: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def memories(self) -> list[Memory]:
        """Every memory written (created or updated), in candidate order."""
        return [o.memory for o in self.outcomes if o.memory is not None]

    @classmethod
    def of(cls, outcomes: list[Outcome]) -> HotpathResult:
        """The result of several candidates' outcomes."""
        if not outcomes:
            return cls("skip", "", reason="no valid candidate", outcomes=[])
        best = max(outcomes, key=lambda o: _STRENGTH[o.action])
        reason = "; ".join(f"{o.action}: {o.reason}" for o in outcomes)
        return cls(
            best.action,
            "",
            memory=best.memory,
            replaced=best.replaced,
            match=best.match,
            reason=reason,
            outcomes=outcomes,
        )


def score_band(score: float, *, auto_update: float, check_low: float) -> Band:
    """Which band a neighbour's similarity falls in."""
    if score >= auto_update:
        return "auto_update"
    if score >= check_low:
        return "check"
    return "below"


def user_turns(turn: TurnRequest, count: int = USER_TURNS) -> tuple[list[str], str]:
    """(earlier user turns, oldest first, at most count-1; the latest message)."""
    latest = turn.message.text.strip()
    earlier = [m.content.strip() for m in turn.context.recent_messages if m.role == "user"]
    if earlier and earlier[-1] == latest:
        earlier.pop()  # the context already holds this message
    return earlier[-(count - 1) :] if count > 1 else [], latest


SameFactCheck = Callable[[Memory], Awaitable[SameFact | None]]


def normalized(candidate: MemoryCandidate, now: datetime, timezone: str) -> MemoryCandidate | None:
    """A candidate fit to write: one line, a lower-case key, an event dated (its time phrase
    resolved against the message time when the model left the date out) and never keyed."""
    summary = one_line(candidate.summary, 500)
    if not summary:
        return None
    key = (candidate.key or "").strip().lower() or None
    update: dict[str, object] = {"summary": summary, "key": key}
    if candidate.kind == "event":
        update["key"] = None
        update["category"] = EVENT_CATEGORY
        if candidate.date_iso is None and candidate.time_phrase:
            window = time_filter(candidate.time_phrase, now, timezone)
            update["date_iso"] = window.start if window else None
    return candidate.model_copy(update=update)


def memory_fields(memory: Memory | MemoryCandidate) -> MemoryFields:
    """A stored memory or a candidate as the same-fact, compose and profile requests show it."""
    return MemoryFields(key=memory.key, category=memory.category, summary=memory.summary)


async def find_match(
    candidate: MemoryCandidate,
    hits: Sequence[tuple[Memory, float]],
    settings: Settings,
    same_fact: SameFactCheck,
    log: EventLog,
) -> Match | None:
    """The bands over neighbours (best first): auto-update, else the classifier, first wins."""
    auto, low = settings.memory_merge_auto_update, settings.memory_merge_check_low
    eligible = []
    for memory, score in hits:
        if candidate.key and memory.key and memory.key != candidate.key:
            continue  # another deterministic key: another fact, never merged
        if candidate.date_iso and memory.date_iso and memory.date_iso != candidate.date_iso:
            continue  # an event of another day: another event, never merged
        eligible.append((memory, score))
    if eligible and score_band(eligible[0][1], auto_update=auto, check_low=low) == "auto_update":
        memory, score = eligible[0]
        return Match(memory, "auto_update", score, f"similarity {score:.3f} ≥ {auto:.2f}")
    for memory, score in eligible[: settings.memory_merge_topk]:
        if score_band(score, auto_update=auto, check_low=low) == "below":
            break
        verdict = await same_fact(memory)
        same = verdict is not None and verdict.same_fact
        log.emit(
            MEMORY_MATCH,
            stage="same_fact",
            memory_id=memory.memory_id,
            score=score,
            same_fact=same,
            reasoning=verdict.reasoning if verdict else "no valid answer",
        )
        if same:
            assert verdict is not None
            return Match(memory, "same_fact", score, verdict.reasoning)
    return None


async def memory_hotpath(
    turn: TurnRequest,
    *,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    contexts: UserContextStore,
    now: datetime | None = None,
) -> HotpathResult:
    """Stage 2 for one turn: gate, extraction, and for each candidate neighbours, bands, merge
    or create; the profile line."""
    user_id = turn.message.user_id
    at = now or turn.context.now
    log = EventLog(user_id, turn.turn_id)
    result = await _decide(turn, settings, llm, embedder, memories, log, at)
    ctx = None
    for outcome in result.outcomes:
        if outcome.memory is not None and _about_the_user(outcome.candidate):
            ctx = await sync_profile(llm, contexts, outcome.memory, log)
    result.profile_line = profile_line(ctx if ctx is not None else await contexts.get(user_id))
    result.events = list(log.names)
    return result


def _about_the_user(candidate: MemoryCandidate) -> bool:
    """A fact about the user themself (the profile's business): not an event, not someone else."""
    subject = candidate.subject.strip().lower()
    return candidate.kind == "fact" and subject in ("", USER_SPEAKER.lower(), "the user")


@dataclass(frozen=True)
class _Turn:
    """What every candidate of one turn shares."""

    turn: TurnRequest
    settings: Settings
    llm: BaseChatModel
    embedder: Embedder
    memories: MemoryStore
    log: EventLog
    now: datetime


async def _decide(
    turn: TurnRequest,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    log: EventLog,
    now: datetime,
) -> HotpathResult:
    """Everything of stage 2 but the profile: gate, extraction, and each candidate placed."""
    if turn.message.channel is Channel.EMAIL:
        reason = "an email's text is its sender's, not the user's: no semantic memory"
        log.emit(MEMORY_DECIDE, stage="gate", should_create=False, reasoning=reason)
        return HotpathResult("none", "", reason=reason)
    earlier, _latest = user_turns(turn)
    speaker, text = message_speaker(turn.message)
    timezone = turn.context.user.timezone
    request = TurnMemoryRequest(
        message=text, earlier=earlier, speaker=speaker, now=now, timezone=timezone
    )
    gate = await ask(llm, HotpathDecision, request, render=gate_messages, offline=gate_offline)
    should = gate is not None and gate.should_create
    why = gate.reasoning if gate else "no valid answer from the gate"
    log.emit(MEMORY_DECIDE, stage="gate", should_create=should, reasoning=why)
    if not should:
        return HotpathResult("none", "", reason=why)
    extraction = await ask(
        llm, MemoryExtraction, request, render=extraction_messages, offline=extraction_offline
    )
    found = extraction.memories if extraction is not None else []
    candidates = [c for c in (normalized(c, now, timezone) for c in found) if c is not None]
    candidates = candidates[:MAX_CANDIDATES]
    log.emit(
        MEMORY_DECIDE,
        stage="extract",
        candidates=len(candidates),
        reasoning=one_line(extraction.reasoning, 300) if extraction else "no valid answer",
    )
    if not candidates:
        reason = "no valid candidate"
        log.emit(MEMORY_DECIDE, stage="candidate", decision="skip", reason=reason)
        return HotpathResult("skip", "", reason=reason)
    shared = _Turn(turn, settings, llm, embedder, memories, log, now)
    vectors = await embed_many(embedder, [c.summary for c in candidates])  # one batch
    outcomes = [
        await _place(shared, c, i, vector)
        for i, (c, vector) in enumerate(zip(candidates, vectors, strict=True))
    ]
    return HotpathResult.of(outcomes)


async def _place(
    t: _Turn, candidate: MemoryCandidate, index: int, embedding: list[float]
) -> Outcome:
    """One candidate: its neighbour (same key, else the bands over a vector search), then
    merge, create or skip."""
    user_id = t.turn.message.user_id
    match: Match | None = None
    if candidate.key:
        existing = await t.memories.by_key(user_id, candidate.key)
        if existing is not None and existing.kind is MemoryKind.SEMANTIC:
            match = Match(existing, "key", None, f"same deterministic key {candidate.key}")
    if match is None:
        hits = await t.memories.search(
            user_id,
            embedding,
            kind=MemoryKind.SEMANTIC,
            top_k=t.settings.memory_merge_topk,
            filter={"category": candidate.category},
        )
        t.log.emit(
            MEMORY_SEARCH,
            category=candidate.category,
            key=candidate.key,
            top_k=t.settings.memory_merge_topk,
            hits=[(m.memory_id, round(s, 3)) for m, s in hits],
        )

        async def same_fact(memory: Memory) -> SameFact | None:
            """The classifier's verdict on one neighbour."""
            question = SameFactRequest(
                existing=memory_fields(memory), candidate=memory_fields(candidate)
            )
            return await ask(
                t.llm, SameFact, question, render=same_fact_messages, offline=same_fact_offline
            )

        match = await find_match(candidate, hits, t.settings, same_fact, t.log)
    if match is not None:
        t.log.emit(
            MEMORY_MATCH,
            stage="decided",
            memory_id=match.memory.memory_id,
            by=match.by,
            score=match.score,
            reasoning=match.reasoning,
        )
        return await _merge(t, candidate, match)
    minimum = t.settings.memory_semantic_min_importance
    if candidate.importance < minimum:
        reason = f"importance {candidate.importance:.2f} < {minimum:.2f} and no fact to update"
        t.log.emit(MEMORY_DECIDE, stage="final", decision="skip", reason=reason)
        return Outcome("skip", candidate, reason=reason)
    return await _create(t, candidate, index, embedding)


def _new_memory(t: _Turn, candidate: MemoryCandidate, index: int) -> Memory:
    """The memory a candidate becomes: provenance, and an event's date bucket."""
    parts = (t.turn.turn_id, "semantic", "create") + ((str(index),) if index else ())
    day = candidate.date_iso
    iso = day.isocalendar() if day else None
    details = {
        "subject": candidate.subject,
        "kind": candidate.kind,
        "time_phrase": candidate.time_phrase,
    }
    return Memory(
        memory_id=stable_memory_id(*parts),
        user_id=t.turn.message.user_id,
        kind=MemoryKind.SEMANTIC,
        category=candidate.category,
        summary=candidate.summary,
        importance=candidate.importance,
        key=candidate.key,
        source_message_ids=[t.turn.message.message_id],
        created_at=t.now,
        updated_at=t.now,
        last_verified_at=t.now,
        date_iso=day,
        week=iso.week if iso else None,
        year=iso.year if iso else None,
        metadata={k: v for k, v in details.items() if v},
    )


async def _create(
    t: _Turn, candidate: MemoryCandidate, index: int, embedding: list[float]
) -> Outcome:
    memory = _new_memory(t, candidate, index)
    try:
        stored = await t.memories.add(memory, embedding)
    except DuplicateMemoryKeyError:
        # Another turn wrote this key in the meantime: that memory is the one to update.
        existing = await t.memories.by_key(memory.user_id, candidate.key or "")
        if existing is None:
            raise
        match = Match(existing, "key", None, f"same deterministic key {candidate.key} (race)")
        return await _merge(t, candidate, match)
    t.log.emit(
        MEMORY_CREATE,
        memory_id=stored.memory_id,
        category=stored.category,
        key=stored.key,
        importance=stored.importance,
        summary=stored.summary,
    )
    reason = "a new event" if candidate.kind == "event" else "a new fact"
    return Outcome("create", candidate, memory=stored, reason=reason)


async def _compose(llm: BaseChatModel, existing: Memory, candidate: MemoryCandidate) -> str:
    """The merged summary (newer wins on conflict); the candidate's when the answer is invalid."""
    request = ComposeRequest(existing=memory_fields(existing), new=memory_fields(candidate))
    composed = await ask(
        llm, ComposedSummary, request, render=compose_messages, offline=compose_offline
    )
    text = one_line(composed.summary, 500) if composed else ""
    return text or candidate.summary


async def _merge(t: _Turn, candidate: MemoryCandidate, match: Match) -> Outcome:
    """Merge the candidate into the matched memory, by `MEMORY_MERGE_MODE`."""
    old, message_id, now = match.memory, t.turn.message.message_id, t.now
    summary = await _compose(t.llm, old, candidate)
    key = candidate.key or old.key
    importance = max(old.importance, candidate.importance)
    embedding = await embed_one(t.embedder, summary)
    mode = t.settings.memory_merge_mode
    if mode == "update":
        updated = await t.memories.update(
            old.user_id,
            old.memory_id,
            summary=summary,
            embedding=embedding,
            importance=importance,
            key=key if key != old.key else UNSET,
            source_message_ids=[message_id],
            last_verified_at=now,
        )
        if updated is None:  # deleted meanwhile
            raise LookupError(f"memory {old.memory_id} vanished during the merge")
        new, replaced = updated, None
    else:
        merged = Memory(
            memory_id=stable_memory_id(t.turn.turn_id, "semantic", "recreate", old.memory_id),
            user_id=old.user_id,
            kind=MemoryKind.SEMANTIC,
            category=old.category,
            summary=summary,
            importance=importance,
            key=key,
            pinned=old.pinned,
            source_message_ids=list(dict.fromkeys([*old.source_message_ids, message_id])),
            created_at=old.created_at,
            updated_at=now,
            last_verified_at=now,
            date_iso=old.date_iso,
            week=old.week,
            year=old.year,
            metadata={**old.metadata, "replaces": old.memory_id},
        )
        new = await t.memories.replace(old, merged, embedding)  # one step: old out, new in
        replaced = old
    t.log.emit(
        MEMORY_UPDATE,
        mode=mode,
        memory_id=new.memory_id,
        replaced_id=old.memory_id if replaced else None,
        by=match.by,
        key=new.key,
        summary=new.summary,
        previous=old.summary,
    )
    return Outcome("update", candidate, memory=new, replaced=replaced, match=match, reason=match.by)

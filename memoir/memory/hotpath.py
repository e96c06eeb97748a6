"""Stage 2, the semantic hot path (seeds 001, 003): create, merge or skip one semantic memory.

1. The last 2–3 user turns go to the gate (`HotpathDecision`); no → only the profile line.
2. A candidate (`MemoryCandidate`): category, summary, importance, deterministic key.
3. Its neighbour: the memory with the same key, else a vector search in the same user and
   category (top `MEMORY_MERGE_TOPK`).
4. Bands: best score ≥ `MEMORY_MERGE_AUTO_UPDATE` → merge; else neighbours ≥
   `MEMORY_MERGE_CHECK_LOW` go to the same-fact classifier in order, first match wins → merge;
   else create when importance ≥ `MEMORY_SEMANTIC_MIN_IMPORTANCE`, else skip.
5. Merge (`MEMORY_MERGE_MODE`): `recreate` composes a summary and writes a new memory with the
   merged provenance, then deletes the old; `update` changes it in place. Every change is
   re-embedded and verified (`last_verified_at`). Never episodic here.
6. A created or merged memory syncs the profile; the profile line comes back every turn.

When nothing is written, the cost after the gate and the candidate is one embedding and one
vector query: no classifier (nothing close enough), no composing, no profile sync.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from memoir.embeddings import Embedder
from memoir.llm.prompts import (
    COMPOSE_SYSTEM_PROMPT,
    COMPOSE_USER_PROMPT,
    MEMORY_CANDIDATE_SYSTEM_PROMPT,
    MEMORY_GATE_SYSTEM_PROMPT,
    MEMORY_TURNS_PROMPT,
    SAME_FACT_SYSTEM_PROMPT,
    SAME_FACT_USER_PROMPT,
    one_line,
    render_memory_fields,
    render_user_turns,
)
from memoir.memory.events import (
    MEMORY_CREATE,
    MEMORY_DECIDE,
    MEMORY_MATCH,
    MEMORY_SEARCH,
    MEMORY_UPDATE,
    EventLog,
)
from memoir.memory.llm_calls import ask, embed_one, prompt, stable_memory_id
from memoir.memory.models import Memory, MemoryKind
from memoir.memory.profile_sync import sync_profile
from memoir.memory.schemas import ComposedSummary, HotpathDecision, MemoryCandidate, SameFact
from memoir.models import Channel, TurnRequest
from memoir.settings import Settings
from memoir.stores.memories import UNSET, DuplicateMemoryKeyError, MemoryStore
from memoir.stores.user_context import UserContextStore, profile_line

__all__ = [
    "Band",
    "HotpathResult",
    "Match",
    "compose_messages",
    "find_match",
    "gate_messages",
    "memory_hotpath",
    "same_fact_messages",
    "score_band",
    "user_turns",
]

USER_TURNS = 3  # the latest message and up to two earlier user turns

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
class HotpathResult:
    """What the hot path did: the action, the memory written, the one it replaced, the line."""

    action: Action
    profile_line: str
    memory: Memory | None = None
    replaced: Memory | None = None
    match: Match | None = None
    reason: str = ""
    events: list[str] = field(default_factory=list)


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


def gate_messages(system: str, earlier: Sequence[str], latest: str) -> list[BaseMessage]:
    """The gate's (or the candidate's, with its system prompt) messages for the user turns."""
    return prompt(
        system, MEMORY_TURNS_PROMPT.format(earlier=render_user_turns(earlier), message=latest)
    )


def same_fact_messages(existing: Memory, candidate: MemoryCandidate) -> list[BaseMessage]:
    """The same-fact classifier's messages for one neighbour."""
    human = SAME_FACT_USER_PROMPT.format(
        existing=render_memory_fields(existing.key, existing.category, existing.summary),
        candidate=render_memory_fields(candidate.key, candidate.category, candidate.summary),
    )
    return prompt(SAME_FACT_SYSTEM_PROMPT, human)


def compose_messages(existing: Memory, candidate: MemoryCandidate) -> list[BaseMessage]:
    """The composer's messages: the older memory, then the newer candidate."""
    human = COMPOSE_USER_PROMPT.format(
        existing=render_memory_fields(existing.key, existing.category, existing.summary),
        new=render_memory_fields(candidate.key, candidate.category, candidate.summary),
    )
    return prompt(COMPOSE_SYSTEM_PROMPT, human)


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
    """Stage 2 for one turn: gate, candidate, neighbours, bands, merge or create; profile line."""
    user_id = turn.message.user_id
    at = now or turn.context.now
    log = EventLog(user_id, turn.turn_id)
    result = await _decide(turn, settings, llm, embedder, memories, log, at)
    ctx = None
    if result.memory is not None:
        ctx = await sync_profile(llm, contexts, result.memory, log)
    result.profile_line = profile_line(ctx if ctx is not None else await contexts.get(user_id))
    result.events = list(log.names)
    return result


async def _decide(
    turn: TurnRequest,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    log: EventLog,
    now: datetime,
) -> HotpathResult:
    """Everything of stage 2 but the profile: gate, candidate, neighbour, bands, write."""
    user_id, message_id = turn.message.user_id, turn.message.message_id
    if turn.message.channel is Channel.EMAIL:
        reason = "an email's text is its sender's, not the user's: no semantic memory"
        log.emit(MEMORY_DECIDE, stage="gate", should_create=False, reasoning=reason)
        return HotpathResult("none", "", reason=reason)
    earlier, latest = user_turns(turn)
    gate_prompt = gate_messages(MEMORY_GATE_SYSTEM_PROMPT, earlier, latest)
    gate = await ask(llm, HotpathDecision, gate_prompt)
    should = gate is not None and gate.should_create
    why = gate.reasoning if gate else "no valid answer from the gate"
    log.emit(MEMORY_DECIDE, stage="gate", should_create=should, reasoning=why)
    if not should:
        return HotpathResult("none", "", reason=why)
    candidate_prompt = gate_messages(MEMORY_CANDIDATE_SYSTEM_PROMPT, earlier, latest)
    candidate = await ask(llm, MemoryCandidate, candidate_prompt)
    if candidate is None or not candidate.summary.strip():
        reason = "no valid candidate"
        log.emit(MEMORY_DECIDE, stage="candidate", decision="skip", reason=reason)
        return HotpathResult("skip", "", reason=reason)
    candidate.summary = one_line(candidate.summary, 500)
    candidate.key = (candidate.key or "").strip().lower() or None

    match: Match | None = None
    embedding: list[float] | None = None
    if candidate.key:
        existing = await memories.by_key(user_id, candidate.key)
        if existing is not None and existing.kind is MemoryKind.SEMANTIC:
            match = Match(existing, "key", None, f"same deterministic key {candidate.key}")
    if match is None:
        embedding = await embed_one(embedder, candidate.summary)
        hits = await memories.search(
            user_id,
            embedding,
            kind=MemoryKind.SEMANTIC,
            top_k=settings.memory_merge_topk,
            filter={"category": candidate.category},
        )
        log.emit(
            MEMORY_SEARCH,
            category=candidate.category,
            key=candidate.key,
            top_k=settings.memory_merge_topk,
            hits=[(m.memory_id, round(s, 3)) for m, s in hits],
        )

        async def same_fact(memory: Memory) -> SameFact | None:
            """The classifier's verdict on one neighbour."""
            return await ask(llm, SameFact, same_fact_messages(memory, candidate))

        match = await find_match(candidate, hits, settings, same_fact, log)
    if match is not None:
        log.emit(
            MEMORY_MATCH,
            stage="decided",
            memory_id=match.memory.memory_id,
            by=match.by,
            score=match.score,
            reasoning=match.reasoning,
        )
        return await _merge(turn, candidate, match, settings, llm, embedder, memories, log, now)
    minimum = settings.memory_semantic_min_importance
    if candidate.importance < minimum:
        reason = f"importance {candidate.importance:.2f} < {minimum:.2f} and no fact to update"
        log.emit(MEMORY_DECIDE, stage="final", decision="skip", reason=reason)
        return HotpathResult("skip", "", reason=reason)
    memory = Memory(
        memory_id=stable_memory_id(turn.turn_id, "semantic", "create"),
        user_id=user_id,
        kind=MemoryKind.SEMANTIC,
        category=candidate.category,
        summary=candidate.summary,
        importance=candidate.importance,
        key=candidate.key,
        source_message_ids=[message_id],
        created_at=now,
        updated_at=now,
        last_verified_at=now,
    )
    if embedding is None:
        embedding = await embed_one(embedder, candidate.summary)
    try:
        stored = await memories.add(memory, embedding)
    except DuplicateMemoryKeyError:
        # Another turn wrote this key in the meantime: that memory is the one to update.
        existing = await memories.by_key(user_id, candidate.key or "")
        if existing is None:
            raise
        match = Match(existing, "key", None, f"same deterministic key {candidate.key} (race)")
        return await _merge(turn, candidate, match, settings, llm, embedder, memories, log, now)
    log.emit(
        MEMORY_CREATE,
        memory_id=stored.memory_id,
        category=stored.category,
        key=stored.key,
        importance=stored.importance,
        summary=stored.summary,
    )
    return HotpathResult("create", "", memory=stored, reason="a new fact")


async def _compose(llm: BaseChatModel, existing: Memory, candidate: MemoryCandidate) -> str:
    """The merged summary (newer wins on conflict); the candidate's when the answer is invalid."""
    composed = await ask(llm, ComposedSummary, compose_messages(existing, candidate))
    text = one_line(composed.summary, 500) if composed else ""
    return text or candidate.summary


async def _merge(
    turn: TurnRequest,
    candidate: MemoryCandidate,
    match: Match,
    settings: Settings,
    llm: BaseChatModel,
    embedder: Embedder,
    memories: MemoryStore,
    log: EventLog,
    now: datetime,
) -> HotpathResult:
    """Merge the candidate into the matched memory, by `MEMORY_MERGE_MODE`."""
    old, message_id = match.memory, turn.message.message_id
    summary = await _compose(llm, old, candidate)
    key = candidate.key or old.key
    importance = max(old.importance, candidate.importance)
    embedding = await embed_one(embedder, summary)
    mode = settings.memory_merge_mode
    if mode == "update":
        updated = await memories.update(
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
            memory_id=stable_memory_id(turn.turn_id, "semantic", "recreate", old.memory_id),
            user_id=old.user_id,
            kind=MemoryKind.SEMANTIC,
            category=old.category,
            summary=summary,
            importance=importance,
            key=key,
            pinned=old.pinned,
            source_message_ids=[*old.source_message_ids, message_id],
            created_at=old.created_at,
            updated_at=now,
            last_verified_at=now,
            metadata={**old.metadata, "replaces": old.memory_id},
        )
        new = await memories.replace(old, merged, embedding)  # one step: old out, new in
        replaced = old
    log.emit(
        MEMORY_UPDATE,
        mode=mode,
        memory_id=new.memory_id,
        replaced_id=old.memory_id if replaced else None,
        by=match.by,
        key=new.key,
        summary=new.summary,
        previous=old.summary,
    )
    return HotpathResult("update", "", memory=new, replaced=replaced, match=match, reason=match.by)

"""Stage 3, memory context (seeds 001, 003): retrieve, rerank, bullets and the "Now: …" line.

One embedding of the message, then three vector queries of the user, run together: semantic
(top `MEMORY_CONTEXT_TOPK`), episodic (a few; more on recall intent, filtered by a time phrase
such as "last week"), and pinned memories. The hybrid rerank (`MEMORY_RERANK_WEIGHTS`) orders
them; pinned memories are always kept; outside recall intent at most `NORMAL_EPISODIC_MAX`
episodes make it. The top `MEMORY_CONTEXT_TOPN` become bullets citing their source message ids,
and are touched (`last_accessed`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from memoir.embeddings import Embedder
from memoir.llm.prompts import one_line
from memoir.memory.events import MEMORY_SEARCH, EventLog
from memoir.memory.llm_calls import embed_one
from memoir.memory.models import Memory, MemoryKind, ScoredMemory
from memoir.memory.rerank import RerankWeights, parse_weights, rerank
from memoir.memory.timephrases import TimeFilter, has_recall_intent, time_filter
from memoir.models import TurnRequest
from memoir.settings import Settings
from memoir.stores.memories import MemoryStore

__all__ = [
    "NORMAL_EPISODIC_MAX",
    "NORMAL_EPISODIC_TOPK",
    "PINNED_TOPK",
    "RECALL_EPISODIC_TOPK",
    "ContextResult",
    "bullet",
    "memory_context",
    "now_line",
    "select",
]

NORMAL_EPISODIC_TOPK = 6  # episodes retrieved on a normal turn ...
NORMAL_EPISODIC_MAX = 3  # ... of which at most this many become bullets
RECALL_EPISODIC_TOPK = 12  # episodes retrieved on recall intent (no cap beyond TOPN)
PINNED_TOPK = 8  # pinned memories considered on every turn
MAX_CITED_SOURCES = 3


@dataclass
class ContextResult:
    """What stage 3 found: the chosen memories (scored), bullets, the Now line, events."""

    selected: list[ScoredMemory]
    bullets: list[str]
    now_line: str
    recall: bool
    time_filter: TimeFilter | None
    events: list[str] = field(default_factory=list)


def now_line(now: datetime, timezone: str) -> str:
    """'Now: {weekday} {date} {time} {timezone}' in the user's timezone (seed 001)."""
    local = now.astimezone(ZoneInfo(timezone))
    return f"Now: {local:%A %Y-%m-%d %H:%M} {timezone}"


def bullet(memory: Memory, *, cite: bool = True) -> str:
    """One memory as a bullet, citing its latest source message ids."""
    text = one_line(memory.summary, 300)
    if cite and memory.source_message_ids:
        return f"{text} [sources: {', '.join(memory.source_message_ids[-MAX_CITED_SOURCES:])}]"
    return text


def select(ranked: list[ScoredMemory], *, top_n: int, recall: bool) -> list[ScoredMemory]:
    """Pinned first (always kept), then by score; episodes capped outside recall intent."""
    chosen: list[ScoredMemory] = [s for s in ranked if s.memory.pinned][:top_n]
    episodes = sum(1 for s in chosen if s.memory.kind is MemoryKind.EPISODIC)
    for scored in ranked:
        if len(chosen) >= top_n:
            break
        if scored.memory.pinned:
            continue
        if scored.memory.kind is MemoryKind.EPISODIC:
            if not recall and episodes >= NORMAL_EPISODIC_MAX:
                continue
            episodes += 1
        chosen.append(scored)
    order = {id(s): i for i, s in enumerate(ranked)}
    return sorted(chosen, key=lambda s: order[id(s)])


async def memory_context(
    turn: TurnRequest,
    *,
    settings: Settings,
    embedder: Embedder,
    memories: MemoryStore,
    weights: RerankWeights | None = None,
    cite: bool = True,
) -> ContextResult:
    """Stage 3 for one turn: the memory bullets and the Now line."""
    user_id, text = turn.message.user_id, turn.message.text
    now, timezone = turn.context.now, turn.context.user.timezone
    log = EventLog(user_id, turn.turn_id)
    weights = weights or parse_weights(settings.memory_rerank_weights)
    recall = has_recall_intent(text)
    window = time_filter(text, now, timezone) if recall else None
    embedding = await embed_one(embedder, text)
    semantic, episodic, pinned = await asyncio.gather(
        memories.search(
            user_id, embedding, kind=MemoryKind.SEMANTIC, top_k=settings.memory_context_topk
        ),
        memories.search(
            user_id,
            embedding,
            kind=MemoryKind.EPISODIC,
            top_k=RECALL_EPISODIC_TOPK if recall else NORMAL_EPISODIC_TOPK,
            filter=window.filter if window else None,
        ),
        memories.search(user_id, embedding, kind=None, top_k=PINNED_TOPK, filter={"pinned": True}),
    )
    ranked = rerank([*semantic, *episodic, *pinned], now, weights, recall=recall)
    selected = select(ranked, top_n=settings.memory_context_topn, recall=recall)
    if selected:
        await memories.touch(user_id, [s.memory.memory_id for s in selected])
    log.emit(
        MEMORY_SEARCH,
        purpose="context",
        recall=recall,
        time_filter=window.label if window else None,
        semantic=len(semantic),
        episodic=len(episodic),
        pinned=len(pinned),
        selected=[(s.memory.memory_id, round(s.score, 3)) for s in selected],
    )
    return ContextResult(
        selected=selected,
        bullets=[bullet(s.memory, cite=cite) for s in selected],
        now_line=now_line(now, timezone),
        recall=recall,
        time_filter=window,
        events=list(log.names),
    )

"""Stage 3, memory context (seeds 001, 003, extended): retrieve, fuse, rerank, bullets, "Now: …".

One embedding of the message, then dense and lexical rankings over the user's facts, episode
summaries and message records (`memoir.memory.retrieval`), fused by reciprocal rank and scored
with `MEMORY_RERANK_WEIGHTS` (`memoir.memory.rerank`; recency only when the question asks for
the latest state). The selection keeps pinned memories first, at most `NORMAL_EPISODIC_MAX`
episodes outside recall intent, and no record whose message a chosen fact already states (the
fact is what it says now: a corrected fact leaves its outdated message out, and stands where
the best of those records stood); it stops at
`MEMORY_CONTEXT_TOPN` bullets or when the next would pass `MEMORY_CONTEXT_TOKENS` (estimated
as characters / 4). A bullet says when and by whom: "[2023-05-07, Maya] I lost my job as a
banker yesterday [sources: D3-4]"; a fact "[2025-01-14] User lives in Porto. [sources: m1]"
(when it was last stated); an episode's sentence carries its own date. Chosen memories are
touched (`last_accessed`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from zoneinfo import ZoneInfo

from memoir.embeddings import Embedder
from memoir.memory.context_items import RECORD, ContextItem
from memoir.memory.events import MEMORY_SEARCH, EventLog
from memoir.memory.llm_calls import embed_one
from memoir.memory.models import MemoryKind
from memoir.memory.rerank import RerankWeights, parse_weights, rerank
from memoir.memory.retrieval import RetrievalQuery, gather, has_recency_intent
from memoir.memory.timephrases import TimeFilter, has_recall_intent, time_filter
from memoir.models import TurnRequest
from memoir.settings import Settings
from memoir.stores.memories import MemoryStore
from memoir.stores.messages import MessageRecord, MessageRecordStore
from memoir.text import one_line

__all__ = [
    "BULLET_CHARS",
    "NORMAL_EPISODIC_MAX",
    "ContextResult",
    "bullet",
    "estimate_tokens",
    "memory_context",
    "now_line",
    "select",
]

NORMAL_EPISODIC_MAX = 3  # episodes among the bullets outside recall intent
MAX_CITED_SOURCES = 3
BULLET_CHARS = 300  # a bullet's length at most (the prompts flatten bullets to this)
Render = Callable[[ContextItem], str]


@dataclass
class ContextResult:
    """What stage 3 found: the chosen items (scored, best first), bullets, the Now line."""

    selected: list[ContextItem]
    bullets: list[str]
    now_line: str
    recall: bool
    time_filter: TimeFilter | None
    recent: bool = False
    tokens: int = 0
    events: list[str] = field(default_factory=list)


def now_line(now: datetime, timezone: str) -> str:
    """'Now: {weekday} {date} {time} {timezone}' in the user's timezone (seed 001)."""
    local = now.astimezone(ZoneInfo(timezone))
    return f"Now: {local:%A %Y-%m-%d %H:%M} {timezone}"


def estimate_tokens(text: str) -> int:
    """A cheap token count: about four characters per token for English text."""
    return max(1, math.ceil(len(text) / 4))


def _speaker(record: MessageRecord) -> str:
    return record.speaker_name or record.speaker


def _said(record: MessageRecord) -> str:
    """The record's text, without a leading "{speaker}: " the bullet already shows."""
    name = record.speaker_name
    text = record.text.strip()
    if name and text.startswith(f"{name}:"):
        return text[len(name) + 1 :].strip() or text
    return text


def _head_and_text(item: ContextItem, timezone: str) -> tuple[str, str]:
    """The bullet's "[date, speaker] " head and its text."""
    day = item.when.astimezone(ZoneInfo(timezone)).date().isoformat()
    if item.record is not None:
        return f"[{day}, {_speaker(item.record)}] ", _said(item.record)
    assert item.memory is not None
    if item.memory.kind is MemoryKind.EPISODIC:  # "On {date} … we discussed …"
        return "", item.memory.summary
    return f"[{day}] ", item.memory.summary


def bullet(item: ContextItem, timezone: str = "UTC", *, cite: bool = True) -> str:
    """One item as a bullet with when and by whom, citing its (latest) source message ids;
    `BULLET_CHARS` at most, the text shortened first."""
    head, text = _head_and_text(item, timezone)
    sources = item.source_message_ids[-MAX_CITED_SOURCES:]
    tail = f" [sources: {', '.join(sources)}]" if cite and sources else ""
    room = max(BULLET_CHARS - len(head) - len(tail), 20)
    return f"{head}{one_line(text, room)}{tail}"


@dataclass
class _Selection:
    """The selection under way: chosen items with their bullets and costs."""

    top_n: int
    budget: int
    recall: bool
    chosen: dict[str, tuple[ContextItem, str, int]] = field(default_factory=dict)
    stated: set[str] = field(default_factory=set)  # message ids a chosen fact states
    replaced: dict[str, list[str]] = field(default_factory=dict)  # fact → the records it states
    episodes: int = 0

    @property
    def used(self) -> int:
        return sum(cost for _item, _text, cost in self.chosen.values())

    def wants(self, item: ContextItem) -> bool:
        if item.kind is MemoryKind.EPISODIC and not self.recall:
            return self.episodes < NORMAL_EPISODIC_MAX
        if item.record is not None:
            return item.record.message_id not in self.stated
        return True

    def take(self, item: ContextItem, text: str, cost: int) -> None:
        self.chosen[item.key] = (item, text, cost)
        if item.kind is MemoryKind.EPISODIC:
            self.episodes += 1
        if item.memory is not None and item.kind is MemoryKind.SEMANTIC:
            self.stated.update(item.memory.source_message_ids)
            for key, (other, _text, _cost) in list(self.chosen.items()):
                if other.record is not None and other.record.message_id in self.stated:
                    del self.chosen[key]
                    self.replaced.setdefault(item.key, []).append(key)


def select(
    ranked: Sequence[ContextItem],
    *,
    top_n: int,
    budget: int,
    recall: bool,
    render: Render,
) -> list[tuple[ContextItem, str]]:
    """(item, bullet) best first: pinned memories first and always kept (up to `top_n`), then
    by score while there is room in `top_n` items and `budget` tokens (an item too long for
    what is left is passed over for shorter ones); see the module for what is left out."""
    state = _Selection(top_n, budget, recall)
    pinned = [item for item in ranked if item.pinned][:top_n]
    for item in pinned:
        text = render(item)
        state.take(item, text, estimate_tokens(text))
    for item in ranked:
        if len(state.chosen) >= top_n:
            break
        if item.pinned or not state.wants(item):
            continue
        text = render(item)
        cost = estimate_tokens(text)
        if state.used + cost <= budget:
            state.take(item, text, cost)
    order = {item.key: i for i, item in enumerate(ranked)}

    def place(key: str) -> int:  # a fact stands where the best record it states stood
        return min(order[k] for k in [key, *state.replaced.get(key, [])])

    picked = sorted(state.chosen.values(), key=lambda entry: place(entry[0].key))
    return [(item, text) for item, text, _cost in picked]


def _hidden(turn: TurnRequest) -> frozenset[tuple[str, str]]:
    """(thread, text) of the messages the turn already shows: its recent messages and itself."""
    thread = turn.message.thread_id
    shown = {(thread, m.content) for m in turn.context.recent_messages if m.role != "tool"}
    return frozenset(shown | {(thread, turn.message.text)})


async def memory_context(
    turn: TurnRequest,
    *,
    settings: Settings,
    embedder: Embedder,
    memories: MemoryStore,
    records: MessageRecordStore | None = None,
    weights: RerankWeights | None = None,
    cite: bool = True,
) -> ContextResult:
    """Stage 3 for one turn: the memory bullets and the Now line (`records` None: facts and
    episodes only)."""
    user_id, text = turn.message.user_id, turn.message.text
    now, timezone = turn.context.now, turn.context.user.timezone
    log = EventLog(user_id, turn.turn_id)
    weights = weights or parse_weights(settings.memory_rerank_weights)
    recall, recent = has_recall_intent(text), has_recency_intent(text)
    query = RetrievalQuery(
        user_id=user_id,
        text=text,
        embedding=await embed_one(embedder, text),
        timezone=timezone,
        recall=recall,
        window=time_filter(text, now, timezone),
        top_k=settings.memory_context_topk,
        hidden=_hidden(turn),
    )
    found = await gather(query, memories, records)
    ranked = rerank(found.items.values(), found.rankings, weights, recent=recent, recall=recall)
    picked = select(
        ranked,
        top_n=settings.memory_context_topn,
        budget=settings.memory_context_tokens,
        recall=recall,
        render=partial(bullet, timezone=timezone, cite=cite),
    )
    selected, bullets = [item for item, _ in picked], [text for _, text in picked]
    touched = [item.memory.memory_id for item in selected if item.memory is not None]
    if touched:
        await memories.touch(user_id, touched)
    tokens = sum(estimate_tokens(b) for b in bullets)
    log.emit(
        MEMORY_SEARCH,
        purpose="context",
        recall=recall,
        recent=recent,
        time_filter=query.window.label if query.window else None,
        window_filters=query.filters,
        hits={name: n for name, n in found.counts.items() if n},
        candidates=len(found.items),
        records=sum(1 for item in selected if item.kind == RECORD),
        tokens=f"{tokens}/{settings.memory_context_tokens}",
        selected=[(item.key, round(item.score, 3)) for item in selected],
    )
    return ContextResult(
        selected=selected,
        bullets=bullets,
        now_line=now_line(now, timezone),
        recall=recall,
        time_filter=query.window,
        recent=recent,
        tokens=tokens,
        events=list(log.names),
    )

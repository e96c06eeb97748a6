"""Hybrid rerank of retrieved memories (seed 001): similarity, importance, recency, pinned.

score = w_sim·similarity + w_imp·importance + w_rec·recency + w_pin·pinned, with the weights of
`MEMORY_RERANK_WEIGHTS` ("sim,imp,recency,pinned") and recency = 0.5 ** (age_days / half-life)
(1 for a memory touched now, ½ after one half-life). On recall intent an episodic memory's
recency weight is multiplied and it gets a bonus, so recaps of past conversations come first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memoir.memory.models import Memory, MemoryKind, ScoredMemory

__all__ = [
    "EPISODIC_HALF_LIFE_DAYS",
    "RECALL_EPISODIC_BONUS",
    "RECALL_RECENCY_FACTOR",
    "SEMANTIC_HALF_LIFE_DAYS",
    "RerankWeights",
    "parse_weights",
    "recency",
    "rerank",
    "score_memory",
]

SEMANTIC_HALF_LIFE_DAYS = 90.0
EPISODIC_HALF_LIFE_DAYS = 7.0
RECALL_RECENCY_FACTOR = 2.0
RECALL_EPISODIC_BONUS = 0.2


@dataclass(frozen=True)
class RerankWeights:
    """Weights of the four parts of the hybrid score."""

    similarity: float = 0.6
    importance: float = 0.2
    recency: float = 0.15
    pinned: float = 0.05


def parse_weights(text: str) -> RerankWeights:
    """ "0.6,0.2,0.15,0.05" → `RerankWeights`; four non-negative numbers, else `ValueError`."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise ValueError(
            f"MEMORY_RERANK_WEIGHTS needs four numbers 'sim,imp,recency,pinned', got {text!r}"
        )
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"MEMORY_RERANK_WEIGHTS has a part that is not a number: {text!r}"
        ) from None
    if any(v < 0 for v in values):
        raise ValueError(f"MEMORY_RERANK_WEIGHTS must not be negative: {text!r}")
    return RerankWeights(*values)


def recency(memory: Memory, now: datetime, half_life_days: float | None = None) -> float:
    """0..1: how recently the memory was updated (1 now, halving every half-life)."""
    if half_life_days is None:
        episodic = memory.kind is MemoryKind.EPISODIC
        half_life_days = EPISODIC_HALF_LIFE_DAYS if episodic else SEMANTIC_HALF_LIFE_DAYS
    age_days = max(0.0, (now - memory.updated_at).total_seconds() / 86400.0)
    return float(0.5 ** (age_days / half_life_days))


def score_memory(
    memory: Memory,
    similarity: float,
    now: datetime,
    weights: RerankWeights,
    *,
    recall: bool = False,
) -> ScoredMemory:
    """One memory's hybrid score; on recall, episodic memories weigh recency more, plus a bonus."""
    recency_weight = weights.recency
    bonus = 0.0
    if recall and memory.kind is MemoryKind.EPISODIC:
        recency_weight *= RECALL_RECENCY_FACTOR
        bonus = RECALL_EPISODIC_BONUS
    total = (
        weights.similarity * similarity
        + weights.importance * memory.importance
        + recency_weight * recency(memory, now)
        + weights.pinned * (1.0 if memory.pinned else 0.0)
        + bonus
    )
    return ScoredMemory(memory=memory, similarity=similarity, score=total)


def rerank(
    hits: Iterable[tuple[Memory, float]],
    now: datetime,
    weights: RerankWeights,
    *,
    recall: bool = False,
) -> list[ScoredMemory]:
    """Hits (memory, cosine similarity) best first by hybrid score; one entry per memory id."""
    best: dict[str, ScoredMemory] = {}
    for memory, similarity in hits:
        scored = score_memory(memory, similarity, now, weights, recall=recall)
        seen = best.get(memory.memory_id)
        if seen is None or scored.score > seen.score:
            best[memory.memory_id] = scored
    return sorted(best.values(), key=lambda s: (-s.score, s.memory.memory_id))

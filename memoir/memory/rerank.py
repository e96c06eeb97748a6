"""Hybrid rerank of what the memory context found: reciprocal rank fusion, then the seed's weights.

Candidates (facts, episode summaries, message records) come in several rankings: dense
(cosine similarity of the embeddings) and lexical (Postgres full-text rank), and, when the
question names a time ("in March"), the same two within that window. Reciprocal rank fusion
(Cormack, Clarke and Büttcher, SIGIR 2009) adds, for each ranking an item is in,

    weight / (RRF_K + rank)        (rank 1 = first)

RRF_K = 60 is the paper's constant: it flattens the head of each ranking, so an item near the
top of two rankings beats one first in a single ranking, and no score scale (cosine vs. text
rank) needs calibrating. The sum, divided by what an item first in every ranking would get,
is its `relevance` (0..1). The final score is the seed's hybrid score (`MEMORY_RERANK_WEIGHTS`
"sim,imp,recency,pinned") with relevance in place of similarity:

    score = w_sim·relevance + w_imp·importance + w_rec·recency + w_pin·pinned

where a message record's importance is `RECORD_IMPORTANCE` (the midpoint: records are neither
important nor trivial), and recency counts only when the question asks for it (`recent`: "the
latest", "currently", "still", or recall intent): then it is the item's place in time among the
candidates (1 the newest, 0 the oldest), since what matters for "is she still …" is which of
the related things was said last, whatever their age. On recall intent an episode's recency
weight is multiplied and it gets a bonus, so recaps of past conversations come first (seed 003).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from memoir.memory.context_items import ContextItem
from memoir.memory.models import MemoryKind

__all__ = [
    "RECALL_EPISODIC_BONUS",
    "RECALL_RECENCY_FACTOR",
    "RECORD_IMPORTANCE",
    "RRF_K",
    "RerankWeights",
    "parse_weights",
    "reciprocal_rank_fusion",
    "relative_recency",
    "rerank",
]

RRF_K = 60
RECORD_IMPORTANCE = 0.5
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


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Each key's Σ weight / (k + rank) over the rankings it is in (rank 1 = first).

    `rankings` maps a ranking's name to its keys, best first (a key repeated in one ranking
    counts once, at its best place, and takes no place from those after it); `weights` per
    ranking name, 1 when not given.
    """
    fused: dict[str, float] = {}
    for name, keys in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[str] = set()
        for key in keys:
            if key in seen:
                continue
            seen.add(key)
            fused[key] = fused.get(key, 0.0) + weight / (k + len(seen))
    return fused


def _best_possible(
    rankings: Mapping[str, Sequence[str]], k: int, weights: Mapping[str, float] | None
) -> float:
    """The fused score of a key first in every non-empty ranking (relevance 1)."""
    return sum(
        (1.0 if weights is None else weights.get(name, 1.0)) / (k + 1)
        for name, keys in rankings.items()
        if keys
    )


def relative_recency(when: datetime, oldest: datetime, newest: datetime) -> float:
    """0..1: where `when` falls between the oldest and the newest candidate (1 = newest)."""
    span = (newest - oldest).total_seconds()
    if span <= 0:
        return 1.0
    return min(1.0, max(0.0, (when - oldest).total_seconds() / span))


def _score(
    item: ContextItem,
    relevance: float,
    recency: float | None,
    weights: RerankWeights,
    recall: bool,
) -> float:
    importance = item.memory.importance if item.memory is not None else RECORD_IMPORTANCE
    recency_weight, bonus = weights.recency, 0.0
    if recall and item.kind is MemoryKind.EPISODIC:
        recency_weight *= RECALL_RECENCY_FACTOR
        bonus = RECALL_EPISODIC_BONUS
    return (
        weights.similarity * relevance
        + weights.importance * importance
        + (recency_weight * recency if recency is not None else 0.0)
        + weights.pinned * (1.0 if item.pinned else 0.0)
        + bonus
    )


def rerank(
    items: Iterable[ContextItem],
    rankings: Mapping[str, Sequence[str]],
    weights: RerankWeights,
    *,
    recent: bool = False,
    recall: bool = False,
    k: int = RRF_K,
    list_weights: Mapping[str, float] | None = None,
) -> list[ContextItem]:
    """The items best first: RRF relevance over `rankings` (of item keys), then the hybrid
    score; recency only when `recent`. Ties go to memories (facts first), then newer."""
    pool = {item.key: item for item in items}
    fused = reciprocal_rank_fusion(rankings, k=k, weights=list_weights)
    best = _best_possible(rankings, k, list_weights) or 1.0
    times = [item.when for item in pool.values()]
    oldest, newest = (min(times), max(times)) if times else (None, None)
    out = []
    for key, item in pool.items():
        relevance = fused.get(key, 0.0) / best
        recency = None
        if recent and oldest is not None and newest is not None:
            recency = relative_recency(item.when, oldest, newest)
        score = _score(item, relevance, recency, weights, recall)
        out.append(item.model_copy(update={"relevance": relevance, "score": score}))
    return sorted(
        out,
        key=lambda i: (-i.score, i.tie_break, -i.when.timestamp(), i.order_among_equals, i.key),
    )

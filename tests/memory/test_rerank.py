"""The hybrid rerank: weights from MEMORY_RERANK_WEIGHTS, recency decay, recall boost, pinned."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memoir.memory.models import MemoryKind
from memoir.memory.rerank import (
    EPISODIC_HALF_LIFE_DAYS,
    RerankWeights,
    parse_weights,
    recency,
    rerank,
)
from tests.memory.support import NOW, memory

WEIGHTS = RerankWeights(0.6, 0.2, 0.15, 0.05)


def test_weights_parse_in_sim_imp_recency_pinned_order() -> None:
    assert parse_weights("0.5, 0.3,0.1 ,0.1") == RerankWeights(0.5, 0.3, 0.1, 0.1)


@pytest.mark.parametrize("text", ["0.5,0.3,0.2", "a,b,c,d", "0.5,0.3,0.2,-0.1", ""])
def test_invalid_weights_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="MEMORY_RERANK_WEIGHTS"):
        parse_weights(text)


def test_recency_halves_every_half_life() -> None:
    fresh = memory(kind=MemoryKind.EPISODIC, updated_at=NOW)
    old = memory(kind=MemoryKind.EPISODIC, updated_at=NOW - timedelta(days=EPISODIC_HALF_LIFE_DAYS))
    assert recency(fresh, NOW) == pytest.approx(1.0)
    assert recency(old, NOW) == pytest.approx(0.5)


def test_similarity_dominates_with_the_default_weights() -> None:
    close = memory("close", memory_id="a", importance=0.5)
    far = memory("far", memory_id="b", importance=0.9)
    ranked = rerank([(far, 0.2), (close, 0.9)], NOW, WEIGHTS)
    assert [s.memory.memory_id for s in ranked] == ["a", "b"]


def test_recall_intent_boosts_episodic_memories() -> None:
    fact = memory("User lives in Lisbon.", memory_id="fact", importance=0.85)
    episode = memory(
        "On 2025-01-14 (W03, 2025) we discussed a reminder.",
        memory_id="episode",
        kind=MemoryKind.EPISODIC,
        importance=0.6,
        updated_at=NOW - timedelta(days=1),
    )
    hits = [(fact, 0.45), (episode, 0.4)]
    normal = rerank(hits, NOW, WEIGHTS)
    recall = rerank(hits, NOW, WEIGHTS, recall=True)
    assert normal[0].memory.memory_id == "fact"
    assert recall[0].memory.memory_id == "episode"


def test_pinned_adds_its_weight() -> None:
    plain = memory("x", memory_id="plain")
    pinned = memory("x", memory_id="pinned", pinned=True)
    ranked = rerank([(plain, 0.5), (pinned, 0.5)], NOW, WEIGHTS)
    assert ranked[0].memory.memory_id == "pinned"
    assert ranked[0].score - ranked[1].score == pytest.approx(0.05)


def test_a_memory_found_twice_is_ranked_once_with_its_best_score() -> None:
    m = memory()
    ranked = rerank([(m, 0.3), (m, 0.8)], NOW, WEIGHTS)
    assert len(ranked) == 1 and ranked[0].similarity == 0.8

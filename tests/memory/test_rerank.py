"""The rerank: reciprocal rank fusion, the seed's weights, recency only when asked, recall boost."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memoir.memory.context_items import ContextItem
from memoir.memory.models import MemoryKind
from memoir.memory.rerank import (
    RRF_K,
    RerankWeights,
    parse_weights,
    reciprocal_rank_fusion,
    relative_recency,
    rerank,
)
from memoir.stores.messages import MessageRecord
from tests.memory.support import NOW, memory

WEIGHTS = RerankWeights(0.6, 0.2, 0.15, 0.05)


def record(n: int, *, days_ago: float = 0) -> ContextItem:
    """A message record said `days_ago` before NOW."""
    return ContextItem.of_record(
        MessageRecord(
            record_id=f"r{n}",
            user_id="u1",
            thread_id="t1",
            message_id=f"m{n}",
            speaker="user",
            text=f"message {n}",
            said_at=NOW - timedelta(days=days_ago),
        )
    )


def test_weights_parse_in_sim_imp_recency_pinned_order() -> None:
    assert parse_weights("0.5, 0.3,0.1 ,0.1") == RerankWeights(0.5, 0.3, 0.1, 0.1)


@pytest.mark.parametrize("text", ["0.5,0.3,0.2", "a,b,c,d", "0.5,0.3,0.2,-0.1", ""])
def test_invalid_weights_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="MEMORY_RERANK_WEIGHTS"):
        parse_weights(text)


def test_rrf_sums_one_over_k_plus_rank_over_the_rankings() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b", "c"], "lexical": ["c", "a"]})
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2))
    assert fused["c"] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    # near the top of two rankings beats first in one
    assert sorted(fused, key=lambda key: -fused[key]) == ["a", "c", "b"]


def test_rrf_weighs_rankings_and_counts_a_repeated_key_once() -> None:
    fused = reciprocal_rank_fusion(
        {"dense": ["a", "a", "b"], "lexical": ["b"]}, k=10, weights={"lexical": 0.5}
    )
    assert fused == pytest.approx({"a": 1 / 11, "b": 1 / 12 + 0.5 / 11})


def test_relative_recency_places_a_time_between_the_oldest_and_the_newest() -> None:
    old, new = NOW - timedelta(days=100), NOW
    assert relative_recency(old, old, new) == 0.0
    assert relative_recency(NOW - timedelta(days=25), old, new) == pytest.approx(0.75)
    assert relative_recency(NOW, NOW, NOW) == 1.0


def test_rerank_orders_by_fused_relevance_without_recency() -> None:
    old, recent = record(1, days_ago=200), record(2, days_ago=1)
    rankings = {"dense": ["record:r1", "record:r2"], "lexical": ["record:r1"]}
    ranked = rerank([recent, old], rankings, WEIGHTS)
    assert [item.key for item in ranked] == ["record:r1", "record:r2"]
    assert ranked[0].relevance == pytest.approx(1.0)  # first in every ranking


def test_recency_counts_only_when_asked() -> None:
    old, recent = record(1, days_ago=200), record(2, days_ago=1)
    rankings = {"dense": ["record:r1", "record:r2"], "lexical": ["record:r1", "record:r2"]}
    normal = rerank([old, recent], rankings, WEIGHTS)
    asked = rerank([old, recent], rankings, WEIGHTS, recent=True)
    assert [item.key for item in normal] == ["record:r1", "record:r2"]
    assert [item.key for item in asked] == ["record:r2", "record:r1"]


def test_recall_intent_boosts_episodes() -> None:
    fact = ContextItem.of_memory(memory("User lives in Lisbon.", memory_id="fact"))
    episode = ContextItem.of_memory(
        memory(
            "On 2025-01-14 (W03, 2025) we discussed a reminder.",
            memory_id="episode",
            kind=MemoryKind.EPISODIC,
            importance=0.6,
            updated_at=NOW - timedelta(days=1),
        )
    )
    rankings = {"dense": ["memory:fact", "memory:episode"]}
    normal = rerank([fact, episode], rankings, WEIGHTS)
    recall = rerank([fact, episode], rankings, WEIGHTS, recent=True, recall=True)
    assert normal[0].key == "memory:fact"
    assert recall[0].key == "memory:episode"


def test_pinned_adds_its_weight_and_equal_scores_put_facts_before_records() -> None:
    fact = ContextItem.of_memory(memory("x", memory_id="fact", importance=0.5))
    pinned = ContextItem.of_memory(memory("x", memory_id="pin", importance=0.5, pinned=True))
    said = record(1)
    rankings = {"dense": []}  # no relevance anywhere: only the other parts count
    ranked = rerank([said, fact, pinned], rankings, WEIGHTS)
    assert [item.key for item in ranked] == ["memory:pin", "memory:fact", "record:r1"]
    assert ranked[0].score - ranked[1].score == pytest.approx(0.05)


def test_equal_scores_are_ordered_by_what_the_items_say_not_by_their_ids() -> None:
    def fact(summary: str, memory_id: str) -> ContextItem:
        return ContextItem.of_memory(memory(summary, memory_id=memory_id, importance=0.5))

    rankings: dict[str, list[str]] = {"dense": []}
    first = rerank([fact("Ada runs", "z9"), fact("Ada swims", "a1")], rankings, WEIGHTS)
    again = rerank([fact("Ada runs", "a1"), fact("Ada swims", "z9")], rankings, WEIGHTS)
    assert [i.text for i in first] == [i.text for i in again] == ["Ada runs", "Ada swims"]

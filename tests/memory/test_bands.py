"""The score bands of the hot path (seed 001), decided without a database."""

from __future__ import annotations

import pytest

from memoir.memory.events import EventLog
from memoir.memory.hotpath import find_match, score_band
from memoir.memory.models import Memory
from memoir.memory.schemas import MemoryCandidate, SameFact
from memoir.settings import Settings
from tests.memory.support import memory

SETTINGS = Settings(MEMORY_MERGE_AUTO_UPDATE=0.85, MEMORY_MERGE_CHECK_LOW=0.60, MEMORY_MERGE_TOPK=3)
CANDIDATE = MemoryCandidate(category="pet", summary="Luna is 4.", importance=0.8)


@pytest.mark.parametrize(
    ("score", "band"),
    [
        (1.0, "auto_update"),
        (0.85, "auto_update"),
        (0.84, "check"),
        (0.60, "check"),
        (0.59, "below"),
    ],
)
def test_score_band(score: float, band: str) -> None:
    assert score_band(score, auto_update=0.85, check_low=0.60) == band


class Classifier:
    """A same-fact classifier that answers yes for the given ids and records what it saw."""

    def __init__(self, yes: set[str]) -> None:
        self.yes = yes
        self.asked: list[str] = []

    async def __call__(self, m: Memory) -> SameFact:
        self.asked.append(m.memory_id)
        return SameFact(reasoning="test", same_fact=m.memory_id in self.yes)


def hits(*scores: float) -> list[tuple[Memory, float]]:
    return [(memory(f"fact {i}", memory_id=f"n{i}"), s) for i, s in enumerate(scores)]


@pytest.mark.parametrize(
    ("scores", "yes", "matched", "by", "asked"),
    [
        # ≥ auto-update: merge with the best, no classifier
        ((0.91, 0.7), set(), "n0", "auto_update", []),
        # between the bands: the classifier over the top K, in order, first yes wins
        ((0.80, 0.75, 0.70), {"n1", "n2"}, "n1", "same_fact", ["n0", "n1"]),
        # between the bands, all no: nothing matches
        ((0.80, 0.75), set(), None, None, ["n0", "n1"]),
        # the classifier stops at the first neighbour below the low band
        ((0.70, 0.55, 0.50), {"n1"}, None, None, ["n0"]),
        # only the top K (3) are asked
        ((0.80, 0.79, 0.78, 0.77), {"n3"}, None, None, ["n0", "n1", "n2"]),
        # below the low band: nothing asked
        ((0.59, 0.3), {"n0"}, None, None, []),
        # no neighbours
        ((), set(), None, None, []),
    ],
)
async def test_bands_decide_the_match(
    scores: tuple[float, ...], yes: set[str], matched: str | None, by: str | None, asked: list[str]
) -> None:
    classifier = Classifier(yes)
    match = await find_match(CANDIDATE, hits(*scores), SETTINGS, classifier, EventLog("u1"))
    assert (match.memory.memory_id if match else None) == matched
    assert (match.by if match else None) == by
    assert classifier.asked == asked


async def test_a_neighbour_with_another_deterministic_key_is_never_merged() -> None:
    candidate = CANDIDATE.model_copy(update={"key": "profile:pet:luna:age"})
    other = memory("User has a dog named Luna.", memory_id="kind", key="profile:pet:luna:kind")
    classifier = Classifier({"kind"})
    match = await find_match(candidate, [(other, 0.95)], SETTINGS, classifier, EventLog("u1"))
    assert match is None and classifier.asked == []

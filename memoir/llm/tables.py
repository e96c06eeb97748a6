"""The offline provider's declarative tables (`memoir/data/*.yaml`) and the nearest-example lookup
over their examples: MiniLM cosine similarity, so that a decision can name the example that fired.

    intents = Examples([...])
    index, score = intents.nearest("book a call with Ana", embedder)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import yaml

from memoir.embeddings import Embedder

__all__ = ["Examples", "entries", "lines", "table"]


@cache
def table(name: str) -> dict[str, Any]:
    """The table `memoir/data/{name}.yaml`, read once."""
    text = (resources.files("memoir") / "data" / f"{name}.yaml").read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def entries(text: str) -> list[str]:
    """The entries of a word list: "|"-separated when it holds a "|", else space-separated."""
    return [" ".join(p.split()) for p in (text.split("|") if "|" in text else text.split())]


def lines(block: str) -> list[str]:
    """The non-empty lines of a block, stripped (a table's patterns: one a line)."""
    return [line.strip() for line in block.splitlines() if line.strip()]


class Examples:
    """Example texts and their embeddings, computed once per embedder."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = list(texts)
        self._vectors: dict[int, tuple[Embedder, np.ndarray]] = {}

    def vectors(self, embedder: Embedder) -> np.ndarray:
        """The examples' embeddings by `embedder`, one row each."""
        known = self._vectors.get(id(embedder))
        if known is None or known[0] is not embedder:
            known = (embedder, np.asarray(embedder.embed(self.texts), dtype=np.float32))
            self._vectors[id(embedder)] = known
        return known[1]

    def similarities(self, texts: Sequence[str], embedder: Embedder) -> np.ndarray:
        """Cosine similarities (normalised vectors): one row per text, one column per example."""
        said = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
        return said @ self.vectors(embedder).T

    def nearest(
        self, text: str, embedder: Embedder, among: Iterable[int] | None = None
    ) -> tuple[int, float]:
        """The index and similarity of the example nearest to `text` (one of `among` if given)."""
        scores = self.similarities([text], embedder)[0]
        best = max(range(len(self.texts)) if among is None else among, key=scores.__getitem__)
        return best, float(scores[best])

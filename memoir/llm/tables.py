"""The offline provider's declarative tables (`memoir/data/*.yaml`) and the nearest-example lookup
over their examples: MiniLM cosine similarity, so that a decision can name the example that fired.

    intents = Examples([...])
    index, score = intents.nearest("book a call with Ana", embedder)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from memoir.embeddings import Embedder

__all__ = ["Examples", "entries", "fingerprint", "lines", "ridge", "save", "saved", "table"]


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


def ridge(x: np.ndarray, y: np.ndarray, strength: float, scale: Any = 1.0) -> np.ndarray:
    """Ridge regression weights from rows `x` (a bias column added) to targets `y`, each row
    counted `scale` squared times: apply as `np.append(row, 1.0) @ weights`."""
    x, y = np.hstack([x, np.ones((len(x), 1), np.float32)]) * scale, y * scale
    return np.linalg.solve(x.T @ x + strength * np.eye(x.shape[1]), x.T @ y)


def fingerprint(*parts: bytes) -> str:
    """What a fit was computed from, in a few characters (sha256 of `parts`)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def saved(path: Path, fingerprint: str) -> dict[str, np.ndarray] | None:
    """The arrays saved at `path` (`.npz`) from `fingerprint`; None when missing or stale."""
    if not path.is_file():
        return None
    with np.load(path) as found:
        if str(found["fingerprint"]) != fingerprint:
            return None
        return {name: found[name] for name in found.files if name != "fingerprint"}


def save(path: Path, fingerprint: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Save `arrays` at `path` (`.npz`), marked as computed from `fingerprint`."""
    named: dict[str, Any] = {"fingerprint": np.array(fingerprint), **arrays}
    np.savez_compressed(path, **named)

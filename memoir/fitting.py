"""Small numeric helpers for what is fitted from data: ridge regression weights, and fitted arrays
saved with a fingerprint of what they were computed from (so a stale fit is never read back).

    weights = ridge(rows, targets, 1.0)
    predict(weights, row)
    save(path, fingerprint(table_bytes, data_bytes), {"w": weights})
    saved(path, fingerprint(table_bytes, data_bytes))  # None once the table or data changed
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["fingerprint", "predict", "ridge", "save", "saved"]


def ridge(x: np.ndarray, y: np.ndarray, strength: float) -> np.ndarray:
    """Ridge regression weights from rows `x` (a bias column added) to targets `y`; `predict`
    applies them."""
    x = np.hstack([x, np.ones((len(x), 1), np.float32)])
    return np.linalg.solve(x.T @ x + strength * np.eye(x.shape[1]), x.T @ y)


def predict(weights: np.ndarray, row: np.ndarray) -> np.ndarray:
    """The targets `ridge` weights give for one row (its bias added)."""
    return np.append(row, 1.0) @ weights


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

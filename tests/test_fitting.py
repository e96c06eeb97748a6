"""memoir.fitting: ridge regression weights, and fitted arrays saved with a fingerprint."""

from pathlib import Path

import numpy as np

from memoir.fitting import fingerprint, predict, ridge, save, saved


def test_ridge_weights_separate_what_the_rows_separate() -> None:
    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], np.float32)
    y = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    weights = ridge(x, y, 0.1)
    assert [int(np.argmax(predict(weights, row))) for row in x] == [0, 0, 1, 1]


def test_saved_arrays_come_back_only_for_the_fingerprint_they_were_saved_from(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fit.npz"
    assert saved(path, "abc") is None
    save(path, "abc", {"w": np.eye(2)})
    found = saved(path, "abc")
    assert found is not None and np.array_equal(found["w"], np.eye(2))
    assert saved(path, "abd") is None


def test_a_fingerprint_changes_with_any_of_its_parts() -> None:
    assert fingerprint(b"table", b"emails") == fingerprint(b"table", b"emails")
    assert fingerprint(b"table", b"emails") != fingerprint(b"table", b"emails!")
    assert fingerprint(b"ab", b"c") != fingerprint(b"a", b"bc")

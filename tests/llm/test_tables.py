"""memoir.llm.tables: the data tables, the nearest example of a set by MiniLM cosine, ridge
regression weights."""

from pathlib import Path

import numpy as np
import pytest

from memoir.embeddings import LocalEmbedder
from memoir.llm.tables import Examples, fingerprint, ridge, save, saved, table

ERRANDS = ["remind me to water the plants", "book a table for dinner", "what's the weather like"]


def test_a_table_is_read_once_from_the_data_folder() -> None:
    assert table("planner_intents") is table("planner_intents")
    assert "intents" in table("planner_intents")


def test_the_nearest_example_is_the_one_closest_in_meaning(embedder: LocalEmbedder) -> None:
    index, score = Examples(ERRANDS).nearest("set a reminder to water my plants", embedder)
    assert ERRANDS[index] == "remind me to water the plants"
    assert 0.5 < score <= 1.0


def test_the_nearest_example_can_be_chosen_among_some(embedder: LocalEmbedder) -> None:
    index, _ = Examples(ERRANDS).nearest("set a reminder to water my plants", embedder, [1, 2])
    assert index in (1, 2)


def test_similarities_have_one_row_per_text_and_one_column_per_example(
    embedder: LocalEmbedder,
) -> None:
    examples = Examples(ERRANDS)
    similarities = examples.similarities(ERRANDS, embedder)
    assert similarities.shape == (3, 3)
    assert similarities.diagonal() == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert examples.vectors(embedder) is examples.vectors(embedder)


def test_ridge_weights_separate_what_the_rows_separate() -> None:
    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], np.float32)
    y = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    weights = ridge(x, y, 0.1)
    assert [int(np.argmax(np.append(row, 1.0) @ weights)) for row in x] == [0, 0, 1, 1]


def test_a_row_scaled_up_pulls_the_fit_towards_its_target() -> None:
    x = np.array([[1.0], [1.0]], np.float32)
    y = np.array([[1.0], [0.0]])
    even = np.append([1.0], 1.0) @ ridge(x, y, 0.01)
    leaning = np.append([1.0], 1.0) @ ridge(x, y, 0.01, np.array([[3.0], [1.0]]))
    assert even[0] == pytest.approx(0.5, abs=0.01)
    assert leaning[0] > 0.8


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

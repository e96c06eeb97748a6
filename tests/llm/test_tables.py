"""memoir.llm.tables: the data tables, and the nearest example of a set by MiniLM cosine."""

import pytest

from memoir.embeddings import LocalEmbedder
from memoir.llm.tables import Examples, table

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

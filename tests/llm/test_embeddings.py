"""Embedders: the bundled local model, cosine, the factory."""

import math

import pytest

from memoir.embeddings import (
    LOCAL_EMBEDDING_DIM,
    Embedder,
    EmbeddingConfigError,
    LocalEmbedder,
    RecentVectors,
    cosine,
    get_embedder,
)
from memoir.settings import Settings


def test_local_embedder_returns_normalized_vectors_of_its_dimension(
    embedder: LocalEmbedder,
) -> None:
    vectors = embedder.embed(["hello world", "the weekly newsletter"])
    assert len(vectors) == 2
    assert all(len(v) == LOCAL_EMBEDDING_DIM == embedder.dim for v in vectors)
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-4) for v in vectors)


def test_similar_subjects_are_closer_than_unrelated_ones(embedder: LocalEmbedder) -> None:
    a, b, c = embedder.embed(
        ["Weekly newsletter: top stories", "Your weekly newsletter digest", "Can we meet tomorrow?"]
    )
    assert cosine(a, b) > 0.75 > cosine(a, c)


def test_empty_input_embeds_to_nothing(embedder: LocalEmbedder) -> None:
    assert embedder.embed([]) == []


def test_cosine_of_zero_or_mismatched_vectors_is_zero() -> None:
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)


def test_get_embedder_local_is_one_shared_instance(embedder: LocalEmbedder) -> None:
    settings = Settings(_env_file=None, embedding_provider="local")  # type: ignore[call-arg]
    first = get_embedder(settings)
    assert first is get_embedder(settings) is embedder
    assert isinstance(first, Embedder)


def test_get_embedder_openai_without_key_is_a_clear_error() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, embedding_provider="openai", openai_api_key=None
    )
    with pytest.raises(EmbeddingConfigError, match="OPENAI_API_KEY"):
        get_embedder(settings)


class CountingModel:
    """A stand-in model: a text's vector is its length; counts what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.asked += texts
        return [[float(len(t)), 1.0] for t in texts]


def test_a_repeated_text_is_embedded_once() -> None:
    model, recent = CountingModel(), RecentVectors()
    first = recent.embed(["hi", "hello"], model)
    again = recent.embed(["hello", "hi", "hi"], model)
    assert model.asked == ["hi", "hello"]
    assert again == [first[1], first[0], first[0]]


def test_the_least_recently_used_text_is_forgotten_first() -> None:
    model, recent = CountingModel(), RecentVectors(size=2)
    recent.embed(["a", "b"], model)
    recent.embed(["a"], model)  # "b" is now the least recently used
    recent.embed(["c"], model)
    recent.embed(["a", "b"], model)
    assert model.asked == ["a", "b", "c", "b"]


def test_a_remembered_vector_equals_a_fresh_one(embedder: LocalEmbedder) -> None:
    fresh = LocalEmbedder().embed(["Luna is three."])
    embedder.embed(["Luna is three."])
    assert embedder.embed(["Luna is three."]) == fresh

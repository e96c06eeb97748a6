"""Embedders: the bundled local model, cosine, the factory."""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memoir.embeddings import (
    LOCAL_EMBEDDING_DIM,
    Embedder,
    EmbeddingConfigError,
    LocalEmbedder,
    RecentVectors,
    SharedCalls,
    _load_sentence_transformer,
    cosine,
    get_embedder,
)
from memoir.settings import Settings
from memoir.traced_encoder import is_mean_pooled_transformer


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


class HeldModel(CountingModel):
    """A `CountingModel` whose first call waits until `release` is set (a call in progress)."""

    def __init__(self, fails: bool = False) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        self.started, self.release, self.fails = threading.Event(), threading.Event(), fails

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.started.set()
            assert self.release.wait(10)
            if self.fails:
                raise RuntimeError("the model failed")
        return super().__call__(texts)


def _queue_behind_first_call(shared: SharedCalls, model: HeldModel, later: list[list[str]]) -> list:
    """Start a call of ["first"], then `later`'s callers while it runs; release it; futures."""
    pool = ThreadPoolExecutor(max_workers=1 + len(later))
    first = pool.submit(shared.embed, ["first"])
    assert model.started.wait(10)
    futures = [first] + [pool.submit(shared.embed, texts) for texts in later]
    while len(shared._waiting) < len(later):  # the later callers are queued
        threading.Event().wait(0.01)
    model.release.set()
    pool.shutdown(wait=True)
    return futures


def test_callers_arriving_during_a_call_share_the_next_one() -> None:
    model = HeldModel()
    shared = SharedCalls(model)
    futures = _queue_behind_first_call(shared, model, [["ab"], ["abcd", "abcdefgh"]])
    assert len(model.calls) == 2
    assert sorted(model.calls[1]) == ["ab", "abcd", "abcdefgh"]
    assert futures[0].result().tolist() == [[5.0, 1.0]]
    assert futures[1].result().tolist() == [[2.0, 1.0]]
    assert futures[2].result().tolist() == [[4.0, 1.0], [8.0, 1.0]]


def test_a_failed_call_raises_in_its_caller_and_the_next_call_still_runs() -> None:
    model = HeldModel(fails=True)
    shared = SharedCalls(model)
    futures = _queue_behind_first_call(shared, model, [["ab"]])
    with pytest.raises(RuntimeError, match="the model failed"):
        futures[0].result()
    assert futures[1].result().tolist() == [[2.0, 1.0]]


def test_a_large_request_does_not_wait_for_a_call_in_progress() -> None:
    model = HeldModel()
    shared = SharedCalls(model, max_texts=2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(shared.embed, ["first"])
        assert model.started.wait(10)
        assert shared.embed(["a", "bb", "ccc"]).tolist() == [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]
        model.release.set()
        assert first.result().tolist() == [[5.0, 1.0]]


def test_concurrent_callers_get_the_vectors_of_their_own_texts(embedder: LocalEmbedder) -> None:
    texts = [f"Message number {i} about {topic}" for i, topic in enumerate("abcdefghijkl")]
    alone = [LocalEmbedder().embed([t])[0] for t in texts]
    shared = LocalEmbedder()
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda t: shared.embed([t])[0], texts))
    assert np.allclose(np.array(together), np.array(alone), atol=1e-5)


def test_the_bundled_model_runs_as_a_traced_graph(embedder: LocalEmbedder) -> None:
    assert embedder.traced


def test_traced_vectors_equal_the_eager_models(embedder: LocalEmbedder) -> None:
    eager = _load_sentence_transformer(embedder.model_path, "cpu")
    long = " ".join(["Luna the cat sleeps on the warm windowsill every afternoon."] * 40)
    texts = ["ok", "  Luna is three.  ", "My sister Anna moved to Lyon in May.", long, ""]
    traced = LocalEmbedder(batch_size=2)._encode(texts)  # batches of 2: padding and order
    expected = eager.encode(texts, normalize_embeddings=True, show_progress_bar=False)
    assert np.allclose(traced, expected, atol=1e-5)


def test_only_a_mean_pooled_transformer_is_traced(embedder: LocalEmbedder) -> None:
    model = _load_sentence_transformer(embedder.model_path, "cpu")
    assert is_mean_pooled_transformer(model)
    assert not is_mean_pooled_transformer([model[0], model[1]])

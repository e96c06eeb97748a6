"""The local embedding model's transformer as a frozen TorchScript graph.

Run eagerly, a forward pass of all-MiniLM-L6-v2 is some 400 operations dispatched one by one
from Python, each releasing and taking back the GIL: ~9 ms of CPU for one chat message, much
of it Python, while the event loop of the same process waits for the GIL. Traced once when the
model loads, the same operations run in TorchScript's C++ interpreter with the GIL released
throughout (~6.5 ms for the same message), and the vectors equal the eager model's (within
1e-7, see tests/llm/test_embeddings.py).

`torch.jit` is deprecated in favour of `torch.compile`, which needs a C++ compiler at run time;
torch is pinned (2.13.0) here, and a model that is not a mean-pooled transformer, or that fails
to trace, runs eagerly (with a warning in the log).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

_log = logging.getLogger(__name__)

# Two texts of different lengths, so the traced graph takes the attention mask's padded path.
_EXAMPLE = ["Memoir", "A longer example sentence, so that the traced batch has padding."]


class TracedEncoder:
    """Unit-length mean-pooled vectors from a SentenceTransformer's traced transformer."""

    def __init__(self, model: Any) -> None:
        import torch

        self._tokenizer = model.tokenizer
        self._max_length = int(model.max_seq_length)
        self._dim = int(model.get_embedding_dimension())
        example = self._tokenize(_EXAMPLE)
        inputs = (example["input_ids"], example["attention_mask"])
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.jit's deprecation, the tracer's notes
            traced = torch.jit.trace(model[0].auto_model.eval(), inputs, strict=False)
            self._graph = torch.jit.freeze(traced.eval())

    def encode(self, texts: list[str], batch_size: int) -> Any:
        """One float32 row per text, in order; texts of similar length are batched together."""
        import torch

        rows = np.empty((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return rows
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        chunks = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        with torch.no_grad():
            rows[order] = np.concatenate([self._vectors([texts[i] for i in c]) for c in chunks])
        return rows

    def _tokenize(self, texts: list[str]) -> Any:
        stripped = [text.strip() for text in texts]  # as SentenceTransformer tokenizes
        return self._tokenizer(
            stripped,
            padding=True,
            truncation=True,
            max_length=self._max_length,
            return_tensors="pt",
        )

    def _vectors(self, texts: list[str]) -> Any:
        import torch

        batch = self._tokenize(texts)
        mask = batch["attention_mask"]
        output = self._graph(batch["input_ids"], mask)
        tokens = output["last_hidden_state"] if isinstance(output, dict) else output[0]
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        mean = (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(mean, dim=1).numpy()


def is_mean_pooled_transformer(model: Any) -> bool:
    """Whether the SentenceTransformer is a transformer, mean pooling and normalization only."""
    modules = [type(module).__name__ for module in model]
    if modules != ["Transformer", "Pooling", "Normalize"]:
        return False
    pooling = model[1].get_config_dict()
    return pooling.get("pooling_mode") == "mean" or bool(pooling.get("pooling_mode_mean_tokens"))


def traced_encoder(model: Any) -> TracedEncoder | None:
    """The model's traced encoder, or None (logged) when it cannot be traced."""
    if not is_mean_pooled_transformer(model):
        _log.warning("the embedding model is not a mean-pooled transformer; it runs eagerly")
        return None
    try:
        return TracedEncoder(model)
    except Exception as error:  # any torch.jit failure: the eager model still works
        _log.warning("the embedding model could not be traced (%s); it runs eagerly", error)
        return None

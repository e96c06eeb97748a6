"""The Pinecone backend: one namespace per user (`user:{user_id}`) in one cosine index.

Uses the official `pinecone` SDK's sync data-plane client (`pinecone.Index`) from worker threads
(`asyncio.to_thread`), so one store works from any event loop. Pinecone metadata has no null and
compares only numbers with `$gt/$gte/$lt/$lte`, so `date_iso` is stored as the number YYYYMMDD
and filters on it are translated; hits give it back as `YYYY-MM-DD`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, TypeVar

from pinecone import Index
from pinecone.errors import NotFoundError

from memoir.memory.models import VectorHit
from memoir.vectors.base import Filter

UPSERT_BATCH = 100  # 384-dim vectors: ~100 per request stays far below Pinecone's 2 MB limit
DELETE_BATCH = 1000  # Pinecone's maximum ids per delete request
_INT_KEYS = ("week", "year")  # Pinecone returns every number as a float
_T = TypeVar("_T")


def namespace_for(user_id: str) -> str:
    """The Pinecone namespace that holds one user's vectors."""
    if not user_id:
        raise ValueError("user_id must not be empty")
    return f"user:{user_id}"


def _date_number(value: Any) -> int:
    """`2025-01-05` (a string or a date) as the number 20250105."""
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, str):
        value = date.fromisoformat(value)
    if not isinstance(value, date):
        raise ValueError(f"date_iso must be a date or YYYY-MM-DD, got {value!r}")
    return value.year * 10_000 + value.month * 100 + value.day


def _number_date(value: Any) -> str:
    """The number 20250105 back as `2025-01-05`."""
    n = int(value)
    return date(n // 10_000, n // 100 % 100, n % 100).isoformat()


def to_pinecone_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Memoir metadata in Pinecone's value types: nulls dropped, dates as numbers or strings."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if value is None:
            continue
        if key == "date_iso":
            out[key] = _date_number(value)
        elif isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, date | datetime):
            out[key] = value.isoformat()
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            raise ValueError(f"metadata {key!r}: Pinecone stores no {type(value).__name__}")
    return out


def from_pinecone_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Pinecone metadata back in Memoir's shape (whole numbers and `date_iso` restored)."""
    out = dict(metadata or {})
    if "date_iso" in out:
        out["date_iso"] = _number_date(out["date_iso"])
    for key in _INT_KEYS:
        value = out.get(key)
        if isinstance(value, float) and value.is_integer():
            out[key] = int(value)
    return out


def to_pinecone_filter(filter: Filter | None) -> dict[str, Any] | None:
    """A Memoir filter in Pinecone syntax: passed through, with `date_iso` values as numbers."""
    if not filter:
        return None

    def translate(node: Any, key: str | None) -> Any:
        if isinstance(node, Mapping):
            return {k: translate(v, key if k.startswith("$") else k) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [translate(v, key) for v in node]
        if key == "date_iso" and not isinstance(node, bool):
            return _date_number(node)
        return node

    result = translate(dict(filter), None)
    assert isinstance(result, dict)
    return result


def _chunks(items: Sequence[_T], size: int) -> Iterator[list[_T]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


class PineconeVectorStore:
    """VectorStore over a Pinecone index (metric cosine): one namespace per user."""

    def __init__(
        self,
        *,
        api_key: str,
        host: str,
        timeout: float = 30.0,
        index: Index | None = None,
    ) -> None:
        # An `http://` host (a local stand-in) is used as given; Pinecone itself is `https://`.
        self.index = (
            index if index is not None else Index(host=host, api_key=api_key, timeout=timeout)
        )

    async def upsert(
        self, user_id: str, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]
    ) -> None:
        """Insert or replace (id, vector, metadata) in the user's namespace."""
        namespace = namespace_for(user_id)
        vectors = []
        for memory_id, vector, metadata in items:
            values = [float(x) for x in vector]
            if not all(math.isfinite(x) for x in values):
                raise ValueError("vector values must be finite numbers")
            entry: dict[str, Any] = {"id": memory_id, "values": values}
            converted = to_pinecone_metadata(metadata)
            if converted:
                entry["metadata"] = converted
            vectors.append(entry)
        for batch in _chunks(vectors, UPSERT_BATCH):
            await asyncio.to_thread(self.index.upsert, vectors=batch, namespace=namespace)

    async def query(
        self, user_id: str, vector: Sequence[float], *, top_k: int, filter: Filter | None = None
    ) -> list[VectorHit]:
        """The user's nearest vectors by cosine similarity, best first."""
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        response = await asyncio.to_thread(
            self.index.query,
            top_k=top_k,
            vector=[float(x) for x in vector],
            namespace=namespace_for(user_id),
            filter=to_pinecone_filter(filter),
            include_metadata=True,
        )
        return [
            VectorHit(id=m.id, score=float(m.score), metadata=from_pinecone_metadata(m.metadata))
            for m in response.matches
        ]

    async def update_metadata(self, user_id: str, memory_id: str, metadata: dict[str, Any]) -> None:
        """Set these metadata keys on one vector, leaving its values as they are."""
        converted = to_pinecone_metadata(metadata)
        if not converted:
            return
        with contextlib.suppress(NotFoundError):  # no such vector or namespace: nothing to do
            await asyncio.to_thread(
                self.index.update,
                id=memory_id,
                set_metadata=converted,
                namespace=namespace_for(user_id),
            )

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove these ids from the user's namespace (missing ids are not an error)."""
        namespace = namespace_for(user_id)
        for batch in _chunks(list(dict.fromkeys(ids)), DELETE_BATCH):
            try:
                await asyncio.to_thread(self.index.delete, ids=batch, namespace=namespace)
            except NotFoundError:
                return  # serverless answers 404 for a namespace that does not exist

    async def delete_user(self, user_id: str) -> None:
        """Remove every vector of this user (empties the namespace)."""
        with contextlib.suppress(NotFoundError):
            await asyncio.to_thread(
                self.index.delete, delete_all=True, namespace=namespace_for(user_id)
            )

    def close(self) -> None:
        """Close the SDK's HTTP connections."""
        self.index.close()

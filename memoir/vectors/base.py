"""The vector-store interface every backend implements; every call is scoped by user."""

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from memoir.db import Connection
from memoir.memory.models import VectorHit

# Metadata filter: equality on keys, or {"$in": [...]}, {"$gte": x}, {"$lte": x} (Pinecone syntax).
Filter = dict[str, Any]


class VectorStore(Protocol):
    async def upsert(
        self, user_id: str, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]
    ) -> None:
        """Insert or replace (id, vector, metadata) for this user."""
        ...

    async def query(
        self, user_id: str, vector: Sequence[float], *, top_k: int, filter: Filter | None = None
    ) -> list[VectorHit]:
        """The user's nearest vectors by cosine similarity, best first."""
        ...

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove these ids of this user (missing ids are not an error)."""
        ...

    async def delete_user(self, user_id: str) -> None:
        """Remove every vector of this user."""
        ...


@runtime_checkable
class TransactionalVectorStore(VectorStore, Protocol):
    """A vector store inside Memoir's own Postgres: each write can join the caller's transaction,
    so a memory row and its vector commit or roll back together."""

    async def upsert_in(
        self,
        conn: Connection,
        user_id: str,
        items: Sequence[tuple[str, Sequence[float], dict[str, Any]]],
    ) -> None:
        """`upsert` on `conn`, inside its open transaction."""
        ...

    async def update_metadata_in(
        self, conn: Connection, user_id: str, memory_id: str, metadata: dict[str, Any]
    ) -> None:
        """Set these metadata keys on one vector, on `conn`."""
        ...

    async def delete_in(self, conn: Connection, user_id: str, ids: Sequence[str]) -> None:
        """`delete` on `conn`, inside its open transaction."""
        ...

    async def delete_user_in(self, conn: Connection, user_id: str) -> None:
        """`delete_user` on `conn`, inside its open transaction."""
        ...

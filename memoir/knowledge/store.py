"""`KnowledgeStore`: a user's ingested documents and their embedded chunks (pgvector, HNSW).

Every statement is scoped by `user_id`. A document is keyed by its content hash: adding the
same content again is a no-op, and adding changed content for a known path replaces that
document's chunks in one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memoir.db import Pool
from memoir.knowledge.chunking import Chunk
from memoir.vectors.pgvector import DEFAULT_EF_SEARCH, ef_search_for, nearest_rows, vector_literal

AddOutcome = Literal["added", "replaced", "unchanged"]


@dataclass(frozen=True, slots=True)
class KbDocument:
    document_id: str
    user_id: str
    title: str
    path: str
    sha256: str
    created_at: datetime
    chunks: int


@dataclass(frozen=True, slots=True)
class KbHit:
    """One retrieved chunk with the title of its document and its cosine similarity."""

    chunk_id: str
    document_id: str
    title: str
    heading: str
    ordinal: int
    text: str
    score: float


_DOC_COLUMNS = (
    "d.document_id, d.user_id, d.title, d.path, d.sha256, d.created_at,"
    " (SELECT count(*) FROM kb_chunks c WHERE c.document_id = d.document_id)::int AS chunks"
)


def _document(row: dict[str, object]) -> KbDocument:
    return KbDocument(**row)  # type: ignore[arg-type]


class KnowledgeStore:
    def __init__(self, pool: Pool, *, ef_search: int = DEFAULT_EF_SEARCH) -> None:
        self.pool = pool
        self.ef_search = ef_search

    async def find_by_sha(self, user_id: str, sha256: str) -> KbDocument | None:
        """The user's document with this content, if ingested already."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM kb_documents d WHERE d.user_id = %s AND d.sha256 = %s",
                (user_id, sha256),
            )
            row = await cur.fetchone()
        return _document(row) if row else None

    async def add_document(
        self,
        user_id: str,
        *,
        title: str,
        path: str,
        sha256: str,
        chunks: Sequence[Chunk],
        embeddings: Sequence[Sequence[float]],
    ) -> tuple[KbDocument, AddOutcome]:
        """Store a document with its chunks; unchanged content is a no-op, a changed file
        (same path, new content) replaces the old chunks."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
        vectors = [vector_literal(e) for e in embeddings]
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT document_id, sha256 FROM kb_documents"
                " WHERE user_id = %s AND (sha256 = %s OR path = %s)"
                " ORDER BY (sha256 = %s) DESC LIMIT 1 FOR UPDATE",
                (user_id, sha256, path, sha256),
            )
            row = await cur.fetchone()
            outcome: AddOutcome
            if row and row["sha256"] == sha256:
                document_id, outcome = str(row["document_id"]), "unchanged"
            elif row:
                document_id, outcome = str(row["document_id"]), "replaced"
                await conn.execute(
                    "UPDATE kb_documents SET title = %s, sha256 = %s, updated_at = now()"
                    " WHERE document_id = %s",
                    (title, sha256, document_id),
                )
                await conn.execute("DELETE FROM kb_chunks WHERE document_id = %s", (document_id,))
            else:
                document_id, outcome = f"doc_{uuid.uuid4().hex}", "added"
                await conn.execute(
                    "INSERT INTO kb_documents (document_id, user_id, title, path, sha256)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    (document_id, user_id, title, path, sha256),
                )
            if outcome != "unchanged" and chunks:
                async with conn.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO kb_chunks"
                        " (chunk_id, document_id, user_id, ordinal, heading, text, embedding)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s::vector)",
                        [
                            (
                                f"chk_{uuid.uuid4().hex}",
                                document_id,
                                user_id,
                                chunk.ordinal,
                                chunk.heading,
                                chunk.text,
                                vector,
                            )
                            for chunk, vector in zip(chunks, vectors, strict=True)
                        ],
                    )
            cur = await conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM kb_documents d WHERE d.document_id = %s",
                (document_id,),
            )
            stored = await cur.fetchone()
        assert stored is not None
        return _document(stored), outcome

    async def list_documents(self, user_id: str) -> list[KbDocument]:
        """The user's documents, by title."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM kb_documents d WHERE d.user_id = %s"
                " ORDER BY d.title, d.path",
                (user_id,),
            )
            rows = await cur.fetchall()
        return [_document(row) for row in rows]

    async def chunks(self, user_id: str, document_id: str) -> list[str]:
        """A document's chunk texts, in order (for checks and tests)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT text FROM kb_chunks WHERE user_id = %s AND document_id = %s"
                " ORDER BY ordinal",
                (user_id, document_id),
            )
            rows = await cur.fetchall()
        return [str(row["text"]) for row in rows]

    async def search(self, user_id: str, embedding: Sequence[float], top_k: int = 3) -> list[KbHit]:
        """The user's `top_k` chunks nearest to `embedding` (cosine), best first."""
        vector = vector_literal(embedding)
        rows = await nearest_rows(
            self.pool,
            ef_search_for(self.ef_search, top_k),
            "SELECT c.chunk_id, c.document_id, d.title, c.heading, c.ordinal, c.text,"
            " 1 - (c.embedding <=> %s::vector) AS score"
            " FROM kb_chunks c JOIN kb_documents d ON d.document_id = c.document_id"
            " WHERE c.user_id = %s ORDER BY c.embedding <=> %s::vector LIMIT %s",
            (vector, user_id, vector, top_k),
        )
        return [
            KbHit(
                chunk_id=str(r["chunk_id"]),
                document_id=str(r["document_id"]),
                title=str(r["title"]),
                heading=str(r["heading"]),
                ordinal=int(r["ordinal"]),
                text=str(r["text"]),
                score=float(r["score"]),
            )
            for r in rows
        ]

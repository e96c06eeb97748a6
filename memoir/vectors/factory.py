"""Choose the vector store that `settings.vector_backend` names."""

from __future__ import annotations

from memoir.db import Pool
from memoir.settings import Settings
from memoir.vectors.base import VectorStore
from memoir.vectors.pgvector import DEFAULT_DIM, PgVectorStore


class VectorConfigError(ValueError):
    """The vector backend is misconfigured (e.g. Pinecone without a key or host)."""


def vector_store(settings: Settings, pool: Pool) -> VectorStore:
    """PgVectorStore over `pool` (default) or PineconeVectorStore (MEMOIR_VECTOR_BACKEND)."""
    if settings.vector_backend == "pgvector":
        if settings.embedding_dim != DEFAULT_DIM:
            raise VectorConfigError(
                f"MEMOIR_EMBEDDING_DIM={settings.embedding_dim}, but memory_vectors holds "
                f"vector({DEFAULT_DIM}) (all-MiniLM-L6-v2); use {DEFAULT_DIM}-dimension "
                "embeddings or a migration that changes the column."
            )
        return PgVectorStore(pool, dim=settings.embedding_dim)
    if settings.vector_backend == "pinecone":
        missing = [
            name
            for name, value in (
                ("PINECONE_API_KEY", settings.pinecone_api_key),
                ("PINECONE_HOST", settings.pinecone_host),
            )
            if not value
        ]
        if missing:
            raise VectorConfigError(
                f"MEMOIR_VECTOR_BACKEND=pinecone needs {' and '.join(missing)} (the index's "
                "data-plane URL, e.g. https://memoir-xxxx.svc.region.pinecone.io); set them, "
                "or use MEMOIR_VECTOR_BACKEND=pgvector."
            )
        from memoir.vectors.pinecone import PineconeVectorStore

        assert settings.pinecone_api_key and settings.pinecone_host
        return PineconeVectorStore(api_key=settings.pinecone_api_key, host=settings.pinecone_host)
    raise VectorConfigError(f"unknown vector backend {settings.vector_backend!r}")

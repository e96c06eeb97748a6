"""Fixtures for the memory engine tests: a fresh user, the bundled embedder, engine builders."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memoir.db import Pool  # noqa: E402
from memoir.embeddings import Embedder, LocalEmbedder, get_local_embedder  # noqa: E402
from memoir.llm import OfflineChatModel  # noqa: E402
from memoir.memory.engine import MemoryEngine  # noqa: E402
from memoir.models import UserProfile  # noqa: E402
from memoir.settings import Settings  # noqa: E402
from memoir.stores import Stores  # noqa: E402
from memoir.stores.memories import MemoryStore  # noqa: E402
from memoir.vectors.base import VectorStore  # noqa: E402
from memoir.vectors.pgvector import PgVectorStore  # noqa: E402
from tests.memory.support import CountingVectors  # noqa: E402


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once."""
    local = get_local_embedder()
    local.load()
    return local


@pytest.fixture(scope="session")
def offline(local_embedder: LocalEmbedder) -> OfflineChatModel:
    """The offline chat model."""
    return OfflineChatModel(embedder=local_embedder)


@pytest.fixture
async def user(stores: Stores) -> UserProfile:
    """A new user of its own (UTC), so tests never see each other's memories."""
    profile, _token = await stores.users.create_user("Memory Tester")
    return profile


@pytest.fixture
def make_user(stores: Stores) -> Callable[..., Any]:
    """make_user(name="…", timezone="…") → a new UserProfile."""

    async def make(name: str = "Other Tester", timezone: str = "UTC") -> UserProfile:
        profile, _token = await stores.users.create_user(name, timezone=timezone)
        return profile

    return make


EngineFactory = Callable[..., MemoryEngine]


@pytest.fixture
def make_engine(pool: Pool, stores: Stores, local_embedder: LocalEmbedder) -> EngineFactory:
    """make_engine(llm, embedder=None, vectors=None, **settings) → MemoryEngine.

    Settings are given by their environment names (MEMORY_MERGE_MODE="update"); `vectors` wraps
    the pgvector store (e.g. a CountingVectors) and is reachable as `engine.memories.vectors`.
    """

    def make(
        llm: BaseChatModel,
        embedder: Embedder | None = None,
        vectors: VectorStore | None = None,
        **knobs: Any,
    ) -> MemoryEngine:
        settings = Settings(_env_file=None, **knobs)  # type: ignore[call-arg]
        memories = MemoryStore(pool, vectors or CountingVectors(PgVectorStore(pool)))
        return MemoryEngine(
            settings, llm, embedder or local_embedder, memories, stores.user_context, pool
        )

    return make

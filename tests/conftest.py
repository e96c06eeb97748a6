"""Shared fixtures: one real Postgres per test session (embedded unless a URL is given)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest

from memoir.db import Pool, migrate, open_pool
from memoir.embedded_pg import start_embedded_postgres
from memoir.stores import Stores


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """MEMOIR_TEST_DATABASE_URL if set, else an embedded Postgres in a temp dir for the session."""
    url = os.environ.get("MEMOIR_TEST_DATABASE_URL")
    if url:
        yield url
        return
    server = start_embedded_postgres(tmp_path_factory.mktemp("memoir-pg"))
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool shared by the session; tests isolate by creating their own user."""
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        await migrate(pool)
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def stores(pool: Pool) -> Stores:
    """Every store over the session pool."""
    return Stores.from_pool(pool)

"""Migrations: applied once, recorded, safe to run again and concurrently."""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from memoir.db import Pool, migrate, migration_files, open_pool
from memoir.embedded_pg import start_embedded_postgres


async def test_migrations_are_recorded(pool: Pool) -> None:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT name FROM schema_migrations ORDER BY name")
        names = [r["name"] for r in await cur.fetchall()]
    assert names == [name for name, _ in migration_files()]
    assert "001_init.sql" in names


async def test_migrate_twice_is_a_no_op(pool: Pool) -> None:
    assert await migrate(pool) == []
    assert await migrate(pool) == []


async def test_concurrent_migrate_is_safe(pool: Pool) -> None:
    assert await asyncio.gather(migrate(pool), migrate(pool)) == [[], []]


async def test_extensions_are_installed(pool: Pool) -> None:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT extname FROM pg_extension")
        names = {r["extname"] for r in await cur.fetchall()}
    assert {"vector", "pg_trgm"} <= names


@pytest.fixture
async def empty_database(pool: Pool, database_url: str) -> AsyncIterator[str]:
    """The URL of a new, empty database on the test server (dropped afterwards)."""
    name = f"memoir_test_{secrets.token_hex(4)}"
    async with pool.connection() as conn:
        try:
            await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("no CREATE DATABASE privilege on the test server")
    try:
        yield make_conninfo(database_url, dbname=name)
    finally:
        async with pool.connection() as conn:
            await conn.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )


async def test_concurrent_first_migrations_apply_each_file_once(empty_database: str) -> None:
    pools = [await open_pool(empty_database, min_size=1, max_size=1) for _ in range(2)]
    try:
        results = await asyncio.gather(*(migrate(p) for p in pools))
    finally:
        for p in pools:
            await p.close()
    every = [name for name, _ in migration_files()]
    assert sorted(results, key=len) == [[], every]


@pytest.mark.skipif(
    bool(os.environ.get("MEMOIR_TEST_DATABASE_URL")), reason="uses the embedded Postgres"
)
def test_embedded_postgres_restarts_on_its_data(tmp_path: Path) -> None:
    server = start_embedded_postgres(tmp_path)
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (42)")
    server.stop()
    server.stop()  # stopping twice is harmless

    with start_embedded_postgres(tmp_path) as again, psycopg.connect(again.url) as conn:
        row = conn.execute("SELECT x FROM kept").fetchone()
        assert row == (42,)
        exts = {r[0] for r in conn.execute("SELECT extname FROM pg_extension").fetchall()}
        assert {"vector", "pg_trgm"} <= exts


async def test_a_connection_the_server_ended_is_replaced_on_checkout(database_url: str) -> None:
    pool = await open_pool(make_conninfo(database_url, application_name="ended"), 2, 2)
    try:
        for _ in range(3):
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'ended'"
            )
        await asyncio.sleep(0.2)
        for _ in range(4):  # both pooled connections were ended: each is replaced, no error
            async with pool.connection() as conn:
                row = await (await conn.execute("SELECT 1 AS one")).fetchone()
                assert row == {"one": 1}
    finally:
        await pool.close()

"""Connection pool and schema migrations for Memoir's Postgres."""

from __future__ import annotations

import logging
import select
from importlib import resources
from typing import TypeAlias

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

_log = logging.getLogger(__name__)

Connection: TypeAlias = AsyncConnection[DictRow]
Pool: TypeAlias = AsyncConnectionPool[Connection]

# Key of the session advisory lock that serialises migrations across processes.
MIGRATION_LOCK_KEY = 7_263_411_015_001


async def open_pool(
    url: str, min_size: int = 1, max_size: int = 10, *, timeout: float = 30.0
) -> Pool:
    """Open a pool of autocommit connections returning rows as dicts; waits until usable.

    Connections are checked before being handed out (`check_connection`), so a Postgres restart
    costs one reconnect instead of a failed query. A caller waits at most `timeout` seconds for a
    connection.
    """
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        connection_class=AsyncConnection[DictRow],
        kwargs={"autocommit": True, "row_factory": dict_row},
        check=check_connection,
        open=False,
        name="memoir",
        timeout=timeout,
    )
    await pool.open(wait=True)
    return pool


async def check_connection(conn: AsyncConnection[DictRow]) -> None:
    """Hand out an idle connection whose socket has nothing to read without a round trip.

    A server that ends a connection (a restart, `pg_terminate_backend`, a crash) writes to it or
    closes it, so its socket turns readable: only then, or when the connection is not idle, the
    pool's full check (a query) runs. The round trip on every checkout cost 4-6 ms of CPU per
    turn (bench/README.md)."""
    if not conn.closed and conn.pgconn.transaction_status == TransactionStatus.IDLE:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
        if not readable:
            return
    await AsyncConnectionPool.check_connection(conn)


def migration_files() -> list[tuple[str, str]]:
    """The `(name, sql)` of every `memoir/sql/*.sql`, in name order."""
    folder = resources.files("memoir") / "sql"
    files = [f for f in folder.iterdir() if f.name.endswith(".sql")]
    return [(f.name, f.read_text(encoding="utf-8")) for f in sorted(files, key=lambda f: f.name)]


async def migrate(pool: Pool) -> list[str]:
    """Apply the migrations not applied yet, each in its own transaction; return their names.

    Idempotent and safe to run from several processes at once: a session advisory lock
    serialises runners, and `schema_migrations` records what was applied.
    """
    applied_now: list[str] = []
    async with pool.connection() as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name text PRIMARY KEY,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            cur = await conn.execute("SELECT name FROM schema_migrations")
            done = {row["name"] for row in await cur.fetchall()}
            for name, sql in migration_files():
                if name in done:
                    continue
                async with conn.transaction():
                    await conn.execute(sql.encode())  # no parameters: may hold many statements
                    await conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
                _log.info("applied migration %s", name)
                applied_now.append(name)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied_now

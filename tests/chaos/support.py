"""Counting what the chaos tests' turns left behind, by user and message."""

from __future__ import annotations

from typing import Any

from memoir.db import Pool


async def count(pool: Pool, sql: str, **params: Any) -> int:
    """The first column of the first row of `sql` (a count)."""
    async with pool.connection() as conn:
        row = await (await conn.execute(sql, params)).fetchone()
    assert row is not None
    return int(next(iter(row.values())) if isinstance(row, dict) else row[0])


async def memories_mentioning(pool: Pool, user_id: str, word: str) -> int:
    """Semantic memories of `user_id` whose summary names `word`."""
    return await count(
        pool,
        "SELECT count(*) FROM memories WHERE user_id = %(u)s AND kind = 'semantic'"
        " AND summary ILIKE %(w)s",
        u=user_id,
        w=f"%{word}%",
    )


async def interactions_of(pool: Pool, user_id: str, *, message_id: str | None = None) -> int:
    """Stored interactions of `user_id` (of one message, when given)."""
    return await count(
        pool,
        "SELECT count(*) FROM interactions WHERE user_id = %(u)s"
        " AND (%(m)s::text IS NULL OR message_id = %(m)s)",
        u=user_id,
        m=message_id,
    )


async def interactions_keyed(pool: Pool, key: str) -> int:
    """Stored interactions under one idempotency key."""
    return await count(pool, "SELECT count(*) FROM interactions WHERE key = %(k)s", k=key)

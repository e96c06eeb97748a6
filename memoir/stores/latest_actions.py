"""Latest actions (seed 002 "LatestActions contract"): a per-thread FIFO of successful steps."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from memoir.db import Pool
from memoir.models import LatestAction
from memoir.stores._common import require_aware, user_must_exist


def _action(row: dict[str, Any]) -> LatestAction:
    return LatestAction(
        created_at=row["created_at"],
        capability=row["capability"],
        action=row["action"],
        summary=row["summary"],
        when=row["when_text"],
        external_ids=row["external_ids"] or {},
    )


class LatestActionStore:
    """Push successful steps; read the newest few within the session window."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def push(
        self,
        user_id: str,
        thread_id: str,
        action: LatestAction,
        *,
        key: str,
        max_per_thread: int = 10,
    ) -> None:
        """Store `action` once per `key`, then keep only the thread's `max_per_thread` newest."""
        require_aware(action.created_at, "action.created_at")
        async with (
            self.pool.connection() as conn,
            user_must_exist(user_id),
            conn.transaction(),
        ):
            await conn.execute(
                "INSERT INTO latest_actions (key, user_id, thread_id, created_at, capability,"
                " action, summary, when_text, external_ids)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                (
                    key,
                    user_id,
                    thread_id,
                    action.created_at,
                    action.capability,
                    action.action,
                    action.summary,
                    action.when,
                    Jsonb(action.external_ids),
                ),
            )
            await conn.execute(
                "DELETE FROM latest_actions WHERE user_id = %(u)s AND thread_id = %(t)s"
                " AND id NOT IN (SELECT id FROM latest_actions"
                "  WHERE user_id = %(u)s AND thread_id = %(t)s"
                "  ORDER BY created_at DESC, id DESC LIMIT %(n)s)",
                {"u": user_id, "t": thread_id, "n": max(max_per_thread, 0)},
            )

    async def latest(
        self,
        user_id: str,
        thread_id: str,
        *,
        now: datetime,
        limit: int = 3,
        within_hours: float = 12.0,
    ) -> list[LatestAction]:
        """The `limit` newest actions of the thread created within `within_hours` of `now`."""
        require_aware(now, "now")
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM latest_actions WHERE user_id = %s AND thread_id = %s"
                " AND created_at >= %s ORDER BY created_at DESC, id DESC LIMIT %s",
                (user_id, thread_id, now - timedelta(hours=within_hours), max(limit, 0)),
            )
            rows = await cur.fetchall()
        return [_action(r) for r in rows]

"""The audit log: who read, changed, approved or erased what, when and from where (issue 13).

Rows live in `audit_log` (migration 016), one user's rows only ever read with their `user_id`.
`details` holds counts and outcomes, never message, email or memory text. Erasing a user
deletes their rows (by cascade) and leaves an `ErasureReceipt`: a random id, the time and how
many rows of each kind were erased; nothing in it links back to the person.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from psycopg.types.json import Jsonb
from pydantic import BaseModel, Field

from memoir.db import Pool
from memoir.stores.users import hash_token

Actor = Literal["user", "system", "worker"]
Via = Literal["api", "chat", "cli", "worker"]
DetailValue = int | float | bool | str | None


class AuditAction(StrEnum):
    """What was done to the resource."""

    READ = "read"
    SEARCH = "search"
    SUBMIT = "submit"
    CHANGE = "change"
    DELETE = "delete"
    PIN = "pin"
    UNPIN = "unpin"
    ROLLBACK = "rollback"
    APPROVE = "approve"
    REJECT = "reject"
    EDIT = "edit"
    RESPOND = "respond"
    ANSWER = "answer"
    ISSUE_TOKEN = "issue_token"
    EXPORT = "export"


# How an Agent Inbox `HumanResponse.type` reads in the audit log.
ACTION_OF_RESPONSE = {
    "accept": AuditAction.APPROVE,
    "ignore": AuditAction.REJECT,
    "edit": AuditAction.EDIT,
    "response": AuditAction.RESPOND,
}


class AuditEntry(BaseModel):
    """One audited act on one resource of the user."""

    audit_id: int = Field(description="Increasing id; also the cursor of the next page.")
    actor: Actor = Field(description="'user' (with `token_id`), 'system' or 'worker'.")
    token_id: str | None = Field(
        None, description="First 12 hex digits of the sha256 of the token used."
    )
    action: str
    resource_kind: str = Field(description="turn, message, email, hitl_request, memory, ...")
    resource_id: str | None = None
    via: Via = Field(description="Where from: the HTTP API, a chat answer, the CLI or a worker.")
    route: str | None = Field(None, description="The API route, e.g. 'GET /v1/memories'.")
    at: datetime
    details: dict[str, DetailValue] = Field(default_factory=dict)


class ErasureReceipt(BaseModel):
    """What `DELETE /v1/me` leaves: no user id and nothing linkable, only what went and when."""

    receipt_id: uuid.UUID
    erased_at: datetime
    erased: dict[str, int] = Field(description="Rows erased per kind, and workflows terminated.")


def token_id(token: str) -> str:
    """The short, non-secret name of a bearer token in the audit log."""
    return hash_token(token)[:12]


# Reads and searches repeated within this many seconds by the same caller are one entry.
READ_WINDOW_SECONDS = 60
COALESCED = frozenset({AuditAction.READ, AuditAction.SEARCH})
# The same read is looked for among the user's latest entries only (bounded cost).
_RECENT = 50
_INSERT = f"""
INSERT INTO audit_log (user_id, actor, token_id, action, resource_kind, resource_id, via, route,
                       details)
SELECT %(user_id)s, %(actor)s, %(token_id)s, %(action)s, %(resource_kind)s, %(resource_id)s,
       %(via)s, %(route)s, %(details)s
WHERE NOT EXISTS (
    SELECT 1 FROM (
        SELECT * FROM audit_log WHERE user_id = %(user_id)s ORDER BY audit_id DESC LIMIT {_RECENT}
    ) recent
    WHERE recent.at > clock_timestamp() - make_interval(secs => %(window)s)
      AND recent.actor = %(actor)s AND recent.token_id IS NOT DISTINCT FROM %(token_id)s
      AND recent.action = %(action)s AND recent.resource_kind = %(resource_kind)s
      AND recent.resource_id IS NOT DISTINCT FROM %(resource_id)s
      AND recent.via = %(via)s
)
"""


class AuditLog:
    """Write and list a user's audit entries; erase them into an anonymous receipt."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def record(
        self,
        user_id: str,
        action: AuditAction,
        resource_kind: str,
        resource_id: str | None = None,
        *,
        actor: Actor = "user",
        token_ref: str | None = None,
        via: Via = "api",
        route: str | None = None,
        details: dict[str, DetailValue] | None = None,
    ) -> None:
        """Append one entry (`token_ref`: the `token_id` of the token used). A read the same
        caller made of the same resource within `READ_WINDOW_SECONDS` is not written again: a
        client polling a turn leaves one entry a minute, not one per poll."""
        row = {
            "user_id": user_id,
            "actor": actor,
            "token_id": token_ref,
            "action": action.value,
            "resource_kind": resource_kind,
            "resource_id": resource_id,
            "via": via,
            "route": route,
            "details": Jsonb(details or {}),
            "window": READ_WINDOW_SECONDS if action in COALESCED else -1,
        }
        async with self.pool.connection() as conn:
            await conn.execute(_INSERT, row)

    async def entries(
        self, user_id: str, limit: int = 50, before: int | None = None
    ) -> list[AuditEntry]:
        """The user's entries, newest first; with `before`, only those older than that id."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM audit_log WHERE user_id = %s"
                " AND (%s::bigint IS NULL OR audit_id < %s::bigint)"
                " ORDER BY audit_id DESC LIMIT %s",
                (user_id, before, before, limit),
            )
            rows = await cur.fetchall()
        return [AuditEntry.model_validate(_entry(row)) for row in rows]

    async def counts(self, user_id: str) -> dict[str, int]:
        """How many rows of each table hold this user's data (tables with a `user_id` column)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT DISTINCT table_name FROM information_schema.columns"
                " WHERE column_name = 'user_id' AND table_schema = current_schema()"
                " AND table_name <> 'users' ORDER BY table_name"
            )
            tables = [row["table_name"] for row in await cur.fetchall()]
            counts: dict[str, int] = {}
            for table in tables:
                quoted = '"' + table.replace('"', '""') + '"'
                cur = await conn.execute(
                    f"SELECT count(*) AS n FROM {quoted} WHERE user_id = %s",  # noqa: S608
                    (user_id,),
                )
                row = await cur.fetchone()
                if row is not None and row["n"]:
                    counts[table] = int(row["n"])
        return counts

    async def receipt(self, erased: dict[str, int]) -> ErasureReceipt:
        """Keep and return an anonymous receipt of an erasure."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "INSERT INTO erasure_receipts (receipt_id, erased) VALUES (%s, %s) RETURNING *",
                (uuid.uuid4(), Jsonb(erased)),
            )
            row = await cur.fetchone()
        assert row is not None
        return ErasureReceipt.model_validate(row)

    async def get_receipt(self, receipt_id: uuid.UUID) -> ErasureReceipt | None:
        """A kept receipt, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM erasure_receipts WHERE receipt_id = %s", (receipt_id,)
            )
            row = await cur.fetchone()
        return None if row is None else ErasureReceipt.model_validate(row)


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    """A row as an `AuditEntry`'s fields (without the user id)."""
    return {key: value for key, value in row.items() if key != "user_id"}

"""Preference memory (seed 000 sections 3-4): versioned profiles per user and namespace.

Every change is a new version carrying the decision that caused it (`notify.ignore`,
`rollback:3`, ...), so profiles can be listed, diffed and rolled back.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from memoir.db import Pool
from memoir.models import PREFERENCE_NAMESPACES
from memoir.stores._common import user_must_exist

PREFERENCE_KEY = "user_preferences"  # the seed's store key; one profile per namespace
DEFAULT_DECISION = "default"
# First key of the two-key advisory locks that serialise version numbering per (user, namespace).
_LOCK_CLASS = 7263

DEFAULT_PREFERENCES: dict[str, str] = {
    "triage_preferences": """\
Ignore (no reply, no notification):
- Marketing emails, promotions and newsletters
- Spam, phishing or otherwise suspicious emails
- Mass announcements and mailing-list digests not addressed to me personally
- Threads where I am only in CC and nobody asks me anything

Notify (worth knowing, no reply needed):
- Deploy, build and CI notifications, e.g. "deploy finished"
- Receipts, invoices, order and shipping confirmations
- Documents or files shared with me
- Project status updates without action items for me
- Colleagues out sick or on vacation
- Subscription, renewal and account notices

Respond (needs a reply or an action):
- Direct questions addressed to me
- Meeting requests and scheduling questions
- Requests from colleagues, managers or clients
- Client questions about project status or features
- Bug reports about projects I work on
""",
    "response_preferences": """\
- Write professional, concise replies; match the language of the message.
- Answer the question first, then add only the context that is needed.
- If the message mentions a deadline, acknowledge it explicitly.
- For requests that need investigation, say who will look into it and when to expect an answer.
- For meeting requests: confirm one of the proposed times if it is free; if none is proposed,
  offer a few options. Restate the meeting's purpose and duration.
- Acknowledge any documents, drafts or materials the sender mentions.
- Sign off with my name; no emojis.
""",
    "cal_preferences": """\
- Meetings are 30 minutes by default; 15 minutes is fine for quick syncs.
- Do not schedule anything before 9:00 or after 18:00 in my time zone.
- Avoid back-to-back meetings: leave at least 10 minutes between them.
- Prefer mornings for focused work and afternoons for meetings.
- Include a short agenda in every invitation.
""",
}


class PreferenceVersion(BaseModel):
    """One stored version of a preference profile."""

    user_id: str
    namespace: str
    version: int
    content: str
    decision: str
    turn_id: str | None = None
    created_at: datetime


def check_namespace(namespace: str) -> str:
    """Return `namespace`, or raise `ValueError` when it is not a preference namespace."""
    if namespace not in PREFERENCE_NAMESPACES:
        raise ValueError(
            f"unknown preference namespace {namespace!r}; "
            f"expected one of {', '.join(PREFERENCE_NAMESPACES)}"
        )
    return namespace


def diff(old: str | PreferenceVersion, new: str | PreferenceVersion) -> str:
    """A unified diff from `old` to `new` (texts or versions); empty when they are equal."""
    old_label = f"v{old.version}" if isinstance(old, PreferenceVersion) else "old"
    new_label = f"v{new.version}" if isinstance(new, PreferenceVersion) else "new"
    old_text = old.content if isinstance(old, PreferenceVersion) else old
    new_text = new.content if isinstance(new, PreferenceVersion) else new
    lines = difflib.unified_diff(
        old_text.splitlines(),
        new_text.splitlines(),
        fromfile=old_label,
        tofile=new_label,
        lineterm="",
    )
    return "\n".join(lines)


def _version(row: dict[str, Any]) -> PreferenceVersion:
    return PreferenceVersion.model_validate(row)


class PreferenceStore:
    """Versioned preference profiles; the latest version is the current profile."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def _latest(self, user_id: str, namespace: str) -> PreferenceVersion | None:
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM preference_versions WHERE user_id = %s AND namespace = %s"
                " ORDER BY version DESC LIMIT 1",
                (user_id, namespace),
            )
            row = await cur.fetchone()
        return _version(row) if row else None

    async def current(self, user_id: str, namespace: str) -> PreferenceVersion:
        """The latest version, writing the default as version 1 when there is none."""
        check_namespace(namespace)
        latest = await self._latest(user_id, namespace)
        if latest is not None:
            return latest
        async with self.pool.connection() as conn, user_must_exist(user_id):
            await conn.execute(
                "INSERT INTO preference_versions (user_id, namespace, version, content, decision)"
                " VALUES (%s, %s, 1, %s, %s) ON CONFLICT DO NOTHING",
                (user_id, namespace, DEFAULT_PREFERENCES[namespace], DEFAULT_DECISION),
            )
        latest = await self._latest(user_id, namespace)
        assert latest is not None
        return latest

    async def get_memory(self, user_id: str, namespace: str) -> str:
        """The current profile text (seed 000 `get_memory`: the default is stored on first read)."""
        return (await self.current(user_id, namespace)).content

    async def get_memories(self, user_id: str, namespaces: Sequence[str]) -> dict[str, str]:
        """`get_memory` of each namespace, by namespace."""
        return {ns: await self.get_memory(user_id, ns) for ns in namespaces}

    async def put(
        self,
        user_id: str,
        namespace: str,
        content: str,
        *,
        decision: str,
        turn_id: str | None = None,
    ) -> PreferenceVersion:
        """Store `content` as a new version caused by `decision`.

        With a `turn_id`, a retry (same user, namespace, turn_id and decision) returns the version
        stored the first time instead of adding another.
        """
        check_namespace(namespace)
        if not decision:
            raise ValueError("decision must not be empty")
        async with (
            self.pool.connection() as conn,
            user_must_exist(user_id),
            conn.transaction(),
        ):
            await conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                (_LOCK_CLASS, f"{user_id}/{namespace}"),
            )
            if turn_id is not None:
                cur = await conn.execute(
                    "SELECT * FROM preference_versions WHERE user_id = %s AND namespace = %s"
                    " AND turn_id = %s AND decision = %s",
                    (user_id, namespace, turn_id, decision),
                )
                existing = await cur.fetchone()
                if existing is not None:
                    return _version(existing)
            cur = await conn.execute(
                "INSERT INTO preference_versions"
                " (user_id, namespace, version, content, decision, turn_id)"
                " SELECT %(u)s, %(n)s, coalesce(max(version), 0) + 1, %(c)s, %(d)s, %(t)s"
                " FROM preference_versions WHERE user_id = %(u)s AND namespace = %(n)s"
                " RETURNING *",
                {"u": user_id, "n": namespace, "c": content, "d": decision, "t": turn_id},
            )
            row = await cur.fetchone()
        assert row is not None
        return _version(row)

    async def history(self, user_id: str, namespace: str) -> list[PreferenceVersion]:
        """Every version, newest first."""
        check_namespace(namespace)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM preference_versions WHERE user_id = %s AND namespace = %s"
                " ORDER BY version DESC",
                (user_id, namespace),
            )
            rows = await cur.fetchall()
        return [_version(r) for r in rows]

    async def get_version(
        self, user_id: str, namespace: str, version: int
    ) -> PreferenceVersion | None:
        """One version, or None."""
        check_namespace(namespace)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM preference_versions WHERE user_id = %s AND namespace = %s"
                " AND version = %s",
                (user_id, namespace, version),
            )
            row = await cur.fetchone()
        return _version(row) if row else None

    async def rollback(
        self, user_id: str, namespace: str, version: int, *, turn_id: str | None = None
    ) -> PreferenceVersion:
        """Write a new version with the content of `version` (decision `rollback:{version}`).

        Raises `LookupError` when that version does not exist.
        """
        old = await self.get_version(user_id, namespace, version)
        if old is None:
            raise LookupError(f"{namespace} has no version {version} for user {user_id!r}")
        return await self.put(
            user_id, namespace, old.content, decision=f"rollback:{version}", turn_id=turn_id
        )

"""Users, their capabilities, and their API bearer tokens (only the token's sha256 is stored)."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memoir.db import Pool
from memoir.models import UserProfile
from memoir.models.messages import ID_PATTERN
from memoir.stores._common import UnknownUserError, user_must_exist

_ID_RE = re.compile(ID_PATTERN)


class UserExistsError(ValueError):
    """A user with this user_id already exists."""


def hash_token(token: str) -> str:
    """The sha256 hex digest under which a bearer token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_user_id() -> str:
    """A random user id (`u-3f9a0c1be27d`).

    It carries nothing of the person: user ids travel in clear in workflow ids, search
    attributes, logs and the Web UI, which payload encryption does not cover.
    """
    return f"u-{secrets.token_hex(6)}"


def _validate_timezone(timezone: str) -> None:
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone {timezone!r} (expected an IANA name)") from None


def _profile(row: Mapping[str, Any]) -> UserProfile:
    return UserProfile(
        user_id=row["user_id"],
        name=row["name"],
        timezone=row["timezone"],
        language=row["language"],
        capabilities=list(row["capabilities"]),
    )


def _unique(caps: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(c.strip() for c in caps if c.strip()))


class UserStore:
    """Create, find and erase users; issue and check bearer tokens."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def create_user(
        self,
        name: str,
        *,
        user_id: str | None = None,
        timezone: str = "UTC",
        language: str = "en",
        capabilities: Iterable[str] = ("reminders",),
    ) -> tuple[UserProfile, str]:
        """Create a user and a first bearer token; returns the profile and the token (shown once).

        Raises `ValueError` for an invalid user_id or timezone, `UserExistsError` when taken.
        """
        name = name.strip()
        if not name:
            raise ValueError("name must not be empty")
        if user_id is None:
            user_id = new_user_id()
        elif not _ID_RE.fullmatch(user_id) or len(user_id) > 200:
            raise ValueError(f"invalid user_id {user_id!r}: no spaces, ':' or '/' allowed")
        _validate_timezone(timezone)
        token = secrets.token_urlsafe(32)
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "INSERT INTO users (user_id, name, timezone, language, capabilities)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (user_id) DO NOTHING RETURNING *",
                (user_id, name, timezone, language, _unique(capabilities)),
            )
            row = await cur.fetchone()
            if row is None:
                raise UserExistsError(f"user_id {user_id!r} already exists")
            await conn.execute(
                "INSERT INTO api_tokens (token_sha256, user_id) VALUES (%s, %s)",
                (hash_token(token), user_id),
            )
        return _profile(row), token

    async def get_user(self, user_id: str) -> UserProfile | None:
        """The user's profile, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute("SELECT * FROM users WHERE user_id = %s", (user_id,))
            row = await cur.fetchone()
        return _profile(row) if row else None

    async def user_for_token(self, token: str) -> UserProfile | None:
        """The user a bearer token belongs to, or None for an unknown token."""
        if not token:
            return None
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT u.* FROM api_tokens t JOIN users u USING (user_id)"
                " WHERE t.token_sha256 = %s",
                (hash_token(token),),
            )
            row = await cur.fetchone()
        return _profile(row) if row else None

    async def issue_token(self, user_id: str) -> str:
        """A new bearer token for the user (older tokens stay valid)."""
        token = secrets.token_urlsafe(32)
        async with self.pool.connection() as conn, user_must_exist(user_id):
            await conn.execute(
                "INSERT INTO api_tokens (token_sha256, user_id) VALUES (%s, %s)",
                (hash_token(token), user_id),
            )
        return token

    async def set_capabilities(self, user_id: str, caps: Iterable[str]) -> UserProfile:
        """Replace the user's connected capabilities; raises `UnknownUserError`."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE users SET capabilities = %s WHERE user_id = %s RETURNING *",
                (_unique(caps), user_id),
            )
            row = await cur.fetchone()
        if row is None:
            raise UnknownUserError(f"unknown user_id {user_id!r}")
        return _profile(row)

    async def list_users(self) -> list[UserProfile]:
        """Every user, oldest first (admin / CLI use)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute("SELECT * FROM users ORDER BY created_at, user_id")
            rows = await cur.fetchall()
        return [_profile(r) for r in rows]

    async def delete_user(self, user_id: str) -> bool:
        """Erase the user and, through cascades, everything of theirs; False if unknown."""
        async with self.pool.connection() as conn:
            cur = await conn.execute("DELETE FROM users WHERE user_id = %s", (user_id,))
            return cur.rowcount > 0

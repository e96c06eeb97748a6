"""Helpers shared by the stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from psycopg import errors


class UnknownUserError(LookupError):
    """The user_id names no user (never created, or erased)."""


@asynccontextmanager
async def user_must_exist(user_id: str) -> AsyncIterator[None]:
    """Turn a foreign-key violation on `users` into `UnknownUserError`."""
    try:
        yield
    except errors.ForeignKeyViolation as exc:
        raise UnknownUserError(f"unknown user_id {user_id!r}") from exc


def require_aware(value: datetime, name: str) -> datetime:
    """Reject naive datetimes: Postgres would read them in the session time zone."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got {value.isoformat()}")
    return value

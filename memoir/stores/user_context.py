"""The user's structured context (seed 001 `UserContext`) and its one-line profile.

Profile sync merges proposed changes into it; every turn renders it with `profile_line`. Fields
without a value fall back to the users row (name, timezone, language).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from psycopg.types.json import Jsonb
from pydantic import BaseModel, Field

from memoir.db import Pool
from memoir.stores._common import user_must_exist

SCALAR_FIELDS = ("name", "tone", "language", "city", "timezone")
LIST_FIELDS = ("goals", "interests")
PROFILE_LIST_MAX = 5  # items of goals / interests shown in the profile line


class UserContext(BaseModel):
    """What the assistant knows about the person, beyond single memories."""

    name: str | None = None
    tone: str | None = None
    language: str | None = None
    city: str | None = None
    timezone: str | None = Field(default=None, description="IANA name, e.g. Europe/Paris")
    goals: list[str] = Field(default_factory=list)
    interests: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


def _clean(text: str) -> str:
    """One line, single spaces."""
    return " ".join(text.split())


def _union(current: Iterable[str], new: Iterable[str]) -> list[str]:
    """Current items then new ones, without case-insensitive duplicates or blanks."""
    seen: set[str] = set()
    out: list[str] = []
    for item in [*current, *new]:
        text = _clean(item)
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


def _check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone {value!r} (expected an IANA name)") from None
    return value


def merge_context(ctx: UserContext, changes: Mapping[str, Any]) -> UserContext:
    """`ctx` with `changes` applied: scalars replaced, lists unioned, other keys into `extra`.

    None and blank values change nothing. Raises `ValueError` for a value of the wrong type or
    an unknown timezone.
    """
    data = ctx.model_dump()
    for key, value in changes.items():
        if value is None:
            continue
        if key in SCALAR_FIELDS:
            if not isinstance(value, str):
                raise ValueError(f"{key} must be text, got {value!r}")
            text = _clean(value)
            if text:
                data[key] = _check_timezone(text) if key == "timezone" else text
        elif key in LIST_FIELDS:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list | tuple | set) or not all(
                isinstance(i, str) for i in items
            ):
                raise ValueError(f"{key} must be text or a list of text, got {value!r}")
            data[key] = _union(data[key], items)
        elif key == "extra":
            if not isinstance(value, Mapping):
                raise ValueError(f"extra must be a mapping, got {value!r}")
            data["extra"] = {**data["extra"], **value}
        else:
            data["extra"] = {**data["extra"], key: value}
    return UserContext.model_validate(data)


def profile_line(ctx: UserContext) -> str:
    """The compact one-line profile of seed 001 `_build_profile_line`: only known fields."""
    parts: list[str] = []
    for key in SCALAR_FIELDS:
        value = getattr(ctx, key)
        if value and _clean(value):
            parts.append(f"{key}: {_clean(value)}")
    for key in LIST_FIELDS:
        items = [_clean(i) for i in getattr(ctx, key) if _clean(i)]
        if items:
            shown = items[:PROFILE_LIST_MAX]
            more = f" (+{len(items) - len(shown)} more)" if len(items) > len(shown) else ""
            parts.append(f"{key}: {', '.join(shown)}{more}")
    for key, value in sorted(ctx.extra.items()):
        if isinstance(value, bool | int | float) or (isinstance(value, str) and _clean(value)):
            parts.append(f"{_clean(str(key))}: {_clean(str(value))}")
    return "User profile — " + " | ".join(parts) if parts else ""


def _context(row: Mapping[str, Any]) -> UserContext:
    return UserContext(
        name=row["name"] or row["user_name"],
        tone=row["tone"],
        language=row["language"] or row["user_language"],
        city=row["city"],
        timezone=row["timezone"] or row["user_timezone"],
        goals=list(row["goals"] or []),
        interests=list(row["interests"] or []),
        extra=dict(row["extra"] or {}),
    )


_SELECT = (
    "SELECT u.name AS user_name, u.timezone AS user_timezone, u.language AS user_language,"
    " c.name, c.tone, c.language, c.city, c.timezone, c.goals, c.interests, c.extra"
    " FROM users u LEFT JOIN user_context c ON c.user_id = u.user_id WHERE u.user_id = %s"
)


class UserContextStore:
    """Read and merge each user's `UserContext`."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def get(self, user_id: str) -> UserContext:
        """The user's context, completed from the users row; empty for an unknown user."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(_SELECT, (user_id,))
            row = await cur.fetchone()
        return _context(row) if row else UserContext()

    async def apply(self, user_id: str, changes: Mapping[str, Any]) -> UserContext:
        """Merge `changes` (see `merge_context`) into the stored context; returns the result.

        Raises `UnknownUserError` for an unknown user, `ValueError` for an invalid change.
        """
        async with self.pool.connection() as conn, conn.transaction():
            async with user_must_exist(user_id):
                await conn.execute(
                    "INSERT INTO user_context (user_id) VALUES (%s) ON CONFLICT DO NOTHING",
                    (user_id,),
                )
            cur = await conn.execute(
                "SELECT name, tone, language, city, timezone, goals, interests, extra"
                " FROM user_context WHERE user_id = %s FOR UPDATE",
                (user_id,),
            )
            row = await cur.fetchone()
            assert row is not None
            stored = UserContext(
                **{k: row[k] for k in SCALAR_FIELDS},
                goals=list(row["goals"]),
                interests=list(row["interests"]),
                extra=dict(row["extra"]),
            )
            merged = merge_context(stored, changes)
            await conn.execute(
                "UPDATE user_context SET name = %s, tone = %s, language = %s, city = %s,"
                " timezone = %s, goals = %s, interests = %s, extra = %s, updated_at = now()"
                " WHERE user_id = %s",
                (
                    merged.name,
                    merged.tone,
                    merged.language,
                    merged.city,
                    merged.timezone,
                    merged.goals,
                    merged.interests,
                    Jsonb(merged.extra),
                    user_id,
                ),
            )
        return await self.get(user_id)

"""UserStore: users, capabilities, bearer tokens, erasure."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

import pytest

from memoir.models.messages import ID_PATTERN
from memoir.stores import Stores, UnknownUserError, UserExistsError


async def test_create_user_returns_profile_with_defaults(stores: Stores) -> None:
    profile, _ = await stores.users.create_user("Ada Lovelace")
    assert profile.name == "Ada Lovelace"
    assert profile.timezone == "UTC"
    assert profile.language == "en"
    assert profile.capabilities == ["reminders"]


async def test_generated_user_id_is_random_and_valid_in_workflow_ids(stores: Stores) -> None:
    profile, _ = await stores.users.create_user("Ana María: O'Neil / Ops")
    assert re.match(ID_PATTERN, profile.user_id)
    assert re.fullmatch(r"u-[0-9a-f]{12}", profile.user_id)


async def test_generated_user_id_carries_nothing_of_the_name(stores: Stores) -> None:
    profile, _ = await stores.users.create_user("Tess Ogilvy")
    assert "tess" not in profile.user_id and "ogilvy" not in profile.user_id


async def test_a_user_id_ending_in_a_newline_is_refused(stores: Stores) -> None:
    with pytest.raises(ValueError, match="invalid user_id"):
        await stores.users.create_user("X", user_id="someone\n")


async def test_explicit_user_id_is_kept_and_cannot_be_taken_twice(stores: Stores) -> None:
    user_id = f"explicit-{datetime.now(UTC).timestamp()}".replace(".", "")
    profile, _ = await stores.users.create_user("X", user_id=user_id)
    assert profile.user_id == user_id
    with pytest.raises(UserExistsError):
        await stores.users.create_user("Y", user_id=user_id)


async def test_invalid_user_id_or_timezone_is_rejected(stores: Stores) -> None:
    with pytest.raises(ValueError, match="user_id"):
        await stores.users.create_user("X", user_id="a:b")
    with pytest.raises(ValueError, match="timezone"):
        await stores.users.create_user("X", timezone="Mars/Olympus")


async def test_get_user_returns_profile_or_none(stores: Stores) -> None:
    profile, _ = await stores.users.create_user("Grace", timezone="Europe/Paris")
    assert await stores.users.get_user(profile.user_id) == profile
    assert await stores.users.get_user("nobody-here") is None


async def test_token_identifies_its_user_and_only_its_hash_is_stored(stores: Stores) -> None:
    profile, token = await stores.users.create_user("Linus")
    assert await stores.users.user_for_token(token) == profile
    assert await stores.users.user_for_token(token + "x") is None
    assert await stores.users.user_for_token("") is None
    async with stores.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT token_sha256 FROM api_tokens WHERE user_id = %s", (profile.user_id,)
        )
        stored = [r["token_sha256"] for r in await cur.fetchall()]
    assert stored == [hashlib.sha256(token.encode()).hexdigest()]


async def test_issue_token_adds_a_valid_token(stores: Stores) -> None:
    profile, first = await stores.users.create_user("Ken")
    second = await stores.users.issue_token(profile.user_id)
    assert second != first
    assert await stores.users.user_for_token(first) == profile
    assert await stores.users.user_for_token(second) == profile
    with pytest.raises(UnknownUserError):
        await stores.users.issue_token("nobody-here")


async def test_set_capabilities_replaces_them_without_duplicates(stores: Stores) -> None:
    profile, _ = await stores.users.create_user("Barbara")
    updated = await stores.users.set_capabilities(profile.user_id, ["email", "calendar", "email"])
    assert updated.capabilities == ["email", "calendar"]
    again = await stores.users.get_user(profile.user_id)
    assert again is not None and again.capabilities == ["email", "calendar"]
    with pytest.raises(UnknownUserError):
        await stores.users.set_capabilities("nobody-here", [])


async def test_list_users_includes_created_users(stores: Stores) -> None:
    a, _ = await stores.users.create_user("Listed A")
    b, _ = await stores.users.create_user("Listed B")
    ids = [u.user_id for u in await stores.users.list_users()]
    assert ids.index(a.user_id) < ids.index(b.user_id)


async def test_delete_user_erases_everything_of_that_user(stores: Stores) -> None:
    profile, token = await stores.users.create_user("Erased")
    uid = profile.user_id
    await stores.interactions.save_interaction(
        key=f"{uid}:m1", user_id=uid, thread_id="t", actor="user", content="hi"
    )
    await stores.preferences.get_memory(uid, "triage_preferences")
    await stores.reminders.create(
        user_id=uid,
        thread_id="t",
        text="water plants",
        due_at=datetime(2030, 1, 1, tzinfo=UTC),
        idempotency_key=f"{uid}:r1",
    )
    other, _ = await stores.users.create_user("Kept")

    assert await stores.users.delete_user(uid) is True

    assert await stores.users.get_user(uid) is None
    assert await stores.users.user_for_token(token) is None
    async with stores.pool.connection() as conn:
        for table in ("interactions", "preference_versions", "reminders", "api_tokens"):
            cur = await conn.execute(
                f"SELECT count(*) AS n FROM {table} WHERE user_id = %s", (uid,)
            )
            row = await cur.fetchone()
            assert row is not None and row["n"] == 0, table
    assert await stores.users.get_user(other.user_id) == other
    assert await stores.users.delete_user(uid) is False

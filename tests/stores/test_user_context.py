"""UserContextStore: the user's structured context, merged changes, and the one-line profile."""

from __future__ import annotations

import asyncio

import pytest

from memoir.models import UserProfile
from memoir.stores import Stores, UnknownUserError, UserContext
from memoir.stores.user_context import profile_line


@pytest.fixture
async def paris_user(stores: Stores) -> UserProfile:
    """A user created with a timezone and a language of their own."""
    profile, _token = await stores.users.create_user(
        "Ana María", timezone="Europe/Paris", language="es"
    )
    return profile


async def test_get_without_a_context_falls_back_to_the_users_row(
    stores: Stores, paris_user: UserProfile
) -> None:
    ctx = await stores.user_context.get(paris_user.user_id)
    assert ctx == UserContext(name="Ana María", language="es", timezone="Europe/Paris")


async def test_get_for_an_unknown_user_is_empty(stores: Stores) -> None:
    assert await stores.user_context.get("nobody-000000") == UserContext()


async def test_apply_replaces_scalars_and_unions_lists(
    stores: Stores, paris_user: UserProfile
) -> None:
    uid = paris_user.user_id
    await stores.user_context.apply(uid, {"city": "Lyon", "goals": ["run a marathon"]})
    ctx = await stores.user_context.apply(
        uid,
        {
            "city": "Paris",
            "tone": "warm",
            "goals": ["Run a marathon", "learn Go"],
            "interests": "jazz",
        },
    )
    assert ctx.city == "Paris" and ctx.tone == "warm"
    assert ctx.goals == ["run a marathon", "learn Go"]
    assert ctx.interests == ["jazz"]
    assert await stores.user_context.get(uid) == ctx


async def test_stored_fields_take_precedence_over_the_users_row(
    stores: Stores, paris_user: UserProfile
) -> None:
    ctx = await stores.user_context.apply(
        paris_user.user_id, {"name": "Ana", "timezone": "America/Bogota"}
    )
    assert ctx.name == "Ana" and ctx.timezone == "America/Bogota" and ctx.language == "es"


async def test_apply_ignores_none_and_blank_values(stores: Stores, paris_user: UserProfile) -> None:
    uid = paris_user.user_id
    await stores.user_context.apply(uid, {"city": "Paris", "tone": "warm"})
    ctx = await stores.user_context.apply(uid, {"city": None, "tone": "   ", "goals": []})
    assert ctx.city == "Paris" and ctx.tone == "warm" and ctx.goals == []


async def test_apply_keeps_unknown_keys_in_extra(stores: Stores, paris_user: UserProfile) -> None:
    uid = paris_user.user_id
    await stores.user_context.apply(uid, {"pronouns": "she/her"})
    ctx = await stores.user_context.apply(uid, {"extra": {"pet": "Luna"}})
    assert ctx.extra == {"pronouns": "she/her", "pet": "Luna"}


async def test_apply_rejects_an_unknown_timezone(stores: Stores, paris_user: UserProfile) -> None:
    with pytest.raises(ValueError, match="unknown timezone"):
        await stores.user_context.apply(paris_user.user_id, {"timezone": "Mars/Olympus"})
    assert (await stores.user_context.get(paris_user.user_id)).timezone == "Europe/Paris"


async def test_apply_rejects_values_of_the_wrong_type(
    stores: Stores, paris_user: UserProfile
) -> None:
    with pytest.raises(ValueError, match="city must be text"):
        await stores.user_context.apply(paris_user.user_id, {"city": 75})
    with pytest.raises(ValueError, match="goals must be text or a list"):
        await stores.user_context.apply(paris_user.user_id, {"goals": [1, 2]})


async def test_apply_for_an_unknown_user_raises(stores: Stores) -> None:
    with pytest.raises(UnknownUserError):
        await stores.user_context.apply("nobody-000000", {"city": "Paris"})


async def test_concurrent_applies_keep_every_change(
    stores: Stores, paris_user: UserProfile
) -> None:
    uid = paris_user.user_id
    await asyncio.gather(
        *(stores.user_context.apply(uid, {"interests": [f"topic {i}"]}) for i in range(5))
    )
    ctx = await stores.user_context.get(uid)
    assert sorted(ctx.interests) == [f"topic {i}" for i in range(5)]


async def test_erasing_the_user_erases_the_context(stores: Stores, paris_user: UserProfile) -> None:
    await stores.user_context.apply(paris_user.user_id, {"city": "Paris"})
    assert await stores.users.delete_user(paris_user.user_id)
    assert await stores.user_context.get(paris_user.user_id) == UserContext()


def test_profile_line_shows_only_known_fields_on_one_line() -> None:
    ctx = UserContext(
        name="Ana",
        city="Paris",
        timezone="Europe/Paris",
        goals=["run a\nmarathon"],
        extra={"pronouns": "she/her", "nested": {"a": 1}},
    )
    assert profile_line(ctx) == (
        "User profile — name: Ana | city: Paris | timezone: Europe/Paris"
        " | goals: run a marathon | pronouns: she/her"
    )


def test_profile_line_of_an_empty_context_is_empty() -> None:
    assert profile_line(UserContext()) == ""


def test_profile_line_shortens_long_lists() -> None:
    ctx = UserContext(interests=[f"i{n}" for n in range(8)])
    assert profile_line(ctx) == "User profile — interests: i0, i1, i2, i3, i4 (+3 more)"

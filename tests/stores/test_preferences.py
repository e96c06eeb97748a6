"""PreferenceStore: seed 000 get_memory defaults, versions, retries, history, rollback, diff."""

from __future__ import annotations

import asyncio

import pytest

from memoir.models import PREFERENCE_NAMESPACES, UserProfile
from memoir.stores import DEFAULT_PREFERENCES, Stores
from memoir.stores.preferences import diff

NS = "triage_preferences"


def test_every_namespace_has_a_default() -> None:
    assert set(DEFAULT_PREFERENCES) == set(PREFERENCE_NAMESPACES)
    assert all(text.strip() for text in DEFAULT_PREFERENCES.values())


async def test_first_read_stores_the_default_as_version_one(
    stores: Stores, user: UserProfile
) -> None:
    content = await stores.preferences.get_memory(user.user_id, NS)
    assert content == DEFAULT_PREFERENCES[NS]
    (v1,) = await stores.preferences.history(user.user_id, NS)
    assert (v1.version, v1.decision, v1.content) == (1, "default", DEFAULT_PREFERENCES[NS])


async def test_repeated_and_concurrent_first_reads_store_one_default(
    stores: Stores, user: UserProfile
) -> None:
    await asyncio.gather(*(stores.preferences.get_memory(user.user_id, NS) for _ in range(3)))
    await stores.preferences.get_memory(user.user_id, NS)
    assert len(await stores.preferences.history(user.user_id, NS)) == 1


async def test_put_adds_a_version_that_becomes_current(stores: Stores, user: UserProfile) -> None:
    await stores.preferences.get_memory(user.user_id, NS)
    v2 = await stores.preferences.put(
        user.user_id, NS, "Ignore build emails.", decision="notify.ignore", turn_id="turn-1"
    )
    assert (v2.version, v2.decision, v2.turn_id) == (2, "notify.ignore", "turn-1")
    assert await stores.preferences.get_memory(user.user_id, NS) == "Ignore build emails."


async def test_get_memories_reads_each_namespace_current_profile(
    stores: Stores, user: UserProfile
) -> None:
    prefs = stores.preferences
    await prefs.put(user.user_id, "response_preferences", "Sign off: Cheers", decision="edit")
    assert await prefs.get_memories(user.user_id, ["response_preferences", "cal_preferences"]) == {
        "response_preferences": "Sign off: Cheers",
        "cal_preferences": DEFAULT_PREFERENCES["cal_preferences"],
    }


async def test_retried_put_returns_the_first_version(stores: Stores, user: UserProfile) -> None:
    uid = user.user_id
    first = await stores.preferences.put(uid, NS, "A", decision="notify.respond", turn_id="t-9")
    retry = await stores.preferences.put(uid, NS, "A'", decision="notify.respond", turn_id="t-9")
    assert retry == first
    assert len(await stores.preferences.history(uid, NS)) == 1


async def test_concurrent_puts_get_distinct_versions(stores: Stores, user: UserProfile) -> None:
    uid = user.user_id
    made = await asyncio.gather(
        *(stores.preferences.put(uid, NS, f"c{i}", decision="feedback") for i in range(3))
    )
    assert sorted(v.version for v in made) == [1, 2, 3]


async def test_history_is_newest_first_and_per_namespace(stores: Stores, user: UserProfile) -> None:
    uid = user.user_id
    await stores.preferences.get_memory(uid, NS)
    await stores.preferences.put(uid, NS, "two", decision="d2")
    await stores.preferences.put(uid, NS, "three", decision="d3")
    await stores.preferences.get_memory(uid, "cal_preferences")
    history = await stores.preferences.history(uid, NS)
    assert [(v.version, v.decision) for v in history] == [(3, "d3"), (2, "d2"), (1, "default")]


async def test_get_version_returns_one_version_or_none(stores: Stores, user: UserProfile) -> None:
    await stores.preferences.get_memory(user.user_id, NS)
    v1 = await stores.preferences.get_version(user.user_id, NS, 1)
    assert v1 is not None and v1.content == DEFAULT_PREFERENCES[NS]
    assert await stores.preferences.get_version(user.user_id, NS, 7) is None


async def test_rollback_writes_a_new_version_with_the_old_content(
    stores: Stores, user: UserProfile
) -> None:
    uid = user.user_id
    await stores.preferences.get_memory(uid, NS)
    await stores.preferences.put(uid, NS, "changed", decision="notify.ignore")
    rolled = await stores.preferences.rollback(uid, NS, 1)
    assert (rolled.version, rolled.decision) == (3, "rollback:1")
    assert await stores.preferences.get_memory(uid, NS) == DEFAULT_PREFERENCES[NS]
    with pytest.raises(LookupError):
        await stores.preferences.rollback(uid, NS, 42)


async def test_unknown_namespace_is_a_clear_value_error(stores: Stores, user: UserProfile) -> None:
    with pytest.raises(ValueError, match="unknown preference namespace 'email'.*triage_pref"):
        await stores.preferences.get_memory(user.user_id, "email")
    with pytest.raises(ValueError, match="unknown preference namespace"):
        await stores.preferences.put(user.user_id, "email", "x", decision="d")


def test_diff_is_a_unified_diff_of_the_changed_lines() -> None:
    out = diff("a\nb\nc", "a\nB\nc")
    assert out.splitlines() == ["--- old", "+++ new", "@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"]
    assert diff("same", "same") == ""


async def test_diff_of_versions_is_labelled_with_their_numbers(
    stores: Stores, user: UserProfile
) -> None:
    uid = user.user_id
    v1 = await stores.preferences.put(uid, NS, "x", decision="d1")
    v2 = await stores.preferences.put(uid, NS, "y", decision="d2")
    assert diff(v1, v2).splitlines()[:2] == ["--- v1", "+++ v2"]

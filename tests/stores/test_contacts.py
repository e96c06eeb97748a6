"""ContactStore: upsert by address, find by name words and typos, list, erase with the user."""

from __future__ import annotations

import pytest

from memoir.models import UserProfile
from memoir.stores import Stores, UnknownUserError
from memoir.stores.contacts import NewContact, contact_id_for


async def test_add_stores_a_contact_with_an_id_from_the_address(
    stores: Stores, user: UserProfile
) -> None:
    dan = await stores.contacts.add(user.user_id, "Dan Smith", "Dan@Example.com", phone="+1 555")
    assert (dan.name, dan.email, dan.phone, dan.source) == (
        "Dan Smith",
        "dan@example.com",
        "+1 555",
        "manual",
    )
    assert dan.contact_id == contact_id_for(user.user_id, "dan@example.com")
    assert dan.label == "Dan Smith <dan@example.com>"
    assert await stores.contacts.get(user.user_id, dan.contact_id) == dan


async def test_the_same_address_again_updates_the_contact(
    stores: Stores, user: UserProfile
) -> None:
    first = await stores.contacts.add(user.user_id, "Dan", "dan@example.com", phone="+1 555")
    again = await stores.contacts.add(user.user_id, "Dan Smith", "DAN@example.com", source="csv")
    assert again.contact_id == first.contact_id
    assert (again.name, again.phone, again.source) == ("Dan Smith", "+1 555", "csv")
    assert [c.name for c in await stores.contacts.list(user.user_id)] == ["Dan Smith"]


async def test_add_many_is_all_or_nothing(stores: Stores, user: UserProfile) -> None:
    good = NewContact(name="Ann", email="ann@example.com")
    with pytest.raises(ValueError, match="email"):
        await stores.contacts.add_many(user.user_id, [good, NewContact(name="Bob", email=" ")])
    assert await stores.contacts.list(user.user_id) == []


async def test_find_matches_name_words_and_typos_best_first(
    stores: Stores, user: UserProfile
) -> None:
    for name, email in [
        ("Dan Smith", "dan@example.com"),
        ("Daniel Ortiz", "daniel@example.org"),
        ("Jordan Dale", "jordan@example.com"),
        ("Alice Martin", "alice@example.com"),
    ]:
        await stores.contacts.add(user.user_id, name, email)
    found = await stores.contacts.find(user.user_id, "Dan")
    assert [c.name for c in found] == ["Dan Smith", "Daniel Ortiz"]
    assert [c.name for c in await stores.contacts.find(user.user_id, "dan smith")] == ["Dan Smith"]
    assert [c.name for c in await stores.contacts.find(user.user_id, "Alise Martin")] == [
        "Alice Martin"
    ]
    assert [c.name for c in await stores.contacts.find(user.user_id, "alice@example.com")] == [
        "Alice Martin"
    ]
    assert await stores.contacts.find(user.user_id, "Zed") == []
    assert await stores.contacts.find(user.user_id, "  ") == []


async def test_contacts_are_per_user_and_go_with_the_user(
    stores: Stores, user: UserProfile
) -> None:
    other, _ = await stores.users.create_user("Other")
    await stores.contacts.add(user.user_id, "Dan", "dan@example.com")
    await stores.contacts.add(other.user_id, "Dan", "dan@example.com")
    assert len(await stores.contacts.find(other.user_id, "Dan")) == 1
    await stores.users.delete_user(other.user_id)
    assert await stores.contacts.list(other.user_id) == []
    assert len(await stores.contacts.list(user.user_id)) == 1
    with pytest.raises(UnknownUserError):
        await stores.contacts.add(other.user_id, "Dan", "dan@example.com")

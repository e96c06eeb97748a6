"""ReminderStore: idempotent create, list, find, complete, delete, deliver once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from memoir.models import UserProfile
from memoir.stores import Reminder, Stores
from memoir.stores.reminders import reminder_id_for

DUE = datetime(2030, 3, 1, 9, 0, tzinfo=UTC)


async def _create(
    stores: Stores, user: UserProfile, text: str, key: str, due: datetime = DUE
) -> Reminder:
    return await stores.reminders.create(
        user_id=user.user_id,
        thread_id="t1",
        text=text,
        due_at=due,
        idempotency_key=f"turn:{user.user_id}:t1:{key}:s1",
    )


async def test_create_stores_a_pending_reminder_with_an_id_from_the_key(
    stores: Stores, user: UserProfile
) -> None:
    reminder = await _create(stores, user, "Call the dentist", "m1")
    assert reminder.status == "pending"
    assert reminder.due_at == DUE
    assert reminder.reminder_id == reminder_id_for(reminder.idempotency_key)
    assert reminder.reminder_id.startswith("rem_") and len(reminder.reminder_id) == 20
    assert await stores.reminders.get(user.user_id, reminder.reminder_id) == reminder


async def test_create_retry_returns_the_same_row(stores: Stores, user: UserProfile) -> None:
    first = await _create(stores, user, "Call the dentist", "m1")
    again = await _create(stores, user, "Call the dentist (retry)", "m1", due=DUE + timedelta(1))
    concurrent = await asyncio.gather(*(_create(stores, user, "x", "m1") for _ in range(3)))
    assert again == first
    assert all(r == first for r in concurrent)
    assert len(await stores.reminders.list(user.user_id)) == 1


async def test_create_rejects_naive_due_at(stores: Stores, user: UserProfile) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        await _create(stores, user, "x", "naive", due=datetime(2030, 1, 1))


async def test_list_is_ordered_by_due_at_and_filters_status(
    stores: Stores, user: UserProfile
) -> None:
    late = await _create(stores, user, "late", "m1", due=DUE + timedelta(days=2))
    early = await _create(stores, user, "early", "m2", due=DUE)
    done = await _create(stores, user, "done", "m3", due=DUE + timedelta(days=1))
    await stores.reminders.complete(user.user_id, done.reminder_id)
    pending = await stores.reminders.list(user.user_id)
    assert [r.text for r in pending] == [early.text, late.text]
    completed = await stores.reminders.list(user.user_id, status="completed")
    assert [r.text for r in completed] == ["done"]
    assert len(await stores.reminders.list(user.user_id, status=None)) == 3


async def test_find_matches_words_and_similar_text_best_first(
    stores: Stores, user: UserProfile
) -> None:
    await _create(stores, user, "Call the dentist about the crown", "m1")
    await _create(stores, user, "Pay the dentist invoice and call mom", "m2")
    await _create(stores, user, "Buy milk", "m3")
    found = await stores.reminders.find(user.user_id, "call dentist")
    assert [r.text for r in found][:1] == ["Call the dentist about the crown"]
    assert {r.text for r in found} == {
        "Call the dentist about the crown",
        "Pay the dentist invoice and call mom",
    }
    assert [r.text for r in await stores.reminders.find(user.user_id, "milks")] == ["Buy milk"]
    assert await stores.reminders.find(user.user_id, "quarterly taxes") == []
    assert await stores.reminders.find(user.user_id, "  ") == []


async def test_find_tolerates_typos(stores: Stores, user: UserProfile) -> None:
    await _create(stores, user, "Call the dentist about the crown", "m1")
    await _create(stores, user, "Renew passport", "m2")
    assert [r.text for r in await stores.reminders.find(user.user_id, "dentsit")] == [
        "Call the dentist about the crown"
    ]
    assert [r.text for r in await stores.reminders.find(user.user_id, "pasport")] == [
        "Renew passport"
    ]


async def test_find_ignores_other_users_and_non_pending(stores: Stores, user: UserProfile) -> None:
    other, _ = await stores.users.create_user("Other")
    await _create(stores, other, "Water the plants", "m1")
    mine = await _create(stores, user, "Water the plants", "m1")
    assert [r.reminder_id for r in await stores.reminders.find(user.user_id, "plants")] == [
        mine.reminder_id
    ]
    await stores.reminders.delete(user.user_id, mine.reminder_id)
    assert await stores.reminders.find(user.user_id, "plants") == []


async def test_find_treats_like_wildcards_literally(stores: Stores, user: UserProfile) -> None:
    await _create(stores, user, "Renew passport", "m1")
    assert await stores.reminders.find(user.user_id, "%%% ___") == []


async def test_complete_marks_completed_and_is_idempotent(
    stores: Stores, user: UserProfile
) -> None:
    reminder = await _create(stores, user, "Stretch", "m1")
    done = await stores.reminders.complete(user.user_id, reminder.reminder_id)
    assert done is not None and done.status == "completed" and done.completed_at is not None
    assert await stores.reminders.complete(user.user_id, reminder.reminder_id) == done
    assert await stores.reminders.complete(user.user_id, "rem_unknown") is None


async def test_delete_is_soft_and_hides_from_pending(stores: Stores, user: UserProfile) -> None:
    reminder = await _create(stores, user, "Old idea", "m1")
    deleted = await stores.reminders.delete(user.user_id, reminder.reminder_id)
    assert deleted is not None and deleted.status == "deleted"
    assert await stores.reminders.list(user.user_id) == []
    assert await stores.reminders.get(user.user_id, reminder.reminder_id) == deleted
    assert await stores.reminders.complete(user.user_id, reminder.reminder_id) is None


async def test_other_users_cannot_touch_a_reminder(stores: Stores, user: UserProfile) -> None:
    other, _ = await stores.users.create_user("Intruder")
    reminder = await _create(stores, user, "Private", "m1")
    assert await stores.reminders.get(other.user_id, reminder.reminder_id) is None
    assert await stores.reminders.complete(other.user_id, reminder.reminder_id) is None
    assert await stores.reminders.delete(other.user_id, reminder.reminder_id) is None
    assert (
        await stores.reminders.mark_delivered(reminder.reminder_id, user_id=other.user_id) is None
    )
    unchanged = await stores.reminders.get(user.user_id, reminder.reminder_id)
    assert unchanged is not None and unchanged.status == "pending"


async def test_mark_delivered_succeeds_once(stores: Stores, user: UserProfile) -> None:
    reminder = await _create(stores, user, "Take pills", "m1")
    results = await asyncio.gather(
        *(stores.reminders.mark_delivered(reminder.reminder_id) for _ in range(3))
    )
    delivered = [r for r in results if r is not None]
    assert len(delivered) == 1
    assert delivered[0].status == "delivered" and delivered[0].delivered_at is not None
    assert await stores.reminders.mark_delivered(reminder.reminder_id) is None


async def test_completed_or_deleted_reminders_are_not_delivered(
    stores: Stores, user: UserProfile
) -> None:
    done = await _create(stores, user, "a", "m1")
    gone = await _create(stores, user, "b", "m2")
    await stores.reminders.complete(user.user_id, done.reminder_id)
    await stores.reminders.delete(user.user_id, gone.reminder_id)
    assert await stores.reminders.mark_delivered(done.reminder_id) is None
    assert await stores.reminders.mark_delivered(gone.reminder_id) is None


async def test_due_gives_what_the_timer_needs(stores: Stores, user: UserProfile) -> None:
    reminder = await _create(stores, user, "Stand up", "m1")
    due = reminder.due()
    assert (due.reminder_id, due.user_id, due.due_at) == (reminder.reminder_id, user.user_id, DUE)

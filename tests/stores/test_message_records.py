"""MessageRecordStore: every message kept, found by meaning and by words, per user and window."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from memoir.models import UserProfile
from memoir.stores import MessageRecord, Stores

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _unit(i: int) -> list[float]:
    """A unit vector along axis `i` (of 384), slightly tilted towards axis 0."""
    v = [0.0] * 384
    v[i] = 1.0
    v[0] += 0.1
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _record(user: UserProfile, n: int, text: str, *, days: int = 0) -> MessageRecord:
    return MessageRecord(
        record_id=f"turn-{user.user_id}-{n}:user",
        user_id=user.user_id,
        thread_id="t1",
        message_id=f"m{n}",
        speaker="user",
        speaker_name="Maya",
        text=text,
        said_at=T0 + timedelta(days=days),
    )


async def test_a_record_is_written_once_per_record_id(stores: Stores, user: UserProfile) -> None:
    record = _record(user, 1, "I lost my job as a banker yesterday")
    assert await stores.messages.add(record, _unit(1)) is True
    assert await stores.messages.add(record, _unit(1)) is False
    assert await stores.messages.count(user.user_id) == 1


async def test_dense_search_ranks_the_nearest_record_first(
    stores: Stores, user: UserProfile
) -> None:
    for n in range(1, 6):
        await stores.messages.add(_record(user, n, f"message {n}"), _unit(n))
    found = await stores.messages.dense(user.user_id, _unit(3), top_k=2)
    assert [f.record.message_id for f in found][0] == "m3"
    assert found[0].score > 0.99 > found[1].score


async def test_lexical_search_finds_a_record_sharing_only_some_words(
    stores: Stores, user: UserProfile
) -> None:
    await stores.messages.add(_record(user, 1, "I drive a Prius these days"), _unit(1))
    await stores.messages.add(_record(user, 2, "We went hiking in the Alps"), _unit(2))
    found = await stores.messages.lexical(user.user_id, "What car does Maya drive?", top_k=5)
    assert [f.record.message_id for f in found] == ["m1"]


async def test_searches_respect_the_time_window(stores: Stores, user: UserProfile) -> None:
    await stores.messages.add(_record(user, 1, "adopted a greyhound", days=0), _unit(1))
    await stores.messages.add(_record(user, 2, "adopted a cat", days=30), _unit(2))
    since = T0 + timedelta(days=10)
    lexical = await stores.messages.lexical(user.user_id, "adopted", top_k=5, since=since)
    dense = await stores.messages.dense(user.user_id, _unit(1), top_k=5, since=since)
    assert [f.record.message_id for f in lexical] == ["m2"]
    assert [f.record.message_id for f in dense] == ["m2"]


async def test_another_users_records_are_never_found(
    stores: Stores, user: UserProfile, other_user: UserProfile
) -> None:
    await stores.messages.add(_record(other_user, 1, "my secret is a Prius"), _unit(1))
    assert await stores.messages.lexical(user.user_id, "Prius", top_k=5) == []
    assert await stores.messages.dense(user.user_id, _unit(1), top_k=5) == []


async def test_records_are_read_back_by_message_id(stores: Stores, user: UserProfile) -> None:
    await stores.messages.add(_record(user, 1, "first"), _unit(1))
    await stores.messages.add(_record(user, 2, "second", days=1), _unit(2))
    records = await stores.messages.by_message_ids(user.user_id, ["m2", "m1"])
    assert [r.text for r in records] == ["first", "second"]


def _towards(target: list[float], axis: int, weight: float) -> list[float]:
    """`target` tilted by `weight` towards `axis`, normalized: larger weights land farther."""
    v = list(target)
    v[axis] += weight
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


async def test_a_users_nearest_records_are_found_among_nearer_records_of_others(
    stores: Stores, user: UserProfile
) -> None:
    # Many other users' rows lie nearer the query than any of this user's: a search that ranked
    # everyone's vectors first and filtered by user afterwards would find few or none of hers.
    query = _unit(3)
    for o in range(10):
        other, _token = await stores.users.create_user(f"Other {o}")
        for n in range(20):
            vector = _towards(query, 100 + n, 0.05)
            await stores.messages.add(_record(other, n, f"other {n}"), vector)
    for n in range(1, 6):
        await stores.messages.add(_record(user, n, f"mine {n}"), _towards(query, 200 + n, 0.3 * n))
    found = await stores.messages.dense(user.user_id, query, top_k=3)
    assert [f.record.message_id for f in found] == ["m1", "m2", "m3"]
    assert found[0].score > found[1].score > found[2].score
    assert len(await stores.messages.dense(user.user_id, query, top_k=10)) == 5


async def test_a_long_reply_keeps_its_vector_and_words_in_the_row(
    stores: Stores, user: UserProfile
) -> None:
    # Migration 015: the vector and the tsvector stay in the row (the scans read them for every
    # record of the user); a long text moves out to TOAST instead.
    words = [f"topic{i} said{i % 7} about{i % 11} things{i % 13}" for i in range(60)]
    text = " ".join(words)
    assert len(text) > 1500
    await stores.messages.add(_record(user, 1, text), _unit(1))
    async with stores.messages.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT pg_column_toast_chunk_id(embedding) AS vector_chunk,"
            " pg_column_toast_chunk_id(tsv) AS tsv_chunk,"
            " pg_column_toast_chunk_id(text) IS NOT NULL AS text_out_of_line"
            " FROM message_records WHERE user_id = %s",
            (user.user_id,),
        )
        row = await cur.fetchone()
    assert row == {"vector_chunk": None, "tsv_chunk": None, "text_out_of_line": True}
    found = await stores.messages.lexical(user.user_id, "topic42", top_k=1)
    assert [f.record.text for f in found] == [text]

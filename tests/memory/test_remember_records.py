"""The remember stage keeps the message and the reply as records, with the history, atomically."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from activities.deps import Deps
from activities.remember import RememberActivities
from memoir.embeddings import LocalEmbedder
from memoir.llm import OfflineChatModel
from memoir.memory.records import (
    embed_records,
    speaker_name,
    turn_records,
)
from memoir.models import EmailMessage, IncomingMessage, RememberRequest, UserProfile
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from tests.faults import RefusingStore, refusing
from tests.memory.support import remember

MAY_7 = datetime(2023, 5, 7, 18, 30, tzinfo=UTC)


def stage(stores: Stores, offline: OfflineChatModel, embedder: LocalEmbedder) -> RememberActivities:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    return RememberActivities(Deps(settings, stores, offline, ToolRegistry({}), embedder))


def said_on_may_7(user: UserProfile, text: str, reply: str) -> RememberRequest:
    request = remember(user, text, reply=reply)
    message = request.message.model_copy(update={"received_at": MAY_7})
    return request.model_copy(update={"message": message})


async def test_the_message_and_the_reply_become_records_once(
    stores: Stores, user: UserProfile, offline: OfflineChatModel, local_embedder: LocalEmbedder
) -> None:
    remember_turn = stage(stores, offline, local_embedder).remember_turn
    request = said_on_may_7(user, "I lost my job as a banker", "Sorry to hear that.")
    events = await remember_turn(request)
    assert events == ["history.user", "history.agent", "record.user", "record.assistant"]
    mine, reply = await stores.messages.by_message_ids(user.user_id, ["msg-1", "msg-1:reply"])
    assert (mine.speaker, mine.speaker_name, mine.said_at) == ("user", user.name, MAY_7)
    assert (reply.speaker, reply.text, reply.speaker_name) == ("assistant", request.reply, None)
    assert reply.said_at >= MAY_7
    assert "record.user" not in await remember_turn(request)  # a retry writes nothing twice
    assert await stores.messages.count(user.user_id) == 2


async def test_a_failure_after_the_history_write_leaves_neither(
    stores: Stores, user: UserProfile, offline: OfflineChatModel, local_embedder: LocalEmbedder
) -> None:
    faults: list[RefusingStore] = []
    failing = refusing("messages", "add_in", faults)(stores)
    request = said_on_may_7(user, "I lost my job as a banker", "Sorry to hear that.")
    with pytest.raises(psycopg.OperationalError):
        await stage(failing, offline, local_embedder).remember_turn(request)
    assert await stores.messages.count(user.user_id) == 0
    assert await stores.interactions.recent_messages(user.user_id, "t1") == []
    faults[0].failing = False  # the activity's retry
    await stage(failing, offline, local_embedder).remember_turn(request)
    assert await stores.messages.count(user.user_id) == 2
    assert len(await stores.interactions.recent_messages(user.user_id, "t1")) == 2


async def test_the_name_the_turn_read_spares_the_users_lookup(
    stores: Stores, user: UserProfile, offline: OfflineChatModel, local_embedder: LocalEmbedder
) -> None:
    faults: list[RefusingStore] = []
    no_users = refusing("users", "get_user", faults)(stores)
    request = said_on_may_7(user, "I lost my job as a banker", "Sorry to hear that.")
    named = request.model_copy(update={"user_name": user.name})
    await stage(no_users, offline, local_embedder).remember_turn(named)
    [mine] = await stores.messages.by_message_ids(user.user_id, ["msg-1"])
    assert mine.speaker_name == user.name
    assert faults[0].calls == 0


def test_the_speaker_is_the_messages_own_name_the_emails_sender_or_the_user() -> None:
    chat = IncomingMessage(user_id="u1", thread_id="t1", message_id="m1", text="hi")
    assert speaker_name(chat, "Ana") == "Ana"
    assert speaker_name(chat.model_copy(update={"speaker_name": "Maya"}), "Ana") == "Maya"
    email = EmailMessage(
        email_id="e1", author="Dan Brown <dan@example.com>", to="me@x.org", subject="s", body="b"
    )
    assert speaker_name(chat.model_copy(update={"email": email}), "Ana") == "Dan Brown"


def _said(
    user: UserProfile, text: str, message_id: str, at: datetime, thread: str = "t1"
) -> RememberRequest:
    request = remember(user, text, message_id=message_id, reply="")
    message = request.message.model_copy(update={"received_at": at, "thread_id": thread})
    return request.model_copy(
        update={"message": message, "turn_id": f"turn:{user.user_id}:{thread}:{message_id}"}
    )


def _with_previous(embedder: LocalEmbedder, text: str, previous: str) -> list[float]:
    return embedder.embed([f"{text}\n(Replying to: {previous})"])[0]


async def _score(stores: Stores, user: UserProfile, vector: list[float], message_id: str) -> float:
    found = await stores.messages.dense(user.user_id, vector, top_k=10)
    return next(f.score for f in found if f.record.message_id == message_id)


QUESTION, ANSWER = "What did you do last weekend?", "Went painting with the kids!"


async def test_a_record_is_embedded_with_the_threads_previous_message(
    stores: Stores, user: UserProfile, offline: OfflineChatModel, local_embedder: LocalEmbedder
) -> None:
    remember_turn = stage(stores, offline, local_embedder).remember_turn
    await remember_turn(_said(user, QUESTION, "msg-1", MAY_7))
    await remember_turn(_said(user, ANSWER, "msg-2", MAY_7 + timedelta(minutes=2)))
    expected = _with_previous(local_embedder, ANSWER, QUESTION)
    assert await _score(stores, user, expected, "msg-2") > 0.999
    (record,) = await stores.messages.by_message_ids(user.user_id, ["msg-2"])
    assert record.text == ANSWER  # the stored text stays the message's own


@pytest.mark.parametrize(
    ("thread", "earlier"), [("t2", timedelta(minutes=2)), ("t1", timedelta(hours=3))]
)
async def test_a_message_of_another_thread_or_hours_earlier_is_no_context(
    stores: Stores,
    user: UserProfile,
    offline: OfflineChatModel,
    local_embedder: LocalEmbedder,
    thread: str,
    earlier: timedelta,
) -> None:
    remember_turn = stage(stores, offline, local_embedder).remember_turn
    await remember_turn(_said(user, QUESTION, "msg-1", MAY_7 - earlier, thread))
    await remember_turn(_said(user, ANSWER, "msg-2", MAY_7))
    (own,) = local_embedder.embed([ANSWER])
    assert await _score(stores, user, own, "msg-2") > 0.999


async def test_a_reply_is_embedded_with_the_message_it_answers(
    local_embedder: LocalEmbedder,
) -> None:
    user = UserProfile(user_id="u1", name="Ana")
    request = said_on_may_7(user, QUESTION, ANSWER)
    records = turn_records(request, user_name="Ana", now=MAY_7)
    message, reply = await embed_records(local_embedder, records)
    assert message == pytest.approx(local_embedder.embed([QUESTION])[0], abs=1e-6)
    assert reply == pytest.approx(_with_previous(local_embedder, ANSWER, QUESTION), abs=1e-6)

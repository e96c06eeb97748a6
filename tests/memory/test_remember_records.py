"""The remember stage keeps the message and the reply as records, with the history, atomically."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest

from activities.deps import Deps
from activities.remember import RememberActivities
from memoir.embeddings import LocalEmbedder
from memoir.llm import OfflineChatModel
from memoir.memory.records import speaker_name
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


def test_the_speaker_is_the_messages_own_name_the_emails_sender_or_the_user() -> None:
    chat = IncomingMessage(user_id="u1", thread_id="t1", message_id="m1", text="hi")
    assert speaker_name(chat, "Ana") == "Ana"
    assert speaker_name(chat.model_copy(update={"speaker_name": "Maya"}), "Ana") == "Maya"
    email = EmailMessage(
        email_id="e1", author="Dan Brown <dan@example.com>", to="me@x.org", subject="s", body="b"
    )
    assert speaker_name(chat.model_copy(update={"email": email}), "Ana") == "Dan Brown"

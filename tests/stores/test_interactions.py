"""InteractionStore: short-term memory as in seed 004 section 1."""

from __future__ import annotations

import functools
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memoir.models import UserProfile
from memoir.stores import Stores, UnknownUserError


async def _say(stores: Stores, user: UserProfile, n: int, thread: str = "t1") -> None:
    for i in range(n):
        await stores.interactions.save_interaction(
            key=f"{user.user_id}:{thread}:{i}",
            user_id=user.user_id,
            thread_id=thread,
            actor="user" if i % 2 == 0 else "agent",
            content=f"message {i}",
        )


async def test_save_interaction_is_idempotent_on_key(stores: Stores, user: UserProfile) -> None:
    save = functools.partial(
        stores.interactions.save_interaction,
        key=f"{user.user_id}:k",
        user_id=user.user_id,
        thread_id="t1",
        actor="user",
    )
    assert await save(content="hello") is True
    assert await save(content="hello again") is False
    history = await stores.interactions.load_session_history(user.user_id, "t1")
    assert [m.content for m in history] == ["hello"]


async def test_history_maps_user_to_human_and_agent_to_ai_with_tool_calls_and_results(
    stores: Stores, user: UserProfile
) -> None:
    uid = user.user_id
    await stores.interactions.save_interaction(
        key=f"{uid}:1", user_id=uid, thread_id="t1", actor="user", content="remind me at 5"
    )
    await stores.interactions.save_interaction(
        key=f"{uid}:2",
        user_id=uid,
        thread_id="t1",
        actor="agent",
        content="Creating it.",
        tool_calls=[{"id": "c1", "name": "reminders.create", "args": {"text": "call"}}],
        tool_responses=[
            {"tool_call_id": "c1", "name": "reminders.create", "content": {"id": "rem_1"}},
            {"tool_call_id": "c1", "name": "reminders.create", "content": "plain text"},
        ],
    )
    await stores.interactions.save_interaction(
        key=f"{uid}:3", user_id=uid, thread_id="t1", actor="agent", content="Done."
    )

    human, ai, tool_json, tool_text, reply = await stores.interactions.load_session_history(
        uid, "t1"
    )

    assert isinstance(human, HumanMessage) and human.content == "remind me at 5"
    assert isinstance(ai, AIMessage) and ai.content == "Creating it."
    assert [(c["id"], c["name"], c["args"]) for c in ai.tool_calls] == [
        ("c1", "reminders.create", {"text": "call"})
    ]
    assert isinstance(tool_json, ToolMessage)
    assert tool_json.tool_call_id == "c1" and tool_json.name == "reminders.create"
    assert tool_json.content == '{"id": "rem_1"}'
    assert isinstance(tool_text, ToolMessage) and tool_text.content == "plain text"
    assert isinstance(reply, AIMessage) and reply.tool_calls == [] and reply.content == "Done."


async def test_history_is_chronological(stores: Stores, user: UserProfile) -> None:
    await _say(stores, user, 4)
    history = await stores.interactions.load_session_history(user.user_id, "t1")
    assert [m.content for m in history] == [f"message {i}" for i in range(4)]


async def test_history_limit_keeps_the_newest_rows(stores: Stores, user: UserProfile) -> None:
    await _say(stores, user, 6)
    history = await stores.interactions.load_session_history(user.user_id, "t1", limit=3)
    assert [m.content for m in history] == ["message 3", "message 4", "message 5"]


async def test_history_limit_is_applied_in_the_database(
    stores: Stores, user: UserProfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _say(stores, user, 6)
    fetched: list[int] = []
    real_fetchall = psycopg.AsyncCursor.fetchall

    async def counting_fetchall(self: psycopg.AsyncCursor[Any]) -> list[Any]:
        rows = await real_fetchall(self)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(psycopg.AsyncCursor, "fetchall", counting_fetchall)
    history = await stores.interactions.load_session_history(user.user_id, "t1", limit=2)

    assert len(history) == 2
    assert fetched == [2]  # only `limit` rows came back from Postgres


async def test_history_is_scoped_to_user_and_thread(stores: Stores, user: UserProfile) -> None:
    other, _ = await stores.users.create_user("Other")
    await _say(stores, user, 2, thread="t1")
    await _say(stores, user, 2, thread="t2")
    await _say(stores, other, 2, thread="t1")
    history = await stores.interactions.load_session_history(user.user_id, "t1")
    assert len(history) == 2
    assert await stores.interactions.load_session_history(user.user_id, "none") == []


async def test_save_interaction_for_unknown_user_raises(stores: Stores) -> None:
    with pytest.raises(UnknownUserError):
        await stores.interactions.save_interaction(
            key="ghost:1", user_id="ghost", thread_id="t", actor="user", content="boo"
        )


async def test_save_interaction_rejects_tool_call_without_id(
    stores: Stores, user: UserProfile
) -> None:
    with pytest.raises(ValueError, match="id"):
        await stores.interactions.save_interaction(
            key=f"{user.user_id}:bad",
            user_id=user.user_id,
            thread_id="t1",
            actor="agent",
            content="",
            tool_calls=[{"name": "x", "args": {}}],
        )


async def test_recent_messages_are_chronological_with_roles(
    stores: Stores, user: UserProfile
) -> None:
    uid = user.user_id
    await stores.interactions.save_interaction(
        key=f"{uid}:1", user_id=uid, thread_id="t1", actor="user", content="hi", message_id="m1"
    )
    await stores.interactions.save_interaction(
        key=f"{uid}:2",
        user_id=uid,
        thread_id="t1",
        actor="agent",
        content="Hello!",
        tool_calls=[{"id": "c1", "name": "reminders.list", "args": {}}],
        tool_responses=[{"tool_call_id": "c1", "name": "reminders.list", "content": []}],
    )
    recent = await stores.interactions.recent_messages(uid, "t1")
    assert [(m.role, m.content) for m in recent] == [
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("tool", "reminders.list: []"),
    ]
    assert recent[0].at <= recent[1].at


async def test_recent_messages_limit_keeps_the_newest(stores: Stores, user: UserProfile) -> None:
    await _say(stores, user, 5)
    recent = await stores.interactions.recent_messages(user.user_id, "t1", limit=2)
    assert [m.content for m in recent] == ["message 3", "message 4"]

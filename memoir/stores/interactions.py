"""Short-term memory (seed 004 section 1): interaction history and its LangChain mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from psycopg.types.json import Jsonb

from memoir.db import Connection, Pool
from memoir.models import RecentMessage
from memoir.stores._common import user_must_exist

Actor = Literal["user", "agent"]


def _tool_calls(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        if not call.get("id") or not call.get("name"):
            raise ValueError(f"a tool call needs an id and a name, got {dict(call)!r}")
        out.append(
            {"id": str(call["id"]), "name": str(call["name"]), "args": call.get("args") or {}}
        )
    return out


def _tool_responses(responses: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for resp in responses:
        if not resp.get("tool_call_id"):
            raise ValueError(f"a tool response needs a tool_call_id, got {dict(resp)!r}")
        out.append(
            {
                "tool_call_id": str(resp["tool_call_id"]),
                "name": resp.get("name"),
                "content": resp.get("content"),
            }
        )
    return out


def stringify(content: Any) -> str:
    """Tool output as message text: strings unchanged, anything else as JSON."""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, default=str)


def to_langchain(row: Mapping[str, Any]) -> list[BaseMessage]:
    """One stored interaction as LangChain messages (seed 004 section 1.2 mapping)."""
    if row["actor"] == "user":
        return [HumanMessage(content=row["content"])]
    calls = row["tool_calls"] or []
    messages: list[BaseMessage] = [
        AIMessage(
            content=row["content"],
            tool_calls=[{"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls],
        )
    ]
    for resp in row["tool_responses"] or []:
        messages.append(
            ToolMessage(
                content=stringify(resp["content"]),
                tool_call_id=resp["tool_call_id"],
                name=resp.get("name"),
            )
        )
    return messages


class InteractionStore:
    """Every user message, agent reply, tool call and tool result, per thread."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def save_interaction(
        self,
        *,
        key: str,
        user_id: str,
        thread_id: str,
        actor: Actor,
        content: str,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        tool_responses: Sequence[Mapping[str, Any]] | None = None,
        message_id: str | None = None,
    ) -> bool:
        """`save_interaction_in` on a connection of its own."""
        async with self.pool.connection() as conn:
            return await self.save_interaction_in(
                conn,
                key=key,
                user_id=user_id,
                thread_id=thread_id,
                actor=actor,
                content=content,
                tool_calls=tool_calls,
                tool_responses=tool_responses,
                message_id=message_id,
            )

    async def save_interaction_in(
        self,
        conn: Connection,
        *,
        key: str,
        user_id: str,
        thread_id: str,
        actor: Actor,
        content: str,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        tool_responses: Sequence[Mapping[str, Any]] | None = None,
        message_id: str | None = None,
    ) -> bool:
        """Store one interaction once per `key` on `conn` (the caller's transaction, if any);
        returns False when the key was already stored.

        `tool_calls` are `{id, name, args}`, `tool_responses` `{tool_call_id, name, content}`.
        """
        if actor not in ("user", "agent"):
            raise ValueError(f"actor must be 'user' or 'agent', got {actor!r}")
        calls = Jsonb(_tool_calls(tool_calls)) if tool_calls else None
        responses = Jsonb(_tool_responses(tool_responses)) if tool_responses else None
        async with user_must_exist(user_id):
            cur = await conn.execute(
                "INSERT INTO interactions (key, user_id, thread_id, actor, content, tool_calls,"
                " tool_responses, message_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (key) DO NOTHING",
                (key, user_id, thread_id, actor, content, calls, responses, message_id),
            )
            return cur.rowcount == 1

    async def _newest_rows(self, user_id: str, thread_id: str, limit: int) -> list[dict[str, Any]]:
        """The `limit` newest rows of the thread (limited in the database), oldest first."""
        if limit <= 0:
            return []
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT * FROM interactions WHERE user_id = %s AND thread_id = %s"
                " ORDER BY id DESC LIMIT %s",
                (user_id, thread_id, limit),
            )
            rows = await cur.fetchall()
        rows.reverse()
        return rows

    async def load_session_history(
        self, user_id: str, thread_id: str, limit: int = 20
    ) -> list[BaseMessage]:
        """The `limit` newest interactions as LangChain messages, in chronological order.

        user → `HumanMessage`; agent → `AIMessage(content, tool_calls)` followed by one
        `ToolMessage` per tool response logged with it.
        """
        rows = await self._newest_rows(user_id, thread_id, limit)
        return [msg for row in rows for msg in to_langchain(row)]

    async def recent_messages(
        self, user_id: str, thread_id: str, limit: int = 10
    ) -> list[RecentMessage]:
        """The last `limit` messages of the thread, chronological, for the turn context.

        An agent row gives its reply (`assistant`) then its tool results (`tool`, `name: output`).
        """
        rows = await self._newest_rows(user_id, thread_id, limit)
        out: list[RecentMessage] = []
        for row in rows:
            at = row["created_at"]
            if row["actor"] == "user":
                out.append(RecentMessage(role="user", content=row["content"], at=at))
                continue
            responses = row["tool_responses"] or []
            if row["content"] or not responses:
                out.append(RecentMessage(role="assistant", content=row["content"], at=at))
            for resp in responses:
                text = stringify(resp["content"])
                if resp.get("name"):
                    text = f"{resp['name']}: {text}"
                out.append(RecentMessage(role="tool", content=text, at=at))
        return out[-limit:] if limit > 0 else []

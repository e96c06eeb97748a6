"""How the memory engine asks its chat model and its embedder (both off the event loop).

Each model call builds a typed request (`memoir.memory.requests`); `ask` hands it to the
offline extractor (`memoir.llm.offline_memory`, which reads its fields) or renders it into the
prompts of `memoir.llm.prompts` for a chat model (the `*_messages` functions below).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from memoir.embeddings import Embedder
from memoir.llm import providers
from memoir.llm.prompts import (
    COMPOSE_SYSTEM_PROMPT,
    COMPOSE_USER_PROMPT,
    EPISODIC_SYSTEM_PROMPT,
    EPISODIC_USER_PROMPT,
    MEMORY_EXTRACTION_SYSTEM_PROMPT,
    MEMORY_GATE_SYSTEM_PROMPT,
    MEMORY_TURNS_PROMPT,
    NONE,
    PROFILE_UPDATE_SYSTEM_PROMPT,
    PROFILE_UPDATE_USER_PROMPT,
    SAME_FACT_SYSTEM_PROMPT,
    SAME_FACT_USER_PROMPT,
    USER_SPEAKER,
    one_line,
    render_bullets,
    render_recent_messages,
)
from memoir.memory.requests import (
    ComposeRequest,
    EpisodeRequest,
    MemoryFields,
    ProfileRequest,
    SameFactRequest,
    TurnMemoryRequest,
)
from memoir.stores.memories import MEMORY_ID_PREFIX

__all__ = [
    "ask",
    "compose_messages",
    "embed_many",
    "embed_one",
    "episode_messages",
    "extraction_messages",
    "gate_messages",
    "profile_messages",
    "prompt",
    "render_message_time",
    "same_fact_messages",
    "stable_memory_id",
]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
_log = logging.getLogger("memoir.memory")
_IDS = uuid.UUID("6f1b7a52-3a57-4c1e-9a55-6d656d6f6972")


def prompt(system: str, human: str) -> list[BaseMessage]:
    """A system message and one human message."""
    return [SystemMessage(content=system), HumanMessage(content=human)]


async def ask(
    llm: BaseChatModel,
    schema: type[T],
    request: R,
    *,
    render: Callable[[R], list[BaseMessage]],
    offline: Callable[[R, Embedder], T],
) -> T | None:
    """`schema` for `request` (offline, or from `llm` on its rendered prompt); None when the
    answer does not validate (logged, never raised).

    Transport errors (a provider outage) propagate, so the activity retries.
    """
    try:
        return await providers.ask(llm, schema, request, render=render, offline=offline)
    except ValueError as exc:  # pydantic ValidationError, OutputParserException
        _log.warning("memory.llm_invalid schema=%s error=%s", schema.__name__, exc)
        return None


def render_message_time(now: datetime | None, timezone: str) -> str:
    """The `## Message Time` line: "Monday 2023-05-08 13:56, timezone UTC" (local), or (none)."""
    if now is None:
        return NONE
    return f"{now.astimezone(ZoneInfo(timezone)):%A %Y-%m-%d %H:%M}, timezone {timezone}"


def _fields(memory: MemoryFields) -> str:
    """ "Key: … / Category: … / Summary: …" lines of one memory (same fact, compose, profile)."""
    summary = one_line(memory.summary, 500)
    return f"Key: {memory.key or NONE}\nCategory: {memory.category}\nSummary: {summary}"


def _profile(fields: Mapping[str, Any]) -> str:
    """'field: value' lines of the current profile (lists joined by '; ', empty as (none))."""
    lines = []
    for name, value in fields.items():
        text = "; ".join(map(str, value)) if isinstance(value, list | tuple) else str(value or "")
        lines.append(f"{name}: {one_line(text, 300) or NONE}")
    return "\n".join(lines) or NONE


def _turns_messages(system: str, request: TurnMemoryRequest) -> list[BaseMessage]:
    """`## Earlier User Turns` ("- …" lines, oldest first), `## Speaker` (a name, or "User"),
    `## Message Time`, then `## Latest User Message`."""
    human = MEMORY_TURNS_PROMPT.format(
        earlier=render_bullets(request.earlier),
        speaker=request.speaker or USER_SPEAKER,
        time=render_message_time(request.now, request.timezone),
        message=request.message,
    )
    return prompt(system, human)


def gate_messages(request: TurnMemoryRequest) -> list[BaseMessage]:
    """The gate's prompt: earlier turns, the speaker ("User" for the user), time, message."""
    return _turns_messages(MEMORY_GATE_SYSTEM_PROMPT, request)


def extraction_messages(request: TurnMemoryRequest) -> list[BaseMessage]:
    """The extraction's prompt: the gate's, with the extraction's instructions."""
    return _turns_messages(MEMORY_EXTRACTION_SYSTEM_PROMPT, request)


def same_fact_messages(request: SameFactRequest) -> list[BaseMessage]:
    """The same-fact classifier's prompt for one neighbour."""
    human = SAME_FACT_USER_PROMPT.format(
        existing=_fields(request.existing), candidate=_fields(request.candidate)
    )
    return prompt(SAME_FACT_SYSTEM_PROMPT, human)


def compose_messages(request: ComposeRequest) -> list[BaseMessage]:
    """The composer's prompt: the older memory, then the newer."""
    human = COMPOSE_USER_PROMPT.format(existing=_fields(request.existing), new=_fields(request.new))
    return prompt(COMPOSE_SYSTEM_PROMPT, human)


def profile_messages(request: ProfileRequest) -> list[BaseMessage]:
    """The profile updater's prompt: the current profile, then the memory."""
    human = PROFILE_UPDATE_USER_PROMPT.format(
        profile=_profile(request.profile), memory=_fields(request.memory)
    )
    return prompt(PROFILE_UPDATE_SYSTEM_PROMPT, human)


def episode_messages(request: EpisodeRequest) -> list[BaseMessage]:
    """The episodic summarizer's prompt: conversation, status, actions, reply, request."""
    actions = [
        f"- {'ok' if a.ok else 'failed'} | {a.capability} | {a.text}" for a in request.actions
    ]
    said = request.request
    if request.email is not None:
        email = request.email
        said = f"Email from {email.author}: “{email.subject}”\n\n{one_line(email.body, 600)}"
    human = EPISODIC_USER_PROMPT.format(
        conversation=render_recent_messages(request.conversation, limit=len(request.conversation)),
        status=request.status,
        actions="\n".join(actions) or NONE,
        reply=one_line(request.reply, 600) or NONE,
        request=said,
    )
    return prompt(EPISODIC_SYSTEM_PROMPT, human)


async def embed_one(embedder: Embedder, text: str) -> list[float]:
    """One embedding, computed in a worker thread (CPU work)."""
    vectors = await asyncio.to_thread(embedder.embed, [text])
    return vectors[0]


async def embed_many(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    """Embeddings of several texts in one call, in a worker thread ([] for none)."""
    if not texts:
        return []
    return list(await asyncio.to_thread(embedder.embed, texts))


def stable_memory_id(*parts: str) -> str:
    """A memory id derived from `parts` (e.g. the turn id and a purpose): retries reuse it."""
    return MEMORY_ID_PREFIX + uuid.uuid5(_IDS, "|".join(parts)).hex

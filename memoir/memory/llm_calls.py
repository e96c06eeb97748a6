"""How the memory engine asks its chat model and its embedder (both off the event loop)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from memoir.embeddings import Embedder
from memoir.llm import structured
from memoir.stores.memories import MEMORY_ID_PREFIX

__all__ = ["ask", "embed_many", "embed_one", "prompt", "stable_memory_id"]

T = TypeVar("T", bound=BaseModel)
_log = logging.getLogger("memoir.memory")
_IDS = uuid.UUID("6f1b7a52-3a57-4c1e-9a55-6d656d6f6972")


def prompt(system: str, human: str) -> list[BaseMessage]:
    """A system message and one human message."""
    return [SystemMessage(content=system), HumanMessage(content=human)]


async def ask(llm: BaseChatModel, schema: type[T], messages: list[BaseMessage]) -> T | None:
    """`schema` from `llm`; None when the answer does not validate (logged, never raised).

    Transport errors (a provider outage) propagate, so the activity retries.
    """
    try:
        return await structured(llm, schema).ainvoke(messages)
    except ValueError as exc:  # pydantic ValidationError, OutputParserException
        _log.warning("memory.llm_invalid schema=%s error=%s", schema.__name__, exc)
        return None


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

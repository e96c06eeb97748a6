"""Typed providers: each model task (triage, plan, write, extract) takes a typed request and
returns a typed answer, from the chat model on the request rendered into the prompts of
`memoir.llm.prompts`, or from its offline implementation, which reads the request's fields (never
rendered text) with example tables, matched by rules where exact and by MiniLM nearest neighbour
where fuzzy, and names the example or rule that fired. `ask` and `write` are the one place that
chooses between them for a chat model:

    plan = await ask(llm, Plan, request, render=planner_messages, offline=plan_offline)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from memoir.embeddings import Embedder
from memoir.llm import structured
from memoir.llm.offline import OfflineChatModel
from memoir.llm.scripted import ScriptedChatModel
from memoir.telemetry.genai import llm_span
from memoir.text import message_text

__all__ = ["ask", "write"]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


def _offline_embedder(
    llm: BaseChatModel, schema_name: str | None, prompt: Callable[[], list[BaseMessage]]
) -> Embedder | None:
    """The embedder of the offline implementation when it answers for `llm` (the offline model, or
    a scripted one whose script ran out: it records the prompt it stands for), else None."""
    if isinstance(llm, OfflineChatModel):
        return llm.get_embedder()
    if not isinstance(llm, ScriptedChatModel) or llm.on_exhausted != "fallback":
        return None
    if llm.remaining(schema_name) != 0:
        return None
    llm.record(schema_name, prompt())
    return llm.fallback_model().get_embedder()


@llm_span("chat")
async def ask(
    llm: BaseChatModel,
    schema: type[T],
    request: R,
    *,
    render: Callable[[R], list[BaseMessage]],
    offline: Callable[[R, Embedder], T],
) -> T:
    """`schema` for `request`: from the offline implementation, or from `llm` on its prompt."""
    embedder = _offline_embedder(llm, schema.__name__, lambda: render(request))
    if embedder is not None:
        # Rules and embeddings are CPU work: keep them off the event loop.
        return await asyncio.to_thread(offline, request, embedder)
    return await structured(llm, schema).ainvoke(render(request))


@llm_span("chat")
async def write(
    llm: BaseChatModel,
    request: R,
    *,
    render: Callable[[R], list[BaseMessage]],
    offline: Callable[[R, Embedder], str],
) -> str:
    """A plain-text answer (a reply) for `request`, offline or from `llm`."""
    embedder = _offline_embedder(llm, None, lambda: render(request))
    if embedder is not None:
        return await asyncio.to_thread(offline, request, embedder)
    return message_text(await llm.ainvoke(render(request)))

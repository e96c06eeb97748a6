"""Memories: list, search, delete, pin and unpin the user's semantic and episodic memories."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from pydantic import AfterValidator

from api.deps import Audit, CurrentUser, SettingsDep, StoresDep
from api.errors import ERROR_RESPONSES, ApiError, not_found
from api.schemas import not_blank
from api.schemas_memory import MemoryOut, MemoryPage
from memoir.audit import AuditAction
from memoir.embeddings import EmbeddingConfigError, get_embedder
from memoir.memory.models import MemoryKind
from memoir.settings import Settings
from memoir.stores import Stores

router = APIRouter(prefix="/v1", tags=["memories"], responses=ERROR_RESPONSES)

Kind = Annotated[MemoryKind | None, Query(description="Only semantic or only episodic.")]
Search = Annotated[
    str | None,
    Query(min_length=1, max_length=2000, description="Search by meaning."),
    AfterValidator(not_blank),
]
Limit = Annotated[int, Query(ge=1, le=100)]
Offset = Annotated[int, Query(ge=0, le=10_000)]


async def _embed(settings: Settings, text: str) -> list[float]:
    """The query's embedding, computed off the event loop; 503 when embeddings are unusable."""
    try:
        embedder = get_embedder(settings)
    except EmbeddingConfigError as err:
        raise ApiError(503, "embeddings_unavailable", str(err)) from err
    [vector] = await asyncio.to_thread(embedder.embed, [text])
    return vector


@router.get("/memories")
async def list_memories(
    user: CurrentUser,
    stores: StoresDep,
    settings: SettingsDep,
    audit: Audit,
    kind: Kind = None,
    query: Search = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> MemoryPage:
    """Newest first; with `query`, the closest by meaning first, each with its similarity."""
    if query is None:
        found = await stores.memories.list(user.user_id, kind=kind, limit=limit, offset=offset)
        items = [MemoryOut.of(memory) for memory in found]
    else:
        vector = await _embed(settings, query)
        hits = await stores.memories.search(user.user_id, vector, kind=kind, top_k=offset + limit)
        items = [MemoryOut.of(memory, score) for memory, score in hits[offset:]]
    action = AuditAction.READ if query is None else AuditAction.SEARCH
    await audit.record(action, "memory", count=len(items))
    return MemoryPage(items=items, kind=kind, query=query, limit=limit, offset=offset)


@router.delete("/memories/{memory_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_memory(
    memory_id: str, user: CurrentUser, stores: StoresDep, audit: Audit
) -> Response:
    """Forget a memory: its row and its vector."""
    if not await stores.memories.delete(user.user_id, memory_id):
        raise not_found(f"No memory {memory_id}.")
    await audit.record(AuditAction.DELETE, "memory", memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def _set_pinned(stores: Stores, audit: Audit, memory_id: str, pinned: bool) -> MemoryOut:
    memory = await stores.memories.set_pinned(audit.user_id, memory_id, pinned)
    if memory is None:
        raise not_found(f"No memory {memory_id}.")
    await audit.record(AuditAction.PIN if pinned else AuditAction.UNPIN, "memory", memory_id)
    return MemoryOut.of(memory)


@router.post("/memories/{memory_id}/pin")
async def pin_memory(memory_id: str, stores: StoresDep, audit: Audit) -> MemoryOut:
    """Pin a memory: it is always considered for the turn's context."""
    return await _set_pinned(stores, audit, memory_id, True)


@router.delete("/memories/{memory_id}/pin")
async def unpin_memory(memory_id: str, stores: StoresDep, audit: Audit) -> MemoryOut:
    """Unpin a memory."""
    return await _set_pinned(stores, audit, memory_id, False)

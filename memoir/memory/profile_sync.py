"""Profile sync (seed 001 `_profile_sync_from_memory`): a new fact updates `UserContext`.

After a semantic memory is created or updated, the chat model proposes `ProfileUpdate.changes`
(name, tone, language, city, timezone, goals, interests); they are merged into the stored
context, which renders the one-line profile every turn sees.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from memoir.llm.offline_memory import profile_update_offline
from memoir.memory.events import MEMORY_PROFILE, EventLog
from memoir.memory.llm_calls import ask, profile_messages
from memoir.memory.models import Memory
from memoir.memory.requests import MemoryFields, ProfileRequest
from memoir.memory.schemas import PROFILE_FIELDS, ProfileUpdate
from memoir.stores.user_context import UserContext, UserContextStore, profile_line

__all__ = ["current_profile_line", "profile_fields", "profile_request", "sync_profile"]


def profile_fields(ctx: UserContext) -> dict[str, Any]:
    """The fields of `ctx` a `ProfileUpdate` may change, in prompt order."""
    return {name: getattr(ctx, name) for name in PROFILE_FIELDS}


def profile_request(ctx: UserContext, memory: Memory) -> ProfileRequest:
    """The profile updater's question: the current profile, then the memory."""
    fields = MemoryFields(key=memory.key, category=memory.category, summary=memory.summary)
    return ProfileRequest(profile=profile_fields(ctx), memory=fields)


async def sync_profile(
    llm: BaseChatModel,
    contexts: UserContextStore,
    memory: Memory,
    log: EventLog,
) -> UserContext:
    """Ask for the profile changes `memory` implies and apply them; returns the context."""
    ctx = await contexts.get(memory.user_id)
    update = await ask(
        llm,
        ProfileUpdate,
        profile_request(ctx, memory),
        render=profile_messages,
        offline=profile_update_offline,
    )
    if update is None:
        return ctx
    changes = {k: v for k, v in update.changes.items() if k in PROFILE_FIELDS and v}
    if not changes:
        return ctx
    try:
        ctx = await contexts.apply(memory.user_id, changes)
    except ValueError as exc:  # e.g. a timezone that is not an IANA name
        log.emit(MEMORY_PROFILE, memory_id=memory.memory_id, rejected=changes, error=str(exc))
        return ctx
    log.emit(
        MEMORY_PROFILE, memory_id=memory.memory_id, changes=changes, reasoning=update.reasoning
    )
    return ctx


async def current_profile_line(contexts: UserContextStore, user_id: str) -> str:
    """The one-line profile of the user's stored context."""
    return profile_line(await contexts.get(user_id))

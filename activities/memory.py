"""Stages 2 and 3: memory hot path and memory context.

Long-term semantic and episodic memory arrive with the memory engine; until then the hot path
gives the profile line and the context gives the "Now: …" line, and episodic capture skips.
"""

from datetime import datetime
from zoneinfo import ZoneInfo

from temporalio import activity

from activities.deps import Deps
from memoir.models import MemoryContext, RememberRequest, TurnRequest, UserProfile, names


def profile_line(user: UserProfile) -> str:
    """The one-line profile every turn sees (seed 001 `_build_profile_line`)."""
    return f"Profile: {user.name}; timezone {user.timezone}; language {user.language}."


def now_line(now: datetime, timezone: str) -> str:
    """'Now: {weekday} {date} {time} {timezone}' (seed 001)."""
    local = now.astimezone(ZoneInfo(timezone))
    return f"Now: {local:%A %Y-%m-%d %H:%M} {timezone}"


class MemoryActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.MEMORY_HOTPATH)
    async def memory_hotpath(self, turn: TurnRequest) -> MemoryContext:
        return MemoryContext(profile_line=profile_line(turn.context.user))

    @activity.defn(name=names.MEMORY_CONTEXT)
    async def memory_context(self, turn: TurnRequest) -> MemoryContext:
        return MemoryContext(now_line=now_line(turn.context.now, turn.context.user.timezone))

    @activity.defn(name=names.EPISODIC_CAPTURE)
    async def episodic_capture(self, request: RememberRequest) -> list[str]:
        activity.logger.info("episodic.skip turn=%s reason=not enabled", request.turn_id)
        return ["episodic.skip"]

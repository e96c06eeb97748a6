"""Typed requests of the memory engine's model calls: everything each prompt shows.

The chat model sees them rendered (`memoir.memory.llm_calls`, templates in
`memoir.llm.prompts`); the offline extractor (`memoir.llm.offline_memory`) reads their fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from memoir.models import RecentMessage

__all__ = [
    "ComposeRequest",
    "EmailBrief",
    "EpisodeAction",
    "EpisodeRequest",
    "MemoryFields",
    "ProfileRequest",
    "SameFactRequest",
    "TurnMemoryRequest",
]


class TurnMemoryRequest(BaseModel):
    """The gate's and the extraction's question: the latest message and what frames it."""

    message: str = Field(description="The latest user message (without a 'Maya:' prefix).")
    earlier: list[str] = Field(
        default_factory=list, description="Earlier user turns, oldest first."
    )
    speaker: str | None = Field(default=None, description="Who said it; None for the user.")
    now: datetime | None = Field(default=None, description="When it was said.")
    timezone: str = "UTC"


class MemoryFields(BaseModel):
    """One memory as the same-fact, compose and profile prompts show it."""

    key: str | None = None
    category: str = ""
    summary: str = ""


class SameFactRequest(BaseModel):
    """Do an existing memory and a candidate state the same fact?"""

    existing: MemoryFields
    candidate: MemoryFields


class ComposeRequest(BaseModel):
    """Merge an older memory with a newer one about the same fact."""

    existing: MemoryFields
    new: MemoryFields


class ProfileRequest(BaseModel):
    """Which profile fields one memory changes, given the current profile."""

    profile: dict[str, Any] = Field(default_factory=dict)
    memory: MemoryFields


class EpisodeAction(BaseModel):
    """One action the turn ran, in words ("set a reminder to call your mom …")."""

    ok: bool
    capability: str
    text: str


class EmailBrief(BaseModel):
    """The email a turn was about."""

    author: str
    subject: str
    body: str = ""


class EpisodeRequest(BaseModel):
    """One turn for an episodic summary: the talk, what ran, the reply and the request."""

    conversation: list[RecentMessage] = Field(default_factory=list)
    status: str = ""
    actions: list[EpisodeAction] = Field(default_factory=list)
    reply: str = ""
    request: str = Field(default="", description="The user's message as written.")
    email: EmailBrief | None = None

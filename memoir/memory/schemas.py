"""Structured outputs the memory engine asks a chat model for (seeds 001, 003)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

# Fields of `UserContext` a `ProfileUpdate` may change.
PROFILE_FIELDS = ("name", "tone", "language", "city", "timezone", "goals", "interests")


class HotpathDecision(BaseModel):
    """Gate of the hot path: should the user's last turns become a semantic memory?"""

    reasoning: str = Field(description="Why, naming the rule that decided.")
    should_create: bool = Field(
        description="True only for stable facts, preferences, identity, goals or attributes of "
        "close entities; false for questions about the assistant, one-off actions and "
        "time-bound events."
    )


class MemoryCandidate(BaseModel):
    """One semantic memory proposed from the user's last turns."""

    category: str = Field(
        description="One of: profile, preference, goal, interest, relationship, pet, work, other."
    )
    summary: str = Field(description="One third-person sentence, e.g. 'User lives in Lisbon.'")
    importance: float = Field(ge=0.0, le=1.0, description="0..1: how useful later.")
    key: str | None = Field(
        default=None,
        description="Deterministic key when the fact has one, e.g. profile:pet:luna:age, "
        "profile:city, profile:name; null otherwise.",
    )


class SameFact(BaseModel):
    """Whether a candidate and an existing memory state the same fact (maybe updated)."""

    reasoning: str
    same_fact: bool = Field(
        description="True when both are about the same entity and attribute, even if the value "
        "changed (a correction or an update)."
    )


class ComposedSummary(BaseModel):
    """One summary merging an existing memory with a newer one (the newer wins on conflict)."""

    reasoning: str
    summary: str = Field(description="One third-person sentence.")


class EpisodicSummary(BaseModel):
    """What a turn was about and how it was handled, for an episodic memory."""

    reasoning: str
    topic: str = Field(description="What was discussed, a short noun phrase.")
    approach: str = Field(description="What was done or decided, one short clause.")
    notable: bool = Field(
        description="True only when the turn had an outcome: a tool result, a decision, a human "
        "approval, or a recap the user asked for."
    )


class ProfileUpdate(BaseModel):
    """Changes to the user's profile implied by a new or updated semantic memory."""

    reasoning: str
    changes: dict[str, Any] = Field(
        default_factory=dict,
        description="Only fields that change: name, tone, language, city, timezone (IANA), "
        "goals (list), interests (list). Empty when nothing changes.",
    )

"""Structured outputs the memory engine asks a chat model for (seeds 001, 003)."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

# Fields of `UserContext` a `ProfileUpdate` may change.
PROFILE_FIELDS = ("name", "tone", "language", "city", "timezone", "goals", "interests")


class HotpathDecision(BaseModel):
    """Gate of the hot path: should the user's latest message become semantic memories?"""

    reasoning: str = Field(description="Why, naming the rule that decided.")
    should_create: bool = Field(
        description="True for stable facts, preferences, identity, goals, attributes of "
        "close people and pets, and events that happened (with their dates); false for "
        "questions, one-off requests, plans still to come, greetings, thanks, encouragement "
        "and small talk."
    )


class MemoryCandidate(BaseModel):
    """One memory proposed from the user's latest message: a stable fact or a past event."""

    category: str = Field(
        description="One of: profile, preference, goal, interest, relationship, pet, work, "
        "event, other."
    )
    summary: str = Field(
        description="One third-person sentence naming whom it is about, e.g. 'User lives in "
        "Lisbon.', \"Maya's sister Ngozi got married.\"; an event starts with its resolved "
        "date: 'On 2023-05-07 Maya lost their job as a banker.'"
    )
    importance: float = Field(ge=0.0, le=1.0, description="0..1: how useful later.")
    key: str | None = Field(
        default=None,
        description="Deterministic key when the fact has one, e.g. profile:pet:luna:age, "
        "profile:city, profile:name; null otherwise (always null for events).",
    )
    subject: str = Field(
        default="User",
        description="Whom it is about, as said: 'User' (the speaker when unnamed), the "
        "speaker's name, or another person or pet ('Maya's sister Ngozi', 'Luna').",
    )
    kind: Literal["fact", "event"] = Field(
        default="fact",
        description="fact: stable (identity, attributes, relationships, likes, habits); "
        "event: something that happened (went, lost, adopted, started, moved, bought …).",
    )
    date_iso: date | None = Field(
        default=None,
        description="An event's date (YYYY-MM-DD; the first day of a span such as 'last "
        "week'), resolved against the message time; null when unknown or not an event.",
    )
    time_phrase: str | None = Field(
        default=None, description="The time expression as said ('yesterday', 'last week')."
    )

    @field_validator("date_iso", mode="before")
    @classmethod
    def _lenient_date(cls, value: Any) -> Any:
        """A date the model could not resolve ("unknown", "2023-05") is no date."""
        if value is None or isinstance(value, date):
            return value
        try:
            return date.fromisoformat(str(value).strip()[:10])
        except ValueError:
            return None


class MemoryExtraction(BaseModel):
    """Every memory the user's latest message states (several facts → several memories)."""

    reasoning: str = Field(description="What was kept and what was set aside, and why.")
    memories: list[MemoryCandidate] = Field(
        default_factory=list,
        description="One item per fact or event; empty for questions, requests, greetings, "
        "thanks, encouragement and small talk.",
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

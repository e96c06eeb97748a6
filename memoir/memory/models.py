"""Long-term memory records (seeds 001, 003): semantic facts and episodic summaries."""

from datetime import date, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class MemoryKind(StrEnum):
    SEMANTIC = "semantic"
    EPISODIC = "episodic"


class Memory(BaseModel):
    """One memory of one user; `source_message_ids` is its provenance."""

    memory_id: str
    user_id: str
    kind: MemoryKind
    category: str = Field(description="e.g. profile, preference, goal, relationship, pet, topic")
    summary: str
    importance: float = Field(ge=0.0, le=1.0)
    key: str | None = Field(
        default=None, description="Deterministic key when extractable, e.g. profile:pet:luna:age"
    )
    pinned: bool = False
    source_message_ids: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime
    last_accessed: datetime | None = None
    last_verified_at: datetime | None = None
    # Episodic date bucket, in the user's timezone.
    date_iso: date | None = None
    week: int | None = None
    year: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class VectorHit(BaseModel):
    """A vector query match: the memory id, cosine similarity (1 = same), and its metadata."""

    id: str
    score: float
    metadata: dict[str, Any] = Field(default_factory=dict)


class ScoredMemory(BaseModel):
    """A retrieved memory with the parts of its rerank score (for explanations and tests)."""

    memory: Memory
    similarity: float
    score: float

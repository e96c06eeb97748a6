"""Bodies of the memory and preference endpoints (`/v1/memories`, `/v1/preferences`)."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field

from memoir.memory.models import Memory, MemoryKind
from memoir.stores import PreferenceVersion


class MemoryOut(BaseModel):
    """One semantic fact or episodic summary of the user, with its provenance."""

    id: str
    kind: MemoryKind
    category: str
    summary: str
    importance: float
    key: str | None
    pinned: bool
    source_message_ids: list[str] = Field(description="The messages it came from.")
    created_at: datetime
    updated_at: datetime
    last_accessed: datetime | None
    date_iso: date | None = Field(description="Episodes: the user's local day.")
    week: int | None = Field(description="Episodes: the ISO week of `date_iso`.")
    year: int | None = Field(description="Episodes: the ISO year of `date_iso`.")
    similarity: float | None = Field(
        None, description="Cosine similarity to `query` (searches only)."
    )

    @classmethod
    def of(cls, memory: Memory, similarity: float | None = None) -> MemoryOut:
        """The API view of a stored memory."""
        return cls(
            id=memory.memory_id,
            **memory.model_dump(
                include={
                    "kind",
                    "category",
                    "summary",
                    "importance",
                    "key",
                    "pinned",
                    "source_message_ids",
                    "created_at",
                    "updated_at",
                    "last_accessed",
                    "date_iso",
                    "week",
                    "year",
                }
            ),
            similarity=None if similarity is None else round(similarity, 6),
        )


class MemoryPage(BaseModel):
    """`GET /v1/memories`: newest first, or best match first when searched."""

    items: list[MemoryOut]
    kind: MemoryKind | None
    query: str | None
    limit: int
    offset: int


class PreferenceOut(BaseModel):
    """One version of a preference profile (the current one from `GET`)."""

    namespace: str
    version: int
    content: str
    decision: str = Field(description="What wrote it: default, notify.ignore, rollback:2 ...")
    turn_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, version: PreferenceVersion) -> PreferenceOut:
        """The API view of a stored version."""
        return cls.model_validate(version.model_dump(exclude={"user_id"}))


class PreferenceVersionOut(PreferenceOut):
    """A version in the history, with what it changed."""

    diff: str | None = Field(
        description="Unified diff against the previous version (null for the first)."
    )


class PreferenceHistory(BaseModel):
    """`GET /v1/preferences/{namespace}/history`: every version, newest first."""

    namespace: str
    versions: list[PreferenceVersionOut]


class RollbackIn(BaseModel):
    """`POST /v1/preferences/{namespace}/rollback`: the version whose text becomes current."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1)

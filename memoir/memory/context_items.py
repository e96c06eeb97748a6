"""What the memory context can show: a fact, an episode summary or a message record.

`ContextItem` wraps one of them with what retrieval learned about it (its rank in each ranking,
its cosine similarity, its fused relevance and final score) and answers the questions the
rerank, the selection and the bullets ask: what kind, when it was said, by whom, and which
messages it stands for (`source_message_ids`, what an answer cites and the recall eval scores).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from memoir.memory.models import Memory, MemoryKind
from memoir.stores.messages import MessageRecord

__all__ = ["RECORD", "ContextItem", "ItemKind"]

RECORD: Literal["record"] = "record"
ItemKind = MemoryKind | Literal["record"]


class ContextItem(BaseModel):
    """One candidate of the memory context: exactly one of `memory` and `record`."""

    memory: Memory | None = None
    record: MessageRecord | None = None
    similarity: float | None = Field(None, description="Cosine similarity, when found densely.")
    ranks: dict[str, int] = Field(default_factory=dict, description="Ranking name → rank (1..).")
    relevance: float = Field(0.0, description="Fused reciprocal-rank relevance, 0..1.")
    score: float = Field(0.0, description="The hybrid score the context orders by.")

    @model_validator(mode="after")
    def _one_of(self) -> ContextItem:
        if (self.memory is None) == (self.record is None):
            raise ValueError("a context item holds a memory or a record, not both or neither")
        return self

    @classmethod
    def of_memory(cls, memory: Memory) -> ContextItem:
        return cls(memory=memory)

    @classmethod
    def of_record(cls, record: MessageRecord) -> ContextItem:
        return cls(record=record)

    @property
    def key(self) -> str:
        """Unique across kinds: `memory:{memory_id}` or `record:{record_id}`."""
        if self.memory is not None:
            return f"memory:{self.memory.memory_id}"
        assert self.record is not None
        return f"record:{self.record.record_id}"

    @property
    def kind(self) -> ItemKind:
        return self.memory.kind if self.memory is not None else RECORD

    @property
    def pinned(self) -> bool:
        return self.memory is not None and self.memory.pinned

    @property
    def when(self) -> datetime:
        """When it was said: the record's time, or when the memory was last updated."""
        if self.memory is not None:
            return self.memory.updated_at
        assert self.record is not None
        return self.record.said_at

    @property
    def source_message_ids(self) -> list[str]:
        """The messages it stands for: the memory's provenance, or the record's own id."""
        if self.memory is not None:
            return list(self.memory.source_message_ids)
        assert self.record is not None
        return [self.record.message_id]

    @property
    def text(self) -> str:
        """What it says: the memory's summary or the record's text."""
        if self.memory is not None:
            return self.memory.summary
        assert self.record is not None
        return self.record.text

    @property
    def order_among_equals(self) -> tuple[str, str]:
        """A stable order for equal scores: by what it says and where it came from, never by a
        generated id alone (ids differ between runs, so an eval would read differently)."""
        return self.text, ",".join(self.source_message_ids)

    @property
    def tie_break(self) -> int:
        """Equal scores: facts first, then episodes, then records (semantic first, seed 003)."""
        if self.memory is None:
            return 2
        return 0 if self.memory.kind is MemoryKind.SEMANTIC else 1

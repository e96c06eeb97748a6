"""Structured memory decision logs (seed 003 "Observability") and in-process counters.

Every decision is one logging record on the `memoir.memory` logger whose message is the event
name and whose `extra` carries `event` and `fields`; it also bumps a counter, so tests and a
`snapshot()` can read what happened. An `EventLog` collects the names of one engine call, which
the turn lists in `TurnResult.memory_events`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from memoir.logging_hygiene import Scrubbed, safe_fields

__all__ = [
    "COUNTER_OF_EVENT",
    "COUNTERS",
    "EPISODIC_CREATE",
    "EPISODIC_DECIDE",
    "EPISODIC_MERGE",
    "EPISODIC_SKIP",
    "MEMORY_CREATE",
    "MEMORY_DECIDE",
    "MEMORY_MATCH",
    "MEMORY_PROFILE",
    "MEMORY_SEARCH",
    "MEMORY_UPDATE",
    "EventLog",
    "counter",
    "logger",
    "reset_counters",
    "snapshot",
]

logger = logging.getLogger("memoir.memory")

MEMORY_DECIDE: Final = "memory.decide"
MEMORY_SEARCH: Final = "memory.search"
MEMORY_MATCH: Final = "memory.match"
MEMORY_UPDATE: Final = "memory.update"
MEMORY_CREATE: Final = "memory.create"
MEMORY_PROFILE: Final = "memory.profile"
EPISODIC_DECIDE: Final = "episodic.decide"
EPISODIC_SKIP: Final = "episodic.skip"
EPISODIC_MERGE: Final = "episodic.merge"
EPISODIC_CREATE: Final = "episodic.create"

COUNTERS: Final = (
    "semantic_updates",
    "semantic_creates",
    "episodic_creates",
    "episodic_merges",
    "episodic_skips",
)
COUNTER_OF_EVENT: Final = {
    MEMORY_UPDATE: "semantic_updates",
    MEMORY_CREATE: "semantic_creates",
    EPISODIC_CREATE: "episodic_creates",
    EPISODIC_MERGE: "episodic_merges",
    EPISODIC_SKIP: "episodic_skips",
}

# Event fields logged as they are (ids, stages, decisions, categories); every string of any
# other field (summaries, keys, reasoning, messages) is redacted unless MEMOIR_LOG_CONTENT is on.
LOGGED_AS_IS: Final = frozenset(
    {
        "user_id", "turn_id", "memory_id", "replaced_id", "merged_into", "stage", "decision",
        "should_create", "category", "by", "status", "mode", "kind", "day", "date_iso",
    }
)  # fmt: skip

_counts: Counter[str] = Counter()
_lock = threading.Lock()


def counter(name: str) -> int:
    """The current value of one counter (see `COUNTERS`)."""
    with _lock:
        return _counts[name]


def snapshot() -> dict[str, int]:
    """Every counter's current value."""
    with _lock:
        return {name: _counts[name] for name in COUNTERS}


def reset_counters() -> None:
    """Set every counter back to zero (tests)."""
    with _lock:
        _counts.clear()


def _render(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if " " in value else value
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class EventLog:
    """The events of one engine call: logged, counted and remembered by name, in order."""

    user_id: str
    turn_id: str = ""
    names: list[str] = field(default_factory=list)
    records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def emit(self, name: str, **fields: Any) -> None:
        """Log `name` with `fields`, bump its counter, and remember it."""
        payload = {"user_id": self.user_id, "turn_id": self.turn_id, **fields}
        logged = safe_fields(payload, LOGGED_AS_IS)
        text = " ".join(f"{k}={_render(v)}" for k, v in logged.items() if v not in (None, ""))
        logger.info("%s %s", name, Scrubbed(text), extra={"event": name, "fields": logged})
        counted = COUNTER_OF_EVENT.get(name)
        if counted is not None:
            with _lock:
                _counts[counted] += 1
        self.names.append(name)
        self.records.append((name, payload))

    def fields_of(self, name: str) -> list[dict[str, Any]]:
        """The fields of every `name` event emitted so far."""
        return [fields for event, fields in self.records if event == name]

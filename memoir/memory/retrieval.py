"""The memory context's candidates: dense and lexical rankings over facts, episodes and records.

For one question, run together:

- dense (one embedding of the question): semantic facts (top `MEMORY_CONTEXT_TOPK`), a few
  episodes (more on recall intent), pinned memories, and message records (top
  `MEMORY_CONTEXT_TOPK`), merged into one ranking by cosine similarity (one embedder, one scale);
- lexical (Postgres full-text search, an OR of the question's lexemes ranked by `ts_rank_cd`):
  facts, episodes and records, merged into one ranking by text rank;
- a time phrase ("in March", "last week") read in the user's timezone: on recall intent
  ("what did we discuss last week?") it filters episodes and records to its days (facts are
  timeless); otherwise the records of those days are ranked again, densely and lexically, as
  two more rankings, which lifts them without hiding what was said at other times (a question
  can name a time and still be about something said before it).

Postgres' text rank has no inverse document frequency, so before the lexical rankings the
question loses the words that occur in more than `MAX_WORD_SHARE` of the user's records (their
own name in an imported chat, "work" for someone who always talks about work): such a word tells
messages apart no better than chance (BM25's IDF is ~0 there) and would let any message holding
it match. Users with fewer than `MIN_RECORDS_FOR_SHARES` records keep every word.

Records the turn already shows as recent messages of its thread are left out.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from memoir.memory.context_items import ContextItem
from memoir.memory.models import Memory, MemoryKind
from memoir.memory.timephrases import TimeFilter, has_recall_intent
from memoir.stores.memories import MemoryStore
from memoir.stores.messages import MessageRecordStore, ScoredRecord, WordCounts

__all__ = [
    "DENSE",
    "DENSE_IN_WINDOW",
    "LEXICAL",
    "LEXICAL_IN_WINDOW",
    "MAX_WORD_SHARE",
    "MIN_RECORDS_FOR_SHARES",
    "NORMAL_EPISODIC_TOPK",
    "PINNED_TOPK",
    "RECALL_EPISODIC_TOPK",
    "Candidates",
    "RetrievalQuery",
    "distinctive_words",
    "gather",
    "has_recency_intent",
]

NORMAL_EPISODIC_TOPK = 6  # episodes retrieved on a normal turn
RECALL_EPISODIC_TOPK = 12  # episodes retrieved on recall intent
PINNED_TOPK = 8  # pinned memories considered on every turn

MAX_WORD_SHARE = 0.2
MIN_RECORDS_FOR_SHARES = 20
_WORD = re.compile(r"\w+")
Hits = list[tuple[ContextItem, float]]  # (candidate, its score in one query), best first

DENSE, LEXICAL = "dense", "lexical"
DENSE_IN_WINDOW, LEXICAL_IN_WINDOW = "dense@window", "lexical@window"

# Words that ask for the current state of things ("is she still …", "my latest …"): only then
# does recency count (answers are otherwise often months old).
_RECENCY = re.compile(
    r"\b(?:latest|newest|most\s+recent(?:ly)?|recent(?:ly)?|lately|current(?:ly)?|still"
    r"|now|nowadays|these\s+days|right\s+now|at\s+the\s+moment|any\s*more|no\s+longer)\b",
    re.I,
)


def has_recency_intent(text: str) -> bool:
    """Whether the question asks for the latest state ("latest", "currently", "still", "now")
    or recalls earlier conversations (recall intent)."""
    return has_recall_intent(text) or _RECENCY.search(text) is not None


@dataclass(frozen=True)
class RetrievalQuery:
    """One question of one user, as the rankings need it."""

    user_id: str
    text: str
    embedding: Sequence[float]
    timezone: str
    recall: bool
    window: TimeFilter | None
    top_k: int
    hidden: frozenset[tuple[str, str]] = frozenset()  # (thread_id, text) the turn already shows
    lexical_text: str | None = None  # the text the lexical rankings search (None: `text`)

    @property
    def words(self) -> str:
        return self.text if self.lexical_text is None else self.lexical_text

    @property
    def episodic_top_k(self) -> int:
        return RECALL_EPISODIC_TOPK if self.recall else NORMAL_EPISODIC_TOPK

    @property
    def filters(self) -> bool:
        """Whether the time window filters episodes and records (recall intent and a window)."""
        return self.recall and self.window is not None

    def bounds(self) -> tuple[datetime, datetime] | None:
        """The window as [since, until) instants: its first day's and next day's midnights."""
        if self.window is None:
            return None
        zone = ZoneInfo(self.timezone)
        since = datetime.combine(self.window.start, time(0), tzinfo=zone)
        until = datetime.combine(self.window.end + timedelta(days=1), time(0), tzinfo=zone)
        return since, until


@dataclass
class Candidates:
    """Every candidate by key, the rankings of their keys, and how many hits each query gave."""

    items: dict[str, ContextItem] = field(default_factory=dict)
    rankings: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, item: ContextItem, ranking: str, rank: int, similarity: float | None) -> None:
        known = self.items.setdefault(item.key, item)
        known.ranks.setdefault(ranking, rank)
        if similarity is not None and (known.similarity is None or similarity > known.similarity):
            known.similarity = similarity

    def rank(self, name: str, scored: Iterable[tuple[ContextItem, float]], dense: bool) -> None:
        """Add a ranking: the items by score, best first (one entry per key)."""
        keys: list[str] = []
        seen: set[str] = set()
        ordered = sorted(scored, key=lambda pair: (-pair[1], pair[0].order_among_equals))
        for item, score in ordered:
            if item.key in seen:
                continue
            seen.add(item.key)
            keys.append(item.key)
            self.add(item, name, len(keys), score if dense else None)
        self.rankings[name] = keys


def _memories(hits: Iterable[tuple[Memory, float]]) -> list[tuple[ContextItem, float]]:
    return [(ContextItem.of_memory(m), score) for m, score in hits]


def _records(
    hits: Iterable[ScoredRecord], query: RetrievalQuery
) -> list[tuple[ContextItem, float]]:
    return [
        (ContextItem.of_record(h.record), h.score)
        for h in hits
        if (h.record.thread_id, h.record.text) not in query.hidden
    ]


async def _dense(
    query: RetrievalQuery, memories: MemoryStore, records: MessageRecordStore | None
) -> dict[str, Hits]:
    user, vector, window = query.user_id, query.embedding, query.window
    bounds = query.bounds() if query.filters else None
    semantic, episodic, pinned, said = await asyncio.gather(
        memories.search(user, vector, kind=MemoryKind.SEMANTIC, top_k=query.top_k),
        memories.search(
            user,
            vector,
            kind=MemoryKind.EPISODIC,
            top_k=query.episodic_top_k,
            filter=window.filter if query.filters and window else None,
        ),
        memories.search(user, vector, kind=None, top_k=PINNED_TOPK, filter={"pinned": True}),
        _record_dense(query, records, bounds),
    )
    return {
        "semantic": _memories(semantic),
        "episodic": _memories(episodic),
        "pinned": _memories(pinned),
        "records": _records(said, query),
    }


async def _record_dense(
    query: RetrievalQuery,
    records: MessageRecordStore | None,
    bounds: tuple[datetime, datetime] | None,
) -> list[ScoredRecord]:
    if records is None:
        return []
    since, until = bounds if bounds else (None, None)
    return await records.dense(
        query.user_id, query.embedding, top_k=query.top_k, since=since, until=until
    )


async def _record_lexical(
    query: RetrievalQuery,
    records: MessageRecordStore | None,
    bounds: tuple[datetime, datetime] | None,
) -> list[ScoredRecord]:
    if records is None:
        return []
    since, until = bounds if bounds else (None, None)
    return await records.lexical(
        query.user_id, query.words, top_k=query.top_k, since=since, until=until
    )


async def _lexical(
    query: RetrievalQuery, memories: MemoryStore, records: MessageRecordStore | None
) -> dict[str, Hits]:
    user, text, window = query.user_id, query.words, query.window
    days = (window.start, window.end) if query.filters and window else None
    facts, episodes, said = await asyncio.gather(
        memories.lexical(user, text, kind=MemoryKind.SEMANTIC, top_k=query.top_k),
        memories.lexical(
            user, text, kind=MemoryKind.EPISODIC, top_k=query.episodic_top_k, episode_days=days
        ),
        _record_lexical(query, records, query.bounds() if query.filters else None),
    )
    return {
        "semantic": _memories(facts),
        "episodic": _memories(episodes),
        "records": _records(said, query),
    }


async def _in_window(query: RetrievalQuery, records: MessageRecordStore | None) -> dict[str, Hits]:
    """Records of the window's days, densely and lexically (a time phrase, no recall intent)."""
    bounds = query.bounds()
    if records is None or bounds is None or query.filters:
        return {}
    dense, lexical = await asyncio.gather(
        _record_dense(query, records, bounds), _record_lexical(query, records, bounds)
    )
    return {DENSE_IN_WINDOW: _records(dense, query), LEXICAL_IN_WINDOW: _records(lexical, query)}


def distinctive_words(text: str, counts: WordCounts) -> str:
    """`text` without the words too common among the user's records (see the module); all of
    it when the user has few records or every word is common."""
    if counts.records < MIN_RECORDS_FOR_SHARES:
        return text
    kept = [w for w in _WORD.findall(text) if counts.share(w) <= MAX_WORD_SHARE]
    return " ".join(kept) if any(w.lower() in counts.counts for w in kept) else text


async def _words(
    query: RetrievalQuery, memories: MemoryStore, records: MessageRecordStore | None
) -> tuple[dict[str, Hits], dict[str, Hits]]:
    """The lexical rankings (and the window's), searching the question's distinctive words."""
    if records is not None:
        counts = await records.word_counts(query.user_id, query.text)
        query = replace(query, lexical_text=distinctive_words(query.text, counts))
    return await asyncio.gather(_lexical(query, memories, records), _in_window(query, records))


async def gather(
    query: RetrievalQuery, memories: MemoryStore, records: MessageRecordStore | None
) -> Candidates:
    """Every ranking of the question (see the module), as keys of one pool of candidates."""
    dense, (lexical, windowed) = await asyncio.gather(
        _dense(query, memories, records), _words(query, memories, records)
    )
    found = Candidates()
    found.counts = {f"{DENSE}.{k}": len(v) for k, v in dense.items()}
    found.counts |= {f"{LEXICAL}.{k}": len(v) for k, v in lexical.items()}
    found.counts |= {k: len(v) for k, v in windowed.items()}
    found.rank(DENSE, [hit for hits in dense.values() for hit in hits], dense=True)
    found.rank(LEXICAL, [hit for hits in lexical.values() for hit in hits], dense=False)
    for name, hits in windowed.items():
        found.rank(name, hits, dense=name == DENSE_IN_WINDOW)
    return found

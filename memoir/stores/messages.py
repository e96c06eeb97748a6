"""Message records: every user message and assistant reply as retrievable evidence.

Dense search ranks one user's records by cosine similarity (exact, through the user's rows);
lexical search ranks them by Postgres full-text match (`ts_rank_cd` over an OR of the query's
lexemes, so a question need not repeat every word of the answer). Both take an optional time
window. The remember stage writes records inside its interaction-history transaction
(`add_in`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from memoir.db import Connection, Pool
from memoir.stores._common import require_aware, user_must_exist
from memoir.vectors.pgvector import vector_literal

Speaker = Literal["user", "assistant"]
_COLUMNS = "record_id, user_id, thread_id, message_id, speaker, speaker_name, text, said_at"
_BEST_COLUMNS = "record_id, " + ", ".join(f"r.{c}" for c in _COLUMNS.split(", ")[1:])


class MessageRecord(BaseModel):
    """One message as said: who, when, where, and its text."""

    record_id: str
    user_id: str
    thread_id: str
    message_id: str
    speaker: Speaker
    speaker_name: str | None = None
    text: str
    said_at: datetime


class ScoredRecord(BaseModel):
    """A record with its score in one ranking (cosine similarity, or full-text rank)."""

    record: MessageRecord
    score: float


class WordCounts(BaseModel):
    """Per word of a question: in how many of the user's `records` it occurs."""

    records: int
    counts: dict[str, int]

    def share(self, word: str) -> float:
        """The share of the user's records holding `word` (0 when it has none)."""
        return self.counts.get(word.lower(), 0) / self.records if self.records else 0.0


def _window(since: datetime | None, until: datetime | None, params: list[Any]) -> str:
    """SQL conditions for `since <= said_at < until`, appending their parameters."""
    conditions = ""
    if since is not None:
        conditions += " AND said_at >= %s"
        params.append(require_aware(since, "since"))
    if until is not None:
        conditions += " AND said_at < %s"
        params.append(require_aware(until, "until"))
    return conditions


def dense_sql(window: str = "") -> str:
    """`dense`'s query (parameters: the vector, user_id, the window's, top_k).

    Exact: the MATERIALIZED CTE scores every row of this one user (read through the user index),
    never an approximate scan of everyone's vectors filtered afterwards; it keeps only
    (record_id, distance), and the top k are read back by primary key. bench/README.md
    ("Message records") has the figures and the designs compared.
    """
    return (
        "WITH mine AS MATERIALIZED (SELECT record_id, embedding <=> %s::vector AS distance"
        f" FROM message_records WHERE user_id = %s{window}),"
        " best AS (SELECT record_id, distance FROM mine ORDER BY distance, record_id LIMIT %s)"
        f" SELECT {_BEST_COLUMNS}, 1 - best.distance AS score"
        " FROM best JOIN message_records r USING (record_id)"
        " ORDER BY best.distance, best.record_id"
    )


def _scored(rows: Sequence[dict[str, Any]]) -> list[ScoredRecord]:
    return [
        ScoredRecord(record=MessageRecord.model_validate(row), score=float(row["score"]))
        for row in rows
    ]


class MessageRecordStore:
    """`message_records`: add inside a transaction, search densely or lexically, per user."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def add_in(
        self, conn: Connection, record: MessageRecord, embedding: Sequence[float]
    ) -> bool:
        """Insert once per `record_id` on `conn` (the caller's transaction); False if present."""
        require_aware(record.said_at, "said_at")
        async with user_must_exist(record.user_id):
            cur = await conn.execute(
                f"INSERT INTO message_records ({_COLUMNS}, embedding)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::vector)"
                " ON CONFLICT (record_id) DO NOTHING",
                (
                    record.record_id,
                    record.user_id,
                    record.thread_id,
                    record.message_id,
                    record.speaker,
                    record.speaker_name,
                    record.text,
                    record.said_at,
                    vector_literal(embedding),
                ),
            )
        return cur.rowcount == 1

    async def add(self, record: MessageRecord, embedding: Sequence[float]) -> bool:
        """`add_in` on a connection of its own."""
        async with self.pool.connection() as conn:
            return await self.add_in(conn, record, embedding)

    async def dense(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        top_k: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[ScoredRecord]:
        """The user's records nearest to `embedding` (cosine similarity), best first."""
        params: list[Any] = [vector_literal(embedding), user_id]
        window = _window(since, until, params)
        params.append(top_k)
        async with self.pool.connection() as conn:
            cur = await conn.execute(dense_sql(window), params)
            return _scored(await cur.fetchall())

    async def lexical(
        self,
        user_id: str,
        text: str,
        *,
        top_k: int,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[ScoredRecord]:
        """The user's records sharing words with `text`, by full-text rank, best first."""
        params: list[Any] = [text, user_id]
        window = _window(since, until, params)
        params.append(top_k)
        # plainto_tsquery ANDs the words; an OR of the same lexemes lets partial matches rank.
        query = (
            "WITH q AS (SELECT nullif(replace(plainto_tsquery('english', %s)::text, '&', '|'),"
            " '')::tsquery AS query)"
            f" SELECT {_COLUMNS}, ts_rank_cd(tsv, q.query) AS score FROM message_records, q"
            f" WHERE user_id = %s AND tsv @@ q.query{window}"
            " ORDER BY score DESC, said_at DESC LIMIT %s"
        )
        async with self.pool.connection() as conn:
            cur = await conn.execute(query, params)
            return _scored(await cur.fetchall())

    async def word_counts(self, user_id: str, text: str) -> WordCounts:
        """How many of the user's records hold each word of `text` that full-text search keeps
        (stop words dropped; counted through the (user_id, tsv) index), and how many there are."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "WITH words AS (SELECT DISTINCT lower(d.token) AS word, l.lexeme"
                " FROM ts_debug('english', %s) d, unnest(d.lexemes) AS l(lexeme)"
                " WHERE d.lexemes IS NOT NULL AND l.lexeme <> '')"
                " SELECT NULL AS word, count(*) AS n FROM message_records WHERE user_id = %s"
                " UNION ALL SELECT w.word, (SELECT count(*) FROM message_records r"
                " WHERE r.user_id = %s AND r.tsv @@ plainto_tsquery('simple', w.lexeme))"
                " FROM words w",
                (text, user_id, user_id),
            )
            rows = await cur.fetchall()
        total, counts = 0, dict[str, int]()
        for row in rows:
            if row["word"] is None:
                total = int(row["n"])
            else:
                counts[row["word"]] = max(counts.get(row["word"], 0), int(row["n"]))
        return WordCounts(records=total, counts=counts)

    async def previous(
        self, user_id: str, thread_id: str, before: datetime, since: datetime
    ) -> MessageRecord | None:
        """The thread's last record said in `since <= said_at < before`, if any."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM message_records"
                " WHERE user_id = %s AND thread_id = %s AND said_at >= %s AND said_at < %s"
                " ORDER BY said_at DESC, record_id DESC LIMIT 1",
                (user_id, thread_id, since, before),
            )
            row = await cur.fetchone()
        return MessageRecord.model_validate(row) if row else None

    async def by_message_ids(self, user_id: str, message_ids: Sequence[str]) -> list[MessageRecord]:
        """The user's records of these message ids, oldest first (an answer's citations)."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM message_records"
                " WHERE user_id = %s AND message_id = ANY(%s) ORDER BY said_at",
                (user_id, list(message_ids)),
            )
            return [MessageRecord.model_validate(row) for row in await cur.fetchall()]

    async def count(self, user_id: str) -> int:
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) AS n FROM message_records WHERE user_id = %s", (user_id,)
            )
            row = await cur.fetchone()
            return int(row["n"]) if row else 0

"""The pgvector backend: `memory_vectors` (HNSW, cosine) in Memoir's own Postgres.

Every statement is scoped by `user_id`. A vector belongs to a `memories` row (foreign key), so
`upsert` needs that row first; metadata keys the caller leaves out are taken from it. Each write
has an `…_in(conn, …)` form that joins the caller's transaction (`TransactionalVectorStore`):
`MemoryStore` writes a memory's row and its vector in one transaction.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import numpy as np
from psycopg import sql
from psycopg.rows import DictRow

from memoir.db import Connection, Pool
from memoir.memory.models import VectorHit
from memoir.vectors.base import Filter

DEFAULT_DIM = 384  # all-MiniLM-L6-v2; memory_vectors.embedding is vector(384)
# HNSW candidate list per query (pgvector's default is 40). 100 keeps recall@10 >= 0.95 on
# 100k vectors (bench/memory_bench.py); a larger top_k gets twice its size.
DEFAULT_EF_SEARCH = 100
EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search

# Filterable metadata: key -> the Postgres type of its memory_vectors column.
FILTER_COLUMNS: dict[str, str] = {
    "kind": "text",
    "category": "text",
    "date_iso": "date",
    "week": "integer",
    "year": "integer",
    "pinned": "boolean",
}
_COMPARISONS = {
    "$eq": "=",
    "$ne": "IS DISTINCT FROM",
    "$gt": ">",
    "$gte": ">=",
    "$lt": "<",
    "$lte": "<=",
}


# Connections whose session already carries the default HNSW settings (see `nearest_rows`).
_SESSION_HNSW_SET: weakref.WeakSet[Connection] = weakref.WeakSet()
_SET_HNSW = (
    "SELECT set_config('hnsw.ef_search', %s, {local}),"
    " set_config('hnsw.iterative_scan', 'strict_order', {local})"
)


def ef_search_for(ef_search: int, top_k: int) -> int:
    """The `hnsw.ef_search` for a query of `top_k` results: at least `ef_search`, at least
    twice `top_k`, within pgvector's bounds."""
    return max(1, min(EF_SEARCH_MAX, max(ef_search, 2 * top_k)))


async def nearest_rows(
    pool: Pool, ef_search: int, query: sql.Composed | str, params: Sequence[Any]
) -> list[DictRow]:
    """The rows of an HNSW query run with `hnsw.ef_search = ef_search` and iterative scans in
    strict order (so a user or metadata filter that drops candidates still yields `LIMIT` rows).

    `DEFAULT_EF_SEARCH` is set once per connection, for its session: such a query is one round
    trip. Another value is set for the query's transaction only (BEGIN, SET, the query,
    COMMIT: four round trips, as every query took before)."""
    async with pool.connection() as conn:
        if ef_search != DEFAULT_EF_SEARCH:
            async with conn.transaction():
                await conn.execute(_SET_HNSW.format(local="true"), (str(ef_search),))
                return await (await conn.execute(query, params)).fetchall()
        if conn not in _SESSION_HNSW_SET:
            await conn.execute(_SET_HNSW.format(local="false"), (str(DEFAULT_EF_SEARCH),))
            _SESSION_HNSW_SET.add(conn)
        return await (await conn.execute(query, params)).fetchall()


class MissingMemoryError(LookupError):
    """A vector was upserted for a memory id that has no `memories` row of that user."""


def vector_literal(vector: Sequence[float], dim: int = DEFAULT_DIM) -> str:
    """The pgvector text form `[x,y,...]` of a vector, checking its length and values.

    Nine significant digits carry a float32, pgvector's element type, exactly; the shortest
    float64 `repr` was half as long again and three times slower to write (a turn writes six)."""
    if len(vector) != dim:
        raise ValueError(f"expected a vector of {dim} dimensions, got {len(vector)}")
    values = np.asarray(vector, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError("vector values must be finite numbers")
    return "[" + ",".join(["%.9g"] * dim) % tuple(values.tolist()) + "]"


def _coerce(key: str, value: Any, *, nullable: bool = False) -> Any:
    """A filter or metadata value converted to the Python type of its column."""
    if value is None:
        if nullable:
            return None
        raise ValueError(f"{key}: null is not a filter value")
    kind = FILTER_COLUMNS[key]
    if kind == "date":
        if isinstance(value, date):
            return value
        if isinstance(value, str):
            return date.fromisoformat(value)
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{key} must be a number, got {value!r}")
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{key} must be a whole number, got {value!r}")
        return int(value)
    elif kind == "boolean":
        if isinstance(value, bool):
            return value
    elif isinstance(value, str):
        return str(value)  # a StrEnum (MemoryKind) as its value
    raise ValueError(f"{key} must be a {kind}, got {value!r}")


def _condition(key: str, spec: Any, params: list[Any]) -> sql.Composable:
    """The SQL condition for one filter key (equality, or a dict of operators)."""
    if key not in FILTER_COLUMNS:
        raise ValueError(f"cannot filter on {key!r}: filterable keys are {sorted(FILTER_COLUMNS)}")
    column = sql.Identifier(key)
    if not isinstance(spec, Mapping):
        spec = {"$eq": spec}
    if not spec:
        raise ValueError(f"empty condition for {key!r}")
    parts: list[sql.Composable] = []
    for op, value in spec.items():
        if op in _COMPARISONS:
            params.append(_coerce(key, value))
            parts.append(
                sql.SQL("{} {} {}").format(column, sql.SQL(_COMPARISONS[op]), sql.Placeholder())
            )
        elif op in ("$in", "$nin"):
            if not isinstance(value, list | tuple):
                raise ValueError(f"{op} on {key!r} needs a list, got {value!r}")
            params.append([_coerce(key, v) for v in value])
            cast = sql.SQL(FILTER_COLUMNS[key] + "[]")
            template = "{} = ANY({}::{})" if op == "$in" else "coalesce({} <> ALL({}::{}), true)"
            parts.append(sql.SQL(template).format(column, sql.Placeholder(), cast))
        elif op == "$exists":
            parts.append(sql.SQL("{} IS NOT NULL" if value else "{} IS NULL").format(column))
        else:
            raise ValueError(f"unsupported filter operator {op!r} on {key!r}")
    return sql.SQL(" AND ").join(parts)


def filter_sql(filter: Filter | None, params: list[Any]) -> sql.Composable:
    """A Pinecone-syntax filter as a SQL condition (`TRUE` when empty); appends its params."""
    if not filter:
        return sql.SQL("TRUE")
    parts: list[sql.Composable] = []
    for key, spec in filter.items():
        if key in ("$and", "$or"):
            if not isinstance(spec, list | tuple) or not spec:
                raise ValueError(f"{key} needs a non-empty list of filters")
            joiner = sql.SQL(" AND " if key == "$and" else " OR ")
            parts.append(
                sql.SQL("({})").format(joiner.join(filter_sql(sub, params) for sub in spec))
            )
        else:
            parts.append(_condition(key, spec, params))
    return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))


def _hit(row: Mapping[str, Any]) -> VectorHit:
    metadata: dict[str, Any] = dict(row["extra"] or {})
    for key in FILTER_COLUMNS:
        value = row[key]
        if value is not None:
            metadata[key] = value.isoformat() if isinstance(value, date) else value
    return VectorHit(id=row["memory_id"], score=float(row["score"]), metadata=metadata)


class PgVectorStore:
    """VectorStore over `memory_vectors`: cosine similarity through an HNSW index."""

    def __init__(
        self, pool: Pool, *, dim: int = DEFAULT_DIM, ef_search: int = DEFAULT_EF_SEARCH
    ) -> None:
        self.pool = pool
        self.dim = dim
        self.ef_search = ef_search

    def ef_search_for(self, top_k: int) -> int:
        """The `hnsw.ef_search` used for a query of `top_k` results."""
        return ef_search_for(self.ef_search, top_k)

    async def upsert(
        self, user_id: str, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]
    ) -> None:
        """Insert or replace (id, vector, metadata); raises `MissingMemoryError` without a row."""
        if not items:
            return
        async with self.pool.connection() as conn, conn.transaction():
            await self.upsert_in(conn, user_id, items)

    async def upsert_in(
        self,
        conn: Connection,
        user_id: str,
        items: Sequence[tuple[str, Sequence[float], dict[str, Any]]],
    ) -> None:
        """`upsert` on `conn`, inside the caller's transaction (with the memories rows)."""
        statements = [self._upsert_statement(user_id, *item) for item in items]
        for (memory_id, _vector, _meta), (query, params) in zip(items, statements, strict=True):
            cur = await conn.execute(query, params)
            if cur.rowcount != 1:
                raise MissingMemoryError(
                    f"no memory {memory_id!r} of user {user_id!r}: "
                    "add the memories row before its vector"
                )

    def _upsert_statement(
        self, user_id: str, memory_id: str, vector: Sequence[float], metadata: Mapping[str, Any]
    ) -> tuple[sql.Composed, list[Any]]:
        """One INSERT ... SELECT FROM memories ... ON CONFLICT statement and its params."""
        params: list[Any] = []
        values: list[sql.Composable] = []
        for key, pg_type in FILTER_COLUMNS.items():
            if key in metadata:
                params.append(_coerce(key, metadata[key], nullable=True))
                values.append(sql.SQL("{}::{}").format(sql.Placeholder(), sql.SQL(pg_type)))
            else:
                values.append(sql.SQL("m.{}").format(sql.Identifier(key)))
        extra = {k: v for k, v in metadata.items() if k not in FILTER_COLUMNS}
        params += [json.dumps(extra, default=str), vector_literal(vector, self.dim)]
        params += [memory_id, user_id]
        columns = sql.SQL(", ").join(sql.Identifier(k) for k in FILTER_COLUMNS)
        query = sql.SQL(
            "INSERT INTO memory_vectors (memory_id, user_id, {columns}, extra, embedding)"
            " SELECT m.memory_id, m.user_id, {values}, %s::jsonb, %s::vector"
            " FROM memories m WHERE m.memory_id = %s AND m.user_id = %s"
            " ON CONFLICT (memory_id) DO UPDATE SET {updates},"
            " extra = EXCLUDED.extra, embedding = EXCLUDED.embedding"
        ).format(
            columns=columns,
            values=sql.SQL(", ").join(values),
            updates=sql.SQL(", ").join(
                sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(k)) for k in FILTER_COLUMNS
            ),
        )
        return query, params

    async def query(
        self, user_id: str, vector: Sequence[float], *, top_k: int, filter: Filter | None = None
    ) -> list[VectorHit]:
        """The user's nearest vectors by cosine similarity (1 - cosine distance), best first."""
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        literal = vector_literal(vector, self.dim)
        params: list[Any] = [literal, user_id]
        where = filter_sql(filter, params)
        params += [literal, top_k]
        columns = sql.SQL(", ").join(sql.Identifier(k) for k in FILTER_COLUMNS)
        query = sql.SQL(
            "SELECT memory_id, {columns}, extra, 1 - (embedding <=> %s::vector) AS score"
            " FROM memory_vectors WHERE user_id = %s AND {where}"
            " ORDER BY embedding <=> %s::vector LIMIT %s"
        ).format(columns=columns, where=where)
        rows = await nearest_rows(self.pool, self.ef_search_for(top_k), query, params)
        return [_hit(row) for row in rows]

    async def update_metadata(self, user_id: str, memory_id: str, metadata: dict[str, Any]) -> None:
        """Set these filterable metadata keys on one vector, leaving its embedding as it is."""
        async with self.pool.connection() as conn:
            await self.update_metadata_in(conn, user_id, memory_id, metadata)

    async def update_metadata_in(
        self, conn: Connection, user_id: str, memory_id: str, metadata: dict[str, Any]
    ) -> None:
        """`update_metadata` on `conn` (inside the caller's transaction, if any)."""
        unknown = set(metadata) - set(FILTER_COLUMNS)
        if unknown:
            raise ValueError(f"not filterable metadata: {sorted(unknown)}")
        if not metadata:
            return
        params: list[Any] = [_coerce(k, v, nullable=True) for k, v in metadata.items()]
        assignments = sql.SQL(", ").join(
            sql.SQL("{} = {}").format(sql.Identifier(k), sql.Placeholder()) for k in metadata
        )
        query = sql.SQL(
            "UPDATE memory_vectors SET {} WHERE user_id = %s AND memory_id = %s"
        ).format(assignments)
        await conn.execute(query, [*params, user_id, memory_id])

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove these ids of this user (missing ids are not an error)."""
        async with self.pool.connection() as conn:
            await self.delete_in(conn, user_id, ids)

    async def delete_in(self, conn: Connection, user_id: str, ids: Sequence[str]) -> None:
        """`delete` on `conn` (inside the caller's transaction, if any)."""
        if not ids:
            return
        await conn.execute(
            "DELETE FROM memory_vectors WHERE user_id = %s AND memory_id = ANY(%s)",
            (user_id, list(ids)),
        )

    async def delete_user(self, user_id: str) -> None:
        """Remove every vector of this user."""
        async with self.pool.connection() as conn:
            await self.delete_user_in(conn, user_id)

    async def delete_user_in(self, conn: Connection, user_id: str) -> None:
        """`delete_user` on `conn` (inside the caller's transaction, if any)."""
        await conn.execute("DELETE FROM memory_vectors WHERE user_id = %s", (user_id,))

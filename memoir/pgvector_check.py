"""The pgvector and pg_trgm operations Memoir relies on, each run on its own connection.

A `vector.so` built for another CPU (e.g. compiled with AVX-512 on the build machine) kills the
backend with SIGILL on the first vector it touches. Running each operation alone says which one
crashed, so `memoir doctor`, the test suite's database fixture and
`tests/test_pgvector_portability.py` can name it instead of failing half the suite later.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

DIM = 384  # the width of memory_vectors.embedding and kb_chunks.embedding
_ROWS = 64  # enough rows for the HNSW graph to have several layers of neighbours


@dataclass(frozen=True)
class OperationResult:
    name: str
    ok: bool
    detail: str = ""


def _vector(rng: random.Random) -> str:
    return "[" + ",".join(f"{rng.uniform(-1, 1):.5f}" for _ in range(DIM)) + "]"


def _vector_norm(conn: psycopg.Connection) -> str:
    row = conn.execute("SELECT vector_norm('[3,4]'::vector)").fetchone()
    assert row is not None and abs(row[0] - 5.0) < 1e-6, f"vector_norm([3,4]) = {row}"
    return "vector_norm([3,4]) = 5"


def _cosine_distance(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT '[1,0]'::vector <=> '[0,1]'::vector, '[1,2]'::vector <=> '[2,4]'::vector"
    ).fetchone()
    assert row is not None and abs(row[0] - 1.0) < 1e-6 and abs(row[1]) < 1e-6, f"got {row}"
    return "orthogonal 1, parallel 0"


def _hnsw_table(conn: psycopg.Connection, table: str) -> list[str]:
    """A temp table with the HNSW cosine index Memoir's migrations create, filled with rows."""
    conn.execute(f"CREATE TEMP TABLE {table} (id int PRIMARY KEY, embedding vector({DIM}))")
    conn.execute(
        f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)"
        " WITH (m = 16, ef_construction = 64)"
    )
    rng = random.Random(7)
    vectors = [_vector(rng) for _ in range(_ROWS)]
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {table} VALUES (%s, %s::vector)", list(enumerate(vectors)))
    return vectors


def _hnsw_insert(conn: psycopg.Connection) -> str:
    _hnsw_table(conn, "probe_memory_vectors")
    return f"{_ROWS} rows of {DIM} dimensions into an HNSW (vector_cosine_ops) index"


def _hnsw_ordered_scan(conn: psycopg.Connection) -> str:
    vectors = _hnsw_table(conn, "probe_kb_chunks")
    conn.execute("SET enable_seqscan = off")
    plan = conn.execute(
        "EXPLAIN SELECT id FROM probe_kb_chunks ORDER BY embedding <=> %s::vector LIMIT 5",
        (vectors[3],),
    ).fetchall()
    assert any("hnsw" in line[0].lower() or "Index Scan" in line[0] for line in plan), plan
    rows = conn.execute(
        "SELECT id, 1 - (embedding <=> %s::vector) FROM probe_kb_chunks"
        " ORDER BY embedding <=> %s::vector LIMIT 5",
        (vectors[3], vectors[3]),
    ).fetchall()
    assert rows and rows[0][0] == 3 and abs(rows[0][1] - 1.0) < 1e-4, f"nearest: {rows[:2]}"
    return "an index scan ordered by <=> finds the query vector first"


def _trigram_similarity(conn: psycopg.Connection) -> str:
    conn.execute("CREATE TEMP TABLE probe_names (name text)")
    conn.execute("CREATE INDEX ON probe_names USING gin (name gin_trgm_ops)")
    conn.execute("INSERT INTO probe_names VALUES ('Dan Brown'), ('Alice Smith')")
    row = conn.execute("SELECT name FROM probe_names WHERE name % 'dan brwn'").fetchone()
    assert row is not None and row[0] == "Dan Brown", f"got {row}"
    return "a gin_trgm_ops index finds 'Dan Brown' for 'dan brwn'"


OPERATIONS: dict[str, Callable[[psycopg.Connection], str]] = {
    "vector_norm": _vector_norm,
    "cosine distance (<=>)": _cosine_distance,
    "HNSW insert (vector_cosine_ops)": _hnsw_insert,
    "HNSW ordered scan (<=>, as the memory and knowledge stores query)": _hnsw_ordered_scan,
    "pg_trgm similarity (gin_trgm_ops)": _trigram_similarity,
}


def _connect(url: str, *, wait_seconds: float) -> psycopg.Connection:
    """Connect, waiting while a server that just lost a backend restarts (crash recovery)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=5)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def run_operation(url: str, name: str) -> OperationResult:
    """Run one operation on a fresh connection; a crashed backend is reported, not raised."""
    try:
        with _connect(url, wait_seconds=15) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            return OperationResult(name, True, OPERATIONS[name](conn))
    except psycopg.OperationalError as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return OperationResult(
            name,
            False,
            f"the server crashed or closed the connection ({first_line}); a vector.so built "
            "for another CPU does this (see the server log for 'invalid opcode' / signal 4)",
        )
    except (psycopg.Error, AssertionError) as error:
        return OperationResult(name, False, f"{type(error).__name__}: {error}")


def check_vector_operations(url: str) -> list[OperationResult]:
    """Every operation in `OPERATIONS`, in order, each on its own connection."""
    return [run_operation(url, name) for name in OPERATIONS]


def failures_message(results: list[OperationResult]) -> str:
    """One line per failed operation, for an error message."""
    return "; ".join(f"{r.name}: {r.detail}" for r in results if not r.ok)

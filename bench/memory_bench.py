"""Memory retrieval benchmark: PgVectorStore.query latency and HNSW recall@k against exact search.

For one user: insert N random unit vectors (numpy; memories rows and vectors by binary COPY),
build the HNSW index exactly as migration 002 defines it, then time `PgVectorStore.query` (no
embedding: the query vectors are ready-made) and compare its top-k with an exact search (a
sequential scan, index scans disabled). Targets: p50 <= 10 ms at 100 000, recall@10 >= 0.95.

    .venv/bin/python bench/memory_bench.py                  # N = 10 000 and 100 000
    .venv/bin/python bench/memory_bench.py --n 10000 --queries 100 --ef 40,100

Runs against an embedded Postgres in a temp dir, or MEMOIR_DATABASE_URL when set (inside a
schema of its own, dropped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg.conninfo import make_conninfo

from memoir.db import Pool, migrate, open_pool
from memoir.stores.users import UserStore
from memoir.vectors.pgvector import DEFAULT_EF_SEARCH, PgVectorStore, vector_literal

DIM = 384
HNSW_INDEX = "memory_vectors_embedding_idx"
CATEGORIES = ("profile", "preference", "goal", "pet", "work", "topic")


def log(message: str) -> None:
    """A timestamped progress line, flushed at once."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def unit_vectors(
    rng: np.random.Generator, n: int, dist: str, centres: np.ndarray, spread: float
) -> np.ndarray:
    """n unit vectors (float32): uniform on the sphere, or around random centres."""
    if dist == "uniform":
        x = rng.standard_normal((n, DIM), dtype=np.float32)
    else:  # clustered: like real embeddings, topics with spread around them
        picks = rng.integers(0, len(centres), size=n)
        x = centres[picks] + rng.standard_normal((n, DIM), dtype=np.float32) * spread
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


@dataclass
class Timing:
    """Query figures at one hnsw.ef_search."""

    ef_search: int
    p50_ms: float
    p95_ms: float
    recall: float


@dataclass
class Result:
    """The figures of one run."""

    n: int
    dist: str
    load_s: float
    index_s: float
    exact_p50_ms: float
    timings: list[Timing]
    plan_uses_hnsw: bool


@asynccontextmanager
async def database() -> AsyncIterator[str]:
    """A libpq URL whose search_path is a fresh schema (embedded Postgres unless configured)."""
    url = os.environ.get("MEMOIR_DATABASE_URL")
    server = None
    tmp = None
    if not url:
        from memoir.embedded_pg import start_embedded_postgres

        tmp = tempfile.TemporaryDirectory(prefix="memoir-bench-")
        log(f"starting an embedded Postgres in {tmp.name}")
        server = start_embedded_postgres(Path(tmp.name))
        url = server.url
    schema = f"memoir_bench_{secrets.token_hex(4)}"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield make_conninfo(url, options=f"-c search_path={schema},public")
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
        if server is not None:
            server.stop()
        if tmp is not None:
            tmp.cleanup()


async def load(pool: Pool, url: str, user_id: str, data: np.ndarray) -> tuple[str, float]:
    """COPY the memories rows and vectors with the HNSW index dropped; returns its definition."""
    n = len(data)
    started = time.perf_counter()
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT indexdef FROM pg_indexes"
            " WHERE indexname = %s AND schemaname = current_schema()",
            (HNSW_INDEX,),
        )
        row = await cur.fetchone()
        assert row is not None, "migration 002 creates the HNSW index"
        indexdef = str(row["indexdef"])
        await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(HNSW_INDEX)))
    ids = [f"mem_{i:032x}" for i in range(n)]
    step = max(1, n // 5)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await register_vector_async(conn)
        async with conn.cursor().copy(
            "COPY memories (memory_id, user_id, kind, category, summary, importance)"
            " FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "text", "text", "text", "float4"])
            for i, memory_id in enumerate(ids):
                category = CATEGORIES[i % len(CATEGORIES)]
                await copy.write_row((memory_id, user_id, "semantic", category, f"m{i}", 0.5))
        log(f"  {n:,} memories rows copied")
        async with conn.cursor().copy(
            "COPY memory_vectors (memory_id, user_id, kind, category, embedding)"
            " FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "text", "text", "vector"])
            for i, memory_id in enumerate(ids):
                category = CATEGORIES[i % len(CATEGORIES)]
                await copy.write_row((memory_id, user_id, "semantic", category, data[i]))
                if (i + 1) % step == 0:
                    log(f"  vectors copied: {i + 1:,}/{n:,}")
    return indexdef, time.perf_counter() - started


async def create_index(
    url: str, name: str, definition: str, total: int, *, memory: str = "1GB", poll: float = 5
) -> float:
    """CREATE one index (parallel workers, `memory` of maintenance_work_mem), printing its
    progress every `poll` seconds; the seconds it took."""
    started = time.perf_counter()
    workers = max(0, (os.cpu_count() or 1) - 1)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(memory)))
        await conn.execute(sql.SQL("SET max_parallel_maintenance_workers = {}").format(workers))
        build = asyncio.create_task(conn.execute(definition.encode()))
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as watch:
            while not build.done():
                await asyncio.wait({build}, timeout=poll)
                if build.done():
                    break
                cur = await watch.execute(
                    "SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index"
                )
                row = await cur.fetchone()
                if row is not None:
                    phase, done, of = row
                    log(
                        f"  {name}: {phase}, {done:,}/{of or total:,}"
                        f" ({time.perf_counter() - started:.0f} s)"
                    )
        await build
    return time.perf_counter() - started


async def build_index(url: str, indexdef: str, n: int) -> float:
    """CREATE the HNSW index and ANALYZE the table; the seconds both took."""
    started = time.perf_counter()
    await create_index(url, "building HNSW index", indexdef, n)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("ANALYZE memory_vectors")
    return time.perf_counter() - started


async def exact_top_k(
    pool: Pool, user_id: str, query: np.ndarray, k: int
) -> tuple[list[str], float]:
    """The true top-k by a sequential scan (index scans off), and how long it took."""
    literal = vector_literal(query.tolist())
    started = time.perf_counter()
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        await conn.execute("SET LOCAL enable_bitmapscan = off")
        cur = await conn.execute(
            "SELECT memory_id FROM memory_vectors WHERE user_id = %s"
            " ORDER BY embedding <=> %s::vector LIMIT %s",
            (user_id, literal, k),
        )
        rows = await cur.fetchall()
    return [r["memory_id"] for r in rows], time.perf_counter() - started


async def plan_uses_hnsw(pool: Pool, user_id: str, query: np.ndarray, k: int) -> bool:
    """Whether the planner answers the store's query shape with the HNSW index."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "EXPLAIN SELECT memory_id FROM memory_vectors WHERE user_id = %s"
            " ORDER BY embedding <=> %s::vector LIMIT %s",
            (user_id, vector_literal(query.tolist()), k),
        )
        plan = " ".join(str(r["QUERY PLAN"]) for r in await cur.fetchall())
    return HNSW_INDEX in plan


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of values."""
    return float(np.percentile(np.array(values), q))


def make_vectors(n: int, dist: str, args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """(data, queries): generated with numpy, or read from `--npy` (queries held out)."""
    if dist.startswith("npy:"):
        rows = np.load(dist[4:]).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        np.random.default_rng(args.seed).shuffle(rows)
        n = min(n, len(rows) - args.queries)
        log(f"N = {n:,}: {n:,} vectors and {args.queries} held-out queries from {dist[4:]}")
        return rows[:n], rows[n : n + args.queries]
    rng = np.random.default_rng(args.seed)
    centres = rng.standard_normal((max(1, n // 100), DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    log(f"N = {n:,}: generating {n:,} {dist} unit vectors and {args.queries} queries")
    data = unit_vectors(rng, n, dist, centres, args.spread)
    queries = unit_vectors(rng, args.queries, dist, centres, args.spread)
    return data, queries


async def run_one(n: int, dist: str, args: argparse.Namespace) -> Result:
    """Load N vectors, build the index, time queries and measure recall."""
    data, queries = make_vectors(n, dist, args)
    n = len(data)
    async with database() as url:
        pool = await open_pool(url, min_size=2, max_size=4)
        try:
            await migrate(pool)
            user, _token = await UserStore(pool).create_user("Bench User", user_id="bench-user")
            indexdef, load_s = await load(pool, url, user.user_id, data)
            log(f"  loaded in {load_s:.1f} s; building the index: {indexdef}")
            index_s = await build_index(url, indexdef, n)
            log(f"  index built in {index_s:.1f} s")
            k = args.top_k
            uses_hnsw = await plan_uses_hnsw(pool, user.user_id, queries[0], k)
            log(f"  exact search for {len(queries)} queries (sequential scan)")
            truth: list[set[str]] = []
            exact_times: list[float] = []
            for q in queries:
                found, took = await exact_top_k(pool, user.user_id, q, k)
                truth.append(set(found))
                exact_times.append(took)
            timings: list[Timing] = []
            as_lists = [q.tolist() for q in queries]
            for ef in args.ef:
                store = PgVectorStore(pool, ef_search=ef)
                for q in as_lists[:10]:  # warm-up: caches, connections
                    await store.query(user.user_id, q, top_k=k)
                times: list[float] = []
                hits_found = 0
                for q, expected in zip(as_lists, truth, strict=True):
                    started = time.perf_counter()
                    hits = await store.query(user.user_id, q, top_k=k)
                    times.append(time.perf_counter() - started)
                    hits_found += len(expected & {h.id for h in hits})
                timing = Timing(
                    ef_search=store.ef_search_for(k),
                    p50_ms=percentile(times, 50) * 1000,
                    p95_ms=percentile(times, 95) * 1000,
                    recall=hits_found / (k * len(queries)),
                )
                timings.append(timing)
                log(
                    f"  ef_search={timing.ef_search}: p50 {timing.p50_ms:.2f} ms,"
                    f" p95 {timing.p95_ms:.2f} ms, recall@{k} {timing.recall:.3f}"
                )
        finally:
            await pool.close()
    return Result(
        n=n,
        dist=dist,
        load_s=load_s,
        index_s=index_s,
        exact_p50_ms=statistics.median(exact_times) * 1000,
        timings=timings,
        plan_uses_hnsw=uses_hnsw,
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    # (with --npy, N is capped at the file's rows less the queries)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument(
        "--ef",
        type=lambda s: [int(x) for x in s.split(",")],
        default=sorted({40, DEFAULT_EF_SEARCH, 200, 400}),
        help=f"comma-separated hnsw.ef_search values (the store uses {DEFAULT_EF_SEARCH})",
    )
    parser.add_argument(
        "--dist",
        nargs="+",
        choices=["clustered", "uniform"],
        default=["clustered", "uniform"],
        help="clustered: points around N/100 random centres (like real embeddings);"
        " uniform: uniform on the sphere (the worst case for any ANN index)",
    )
    parser.add_argument("--npy", help="use these vectors (a .npy of rows) instead of numpy's")
    parser.add_argument(
        "--spread", type=float, default=0.06, help="per-dimension noise around a cluster centre"
    )
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


async def main(argv: list[str]) -> int:
    """Run the benchmark for each N and distribution, then print a summary table."""
    args = parse_args(argv)
    dists = [f"npy:{args.npy}"] if args.npy else args.dist
    started = time.perf_counter()
    results = [await run_one(n, dist, args) for n in args.n for dist in dists]
    k = args.top_k
    print()
    print(
        f"PgVectorStore.query, {args.queries} queries, top_k={k}, dim {DIM},"
        f" HNSW m=16 ef_construction=64; store default ef_search={DEFAULT_EF_SEARCH};"
        f" {os.cpu_count()} CPUs; total {time.perf_counter() - started:.0f} s"
    )
    print(
        f"{'N':>9}  {'vectors':<16} {'load s':>6}  {'index s':>7}  {'ef_search':>9}"
        f"  {'p50 ms':>6}  {'p95 ms':>6}  {'recall@' + str(k):>9}  {'exact p50 ms':>12}  hnsw"
    )
    for r in results:
        name = Path(r.dist[4:]).stem if r.dist.startswith("npy:") else r.dist
        for t in r.timings:
            print(
                f"{r.n:>9,}  {name:<16} {r.load_s:>6.1f}  {r.index_s:>7.1f}  {t.ef_search:>9}"
                f"  {t.p50_ms:>6.2f}  {t.p95_ms:>6.2f}  {t.recall:>9.3f}"
                f"  {r.exact_p50_ms:>12.2f}  {'yes' if r.plan_uses_hnsw else 'NO'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))

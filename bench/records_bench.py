"""Message-record retrieval benchmark: MessageRecordStore.dense / .lexical latency and recall@10.

Scenario A, one user with 10 000 message records: real-ish conversation (the bundled recall-eval
turns plus generated user messages and assistant replies) embedded with the local
all-MiniLM-L6-v2 (kept in --cache between runs); 200 questions (the recall-eval ones, then
generated ones) are timed through `dense`, `lexical`, and both at once (`asyncio.gather` over the
pool, as the memory context stage calls them), and `dense` as migration 013 shipped it for
comparison. Recall@10 of `dense` is measured against an exact numpy ranking.

Scenario B, many users in one table: 1 000 users x 1 000 records = 1 000 000 rows (clustered
synthetic vectors, generated text), rows interleaved in time so a user's rows are scattered over
the heap as in a live table; loaded by binary COPY with the secondary indexes dropped, then
rebuilt. Queries for one user (hot) and for 200 different users (one each) are timed for each
design: the store's exact per-user scan and, with --hnsw, an HNSW index over every user's
vectors searched with pgvector's iterative scans (its build alone takes ~9 minutes at 1M rows
on 2 CPUs, so it is not part of `make bench-memory`).

    .venv/bin/python bench/records_bench.py                      # A, then B (1M rows, exact)
    .venv/bin/python bench/records_bench.py --scenario b --hnsw  # B with the HNSW designs (~15 min)
    .venv/bin/python bench/records_bench.py --scenario b --users 1000 --per-user 200 --hnsw

Runs against an embedded Postgres in a temp dir, or MEMOIR_DATABASE_URL when set (inside a
schema of its own, dropped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from memory_bench import create_index, database, log, percentile
from pgvector.psycopg import register_vector_async
from psycopg import sql

from memoir.db import Pool, migrate, open_pool
from memoir.stores.messages import _COLUMNS, MessageRecordStore, dense_sql
from memoir.vectors.pgvector import vector_literal

DIM = 384
T0 = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)
COPY_COLUMNS = (
    "record_id, user_id, thread_id, message_id, speaker, speaker_name, text, said_at, embedding"
)
COPY_TYPES = ["text"] * 7 + ["timestamptz", "vector"]
HNSW_INDEX = "message_records_embedding_hnsw_bench"

# -- real-ish text ---------------------------------------------------------------------------

PEOPLE = (
    "my sister", "my brother", "my mum", "my dad", "my partner", "my boss", "my neighbour",
    "Jonas", "Priya", "Sam", "Kenji", "Ada", "Luis", "Harriet", "my best friend",
    "my colleague Tom", "grandma", "my son", "my daughter", "our landlord", "the twins",
    "my physio", "Aunt Rosa", "my flatmate",
)  # fmt: skip
PLACES = (
    "Paris", "Lisbon", "Kyoto", "the Alps", "Harrogate", "Berlin", "the lake house",
    "the new office", "Sri Lanka", "the dentist", "the farmers market", "the gym", "Barcelona",
    "the cottage in Wales", "the hospital", "the library", "Vancouver Island", "Edinburgh",
    "the climbing wall", "Copenhagen", "the garden centre", "Marrakesh",
)  # fmt: skip
ACTIVITIES = (
    "hiking", "baking sourdough", "learning Spanish", "training for a half marathon",
    "painting watercolours", "playing chess", "gardening", "cycling to work",
    "practising guitar", "swimming", "woodworking", "meditating", "birdwatching",
    "rock climbing", "knitting", "learning to code", "pottery", "yoga",
)  # fmt: skip
THINGS = (
    "the car", "the Prius", "my laptop", "the heating", "the washing machine", "my phone",
    "the bike", "the garden fence", "the roof", "the printer", "the boiler", "the dishwasher",
    "the kitchen tap", "the router",
)  # fmt: skip
FOODS = (
    "ramen", "lasagne", "Thai green curry", "tacos", "sushi", "dal", "pancakes", "paella",
    "banana bread", "pho", "a mushroom risotto", "shakshuka", "lemon drizzle cake", "pierogi",
)  # fmt: skip
WORK = (
    "the quarterly report", "the product launch", "the client pitch", "my performance review",
    "the budget meeting", "the new hire", "the database migration", "the conference talk",
    "the grant application", "the hiring panel", "the audit", "my thesis chapter",
    "the supplier contract", "the website redesign",
)  # fmt: skip
TIMES = (
    "yesterday", "last week", "this morning", "on Saturday", "next month", "in March",
    "tomorrow", "last summer", "over the holidays", "on Friday night", "two days ago",
    "in the spring", "after Easter", "on my birthday",
)  # fmt: skip
FEELINGS = (
    "nervous", "excited", "exhausted", "relieved", "annoyed", "thrilled", "a bit anxious",
    "proud", "overwhelmed", "happy", "frustrated", "calm",
)  # fmt: skip
PETS = (
    "Biscuit", "Moomin", "our greyhound", "the cat", "the puppy", "my parrot", "the rabbit",
    "the old collie",
)  # fmt: skip
SLOTS: dict[str, Sequence[str]] = {
    "person": PEOPLE,
    "other": PEOPLE,
    "place": PLACES,
    "activity": ACTIVITIES,
    "thing": THINGS,
    "food": FOODS,
    "work": WORK,
    "time": TIMES,
    "feeling": FEELINGS,
    "pet": PETS,
}
USER_TEMPLATES = (
    "{person} recommended {place} for a weekend away {time}.",
    "I've been {activity} {time} and honestly I feel {feeling}.",
    "We finally got someone to fix {thing} {time}.",
    "I cooked {food} for {person} {time} and it went down really well.",
    "I'm {feeling} about {work}, it's due {time}.",
    "{pet} was poorly {time}, so we took her to the vet.",
    "Can you remind me to call {person} about {work} {time}?",
    "{person} is moving to {place} {time}.",
    "I want to get properly into {activity} this year.",
    "My favourite dinner is {food}, especially when {person} makes it.",
    "{thing} broke again {time}, so annoying.",
    "Do you think I should go to {place} with {person} {time}?",
    "I finished {work} {time}! {person} said it was great.",
    "We're planning a trip to {place} {time} to see {person}.",
    "I started {activity} with {other} {time}.",
    "{person} and {other} had a huge argument about {work} {time}.",
    "I'm thinking of giving up {activity}, it takes too much time.",
    "Note for later: {person} doesn't eat {food}.",
    "{pet} chewed through the cable of {thing} {time}.",
    "I booked a table for {food} near {place} {time}.",
    "What should I bring to {place} when I visit {person}?",
    "I feel {feeling} since {person} told me about {place}.",
)
REPLY_OPENINGS = (
    "That sounds {feeling}!",
    "Oh no, I'm sorry to hear that.",
    "Congratulations, that's a big step.",
    "Thanks for telling me.",
    "Good to know.",
    "I can help with that.",
)
REPLY_SENTENCES = (
    "I'll remember that {person} recommended {place}.",
    "How did {person} take the news about {work}?",
    "You could try {activity} to unwind after {work}.",
    "If you go to {place}, booking early usually helps, prices go up {time}.",
    "I've set a reminder for {time} so you don't forget to call {person}.",
    "Let me know how {work} goes, I know you were {feeling} about it.",
    "It might help to write down what {work} needs and tackle one piece at a time.",
    "A simple {food} is a good choice when {person} comes over.",
    "Regular check-ups for {pet} are worth it, especially after what happened {time}.",
    "Would you like me to draft a message to {person} about {thing}?",
    "Many people find {activity} easier with a friend, maybe {other} would join you.",
    "When {thing} fails again, note the date so the repair shop has a history.",
)
QUESTION_TEMPLATES = (
    "What did {person} recommend?",
    "When did I start {activity}?",
    "Where is {person} moving to?",
    "What did I cook for {person}?",
    "How am I feeling about {work}?",
    "What happened to {pet}?",
    "Who did I go to {place} with?",
    "What broke {time}?",
    "Which food does {person} not eat?",
    "What hobby was I thinking of giving up?",
)


def fill(rng: random.Random, template: str) -> str:
    """A template with each {slot} replaced by a random word of its list."""
    return template.format(**{k: rng.choice(v) for k, v in SLOTS.items() if f"{{{k}" in template})


def user_message(rng: random.Random) -> str:
    """One generated user message (a sentence, now and then two)."""
    text = fill(rng, rng.choice(USER_TEMPLATES))
    if rng.random() < 0.3:
        text += " " + fill(rng, rng.choice(USER_TEMPLATES))
    return text[0].upper() + text[1:]


def assistant_reply(rng: random.Random) -> str:
    """One generated assistant reply: an opening and two to five sentences (~200-700 chars)."""
    parts = [fill(rng, rng.choice(REPLY_OPENINGS))]
    parts += [fill(rng, s) for s in rng.sample(REPLY_SENTENCES, rng.randint(2, 5))]
    return " ".join(p[0].upper() + p[1:] for p in parts)


def bundled_conversations() -> tuple[list[tuple[str, str]], list[str]]:
    """The recall-eval conversations: ([(speaker, text)], [question])."""
    turns: list[tuple[str, str]] = []
    questions: list[str] = []
    folder = resources.files("memoir") / "data" / "recall_eval"
    for f in sorted(folder.iterdir(), key=lambda f: f.name):
        if not f.name.endswith(".json"):
            continue
        data = json.loads(f.read_text(encoding="utf-8"))
        conv = data["conversation"]
        sessions = sorted(
            (k for k in conv if k.startswith("session_") and k[8:].isdigit()),
            key=lambda k: int(k[8:]),
        )
        for key in sessions:
            for turn in conv[key]:
                speaker = "user" if turn["speaker"] == conv["speaker_a"] else "assistant"
                turns.append((speaker, turn["text"]))
        questions += [qa["question"] for qa in data["qa"]]
    return turns, questions


# -- shared helpers --------------------------------------------------------------------------


@dataclass
class Latency:
    """Latency and recall of one query path over the queries."""

    name: str
    p50_ms: float
    p95_ms: float
    recall: float | None = None
    rows: float | None = None  # mean rows returned
    note: str = ""


@dataclass
class Sizes:
    """On-disk sizes in bytes."""

    heap: int = 0
    toast: int = 0
    indexes: dict[str, int] = field(default_factory=dict)


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB"


def recall_at_k(found: Sequence[str], sims: dict[str, float], kth: float, k: int) -> int:
    """How many of `found` (at most k) are true top-k rows: as similar as the true k-th, ties
    included (identical texts have identical vectors, so 'the' top k is not unique)."""
    return sum(1 for rid in list(found)[:k] if sims.get(rid, -2.0) >= kth - 1e-5)


def truth_for(ids: list[str], vectors: np.ndarray, query: np.ndarray, k: int) -> tuple[dict, float]:
    """Exact cosine similarities of one user's rows to `query`, and the k-th best."""
    sims = vectors @ query
    order = np.argsort(-sims)
    kth = float(sims[order[min(k, len(ids)) - 1]])
    return {ids[i]: float(sims[i]) for i in order[: 4 * k]}, kth


async def timed(
    name: str,
    calls: Sequence[Callable[[], Awaitable[Any]]],
    check: Callable[[int, Any], tuple[int | None, int]] | None = None,
    k: int = 10,
    warmup: int = 10,
) -> Latency:
    """Run each call (after `warmup` untimed ones); p50/p95 and, with `check`, recall@k."""
    for call in calls[:warmup]:
        await call()
    times: list[float] = []
    hits = 0
    rows = 0
    counted = 0
    for i, call in enumerate(calls):
        started = time.perf_counter()
        result = await call()
        times.append(time.perf_counter() - started)
        if check is not None:
            h, r = check(i, result)
            rows += r
            if h is not None:
                hits += h
                counted += 1
    lat = Latency(
        name=name,
        p50_ms=percentile(times, 50) * 1000,
        p95_ms=percentile(times, 95) * 1000,
        recall=hits / (k * counted) if counted else None,
        rows=rows / len(calls) if check is not None else None,
    )
    recall = f", recall@{k} {lat.recall:.3f}" if lat.recall is not None else ""
    returned = f", {lat.rows:.1f} rows" if lat.rows is not None else ""
    log(f"  {name}: p50 {lat.p50_ms:.2f} ms, p95 {lat.p95_ms:.2f} ms{recall}{returned}")
    return lat


async def sizes(pool: Pool) -> Sizes:
    """Heap, TOAST and index sizes of message_records."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT pg_relation_size(c.oid) AS heap,"
            " coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast"
            " FROM pg_class c WHERE c.oid = 'message_records'::regclass"
        )
        row = await cur.fetchone()
        assert row is not None
        out = Sizes(heap=int(row["heap"]), toast=int(row["toast"]))
        cur = await conn.execute(
            "SELECT i.indexrelid::regclass::text AS name, pg_relation_size(i.indexrelid) AS size"
            " FROM pg_index i WHERE i.indrelid = 'message_records'::regclass ORDER BY 1"
        )
        out.indexes = {r["name"]: int(r["size"]) for r in await cur.fetchall()}
    return out


def print_sizes(s: Sizes) -> None:
    total = s.heap + s.toast + sum(s.indexes.values())
    print(f"  heap {mib(s.heap)}, TOAST {mib(s.toast)}, total {mib(total)}")
    for name, size in s.indexes.items():
        print(f"    {name}: {mib(size)}")


async def toasted_vectors(pool: Pool, user_id: str) -> tuple[int, int]:
    """(rows of the user whose embedding is stored out of line in TOAST, rows of the user)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(pg_column_toast_chunk_id(embedding)) AS toasted, count(*) AS n"
            " FROM message_records WHERE user_id = %s",
            (user_id,),
        )
        row = await cur.fetchone()
        assert row is not None
        return int(row["toasted"]), int(row["n"])


async def explain(pool: Pool, query: str, params: Sequence[Any], settings: str = "") -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of one query, as one string."""
    async with pool.connection() as conn, conn.transaction():
        if settings:
            await conn.execute(settings.encode())
        cur = await conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {query}", params)
        return short_plan(str(r["QUERY PLAN"]) for r in await cur.fetchall())


def short_plan(lines: Iterable[str]) -> str:
    """Plan lines as one string, vector literals elided."""
    return re.sub(r"'\[[^\]]*\]'", "'[...]'", "\n".join(lines))


async def copy_rows(url: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Binary COPY of message_records rows (COPY_COLUMNS order)."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await register_vector_async(conn)
        async with conn.cursor().copy(
            f"COPY message_records ({COPY_COLUMNS}) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(COPY_TYPES)
            for row in rows:
                await copy.write_row(row)


async def add_users(pool: Pool, user_ids: Sequence[str]) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO users (user_id, name) SELECT u, u FROM unnest(%s::text[]) AS u",
            (list(user_ids),),
        )


async def vacuum_analyze(url: str) -> float:
    started = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("VACUUM (ANALYZE) message_records")
    return time.perf_counter() - started


# -- scenario A: one user, 10 000 records ----------------------------------------------------


@dataclass
class ScenarioA:
    n: int
    embed_s: float
    cached: bool
    load_s: float
    toasted_013: tuple[int, int]
    toasted: tuple[int, int]
    sizes: Sizes
    results: list[Latency]
    plans: dict[str, str]


def scenario_a_texts(n: int, n_queries: int, seed: int) -> tuple[list[tuple[str, str]], list[str]]:
    """n (speaker, text) records and n_queries questions: the bundled ones, then generated."""
    rng = random.Random(seed)
    turns, questions = bundled_conversations()
    records = turns[:n]
    while len(records) < n:
        records.append(("user", user_message(rng)))
        if len(records) < n:
            records.append(("assistant", assistant_reply(rng)))
    questions = questions[:n_queries]
    while len(questions) < n_queries:
        questions.append(fill(rng, rng.choice(QUESTION_TEMPLATES)))
    return records, questions


def embed_cached(texts: list[str], cache_dir: str) -> tuple[np.ndarray, float, bool]:
    """all-MiniLM-L6-v2 vectors of `texts`, kept in `cache_dir` by a hash of the texts;
    returns (vectors, seconds, from the cache)."""
    from memoir.embeddings import LocalEmbedder

    embedder = LocalEmbedder(batch_size=128)
    digest = hashlib.sha256("\x00".join([str(embedder.model_path.name), *texts]).encode())
    path = Path(cache_dir) / f"minilm-{digest.hexdigest()[:16]}.npy"
    started = time.perf_counter()
    if path.exists():
        return np.load(path), time.perf_counter() - started, True
    vectors = np.array(embedder.embed(texts), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors, time.perf_counter() - started, False


# The dense query as migration 013 shipped it (every column through the CTE), for comparison.
DENSE_013 = (
    f"WITH mine AS MATERIALIZED (SELECT {_COLUMNS}, embedding <=> %s::vector AS distance"
    f" FROM message_records WHERE user_id = %s)"
    f" SELECT {_COLUMNS}, 1 - distance AS score FROM mine ORDER BY distance LIMIT %s"
)


async def run_a(args: argparse.Namespace) -> ScenarioA:
    """One user with N records: dense, lexical and both through the store, and dense as 013
    shipped it (vectors in TOAST, every column through the CTE) for comparison."""
    n, k = args.a_records, args.top_k
    records, questions = scenario_a_texts(n, args.queries, args.seed)
    log(f"A: {n:,} records of one user (the bundled recall-eval turns, the rest generated)")
    all_vectors, embed_s, cached = embed_cached([t for _, t in records] + questions, args.cache)
    vectors, qvecs = all_vectors[:n], all_vectors[n:]
    how = f"read from {args.cache}" if cached else "embedded with all-MiniLM-L6-v2"
    log(f"  {len(all_vectors):,} vectors {how} in {embed_s:.1f} s")
    user_id = "bench-user"
    ids = [f"turn-{i:06d}:{s}" for i, (s, _) in enumerate(records)]
    rows = [
        (
            ids[i],
            user_id,
            f"thread-{i // 200}",
            f"msg-{i:06d}",
            speaker,
            "Maya" if speaker == "user" else None,
            text,
            T0 + timedelta(minutes=105 * i),
            vectors[i],
        )
        for i, (speaker, text) in enumerate(records)
    ]
    truths = [truth_for(ids, vectors, q, k) for q in qvecs]
    qlists = [q.tolist() for q in qvecs]
    idx = range(len(questions))

    def dense_check(i: int, found: Any) -> tuple[int | None, int]:
        got = [f["record_id"] if isinstance(f, dict) else f.record.record_id for f in found]
        sims, kth = truths[i]
        return recall_at_k(got, sims, kth, k), len(found)

    def both_check(i: int, found: Any) -> tuple[int | None, int]:
        dense, lexical = found
        return dense_check(i, dense)[0], len(dense) + len(lexical)

    results: list[Latency] = []
    plans: dict[str, str] = {}
    async with database() as url:
        pool = await open_pool(url, min_size=4, max_size=4)
        try:
            await migrate(pool)
            await add_users(pool, [user_id])

            async def load(vector: str, tsv: str) -> tuple[float, tuple[int, int]]:
                async with pool.connection() as conn:
                    await conn.execute("TRUNCATE message_records")
                    await conn.execute(
                        f"ALTER TABLE message_records ALTER COLUMN embedding SET STORAGE {vector},"
                        f" ALTER COLUMN tsv SET STORAGE {tsv}"
                    )
                started = time.perf_counter()
                await copy_rows(url, rows)
                await vacuum_analyze(url)
                took = time.perf_counter() - started
                toasted = await toasted_vectors(pool, user_id)
                log(
                    f"  {n:,} rows copied and analysed in {took:.1f} s (storage: embedding"
                    f" {vector}, tsv {tsv}; {toasted[0]:,} of {toasted[1]:,} vectors in TOAST)"
                )
                return took, toasted

            # 1. As 013 shipped it: the types' default storage (EXTERNAL for a vector, EXTENDED
            # for a tsvector), every column through the dense CTE.
            _, toasted_013 = await load("EXTERNAL", "EXTENDED")
            store = MessageRecordStore(pool)

            async def dense_013(i: int) -> list[dict[str, Any]]:
                async with pool.connection() as conn:
                    cur = await conn.execute(DENSE_013, (vector_literal(qlists[i]), user_id, k))
                    return await cur.fetchall()

            calls = [lambda i=i: dense_013(i) for i in idx]
            results.append(await timed("dense as in 013", calls, dense_check))
            calls = [lambda i=i: store.lexical(user_id, questions[i], top_k=k) for i in idx]
            results.append(await timed("lexical with 013's storage", calls, rows_only))
            plans["dense as in 013"] = await explain(
                pool, DENSE_013, [vector_literal(qlists[0]), user_id, k]
            )

            # 2. Now: the store's query over the rows laid out as migration 015 keeps them.
            load_s, toasted = await load("PLAIN", "MAIN")
            size = await sizes(pool)

            def dense_call(i: int) -> Callable[[], Awaitable[Any]]:
                return lambda: store.dense(user_id, qlists[i], top_k=k)

            def lexical_call(i: int) -> Callable[[], Awaitable[Any]]:
                return lambda: store.lexical(user_id, questions[i], top_k=k)

            def both_call(i: int) -> Callable[[], Awaitable[Any]]:
                return lambda: asyncio.gather(
                    store.dense(user_id, qlists[i], top_k=k),
                    store.lexical(user_id, questions[i], top_k=k),
                )

            results += [
                await timed("dense", [dense_call(i) for i in idx], dense_check, k),
                await timed("lexical", [lexical_call(i) for i in idx], rows_only, k),
                await timed("dense + lexical", [both_call(i) for i in idx], both_check, k),
            ]
            plans["dense"] = await explain(
                pool, dense_sql(), [vector_literal(qlists[0]), user_id, k]
            )
        finally:
            await pool.close()
    return ScenarioA(n, embed_s, cached, load_s, toasted_013, toasted, size, results, plans)


def rows_only(i: int, found: Any) -> tuple[int | None, int]:
    """No recall to check (lexical search is exact by construction): only the rows returned."""
    return None, len(found)


# -- scenario B: many users in one table ------------------------------------------------------


@dataclass
class ScenarioB:
    users: int
    per_user: int
    mix: str
    load_s: float
    index_s: dict[str, float]
    sizes: Sizes
    results: list[Latency]
    plans: dict[str, str]
    hnsw_plan: str = ""


def b_vectors(
    args: argparse.Namespace, chunk: int, start: int, count: int, centres: np.ndarray
) -> np.ndarray:
    """Rows start..start+count: row i is user i % users' record i // users, a unit vector near
    one of that user's topics (shared: any of the global topics; personal: the user's own)."""
    rng = np.random.default_rng((args.seed, chunk))
    users = (np.arange(start, start + count) % args.users).astype(np.int64)
    topics = topic_of(args, rng, users, len(centres))
    x = centres[topics] + rng.standard_normal((count, DIM), dtype=np.float32) * args.spread
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def topic_of(
    args: argparse.Namespace, rng: np.random.Generator, users: np.ndarray, n_topics: int
) -> np.ndarray:
    """A topic per row: any shared topic, or one of the user's own `--user-topics`."""
    if args.mix == "shared":
        return rng.integers(0, n_topics, size=len(users))
    return users * args.user_topics + rng.integers(0, args.user_topics, size=len(users))


def b_centres(args: argparse.Namespace) -> np.ndarray:
    rng = np.random.default_rng((args.seed, 10**6))
    n = args.shared_topics if args.mix == "shared" else args.users * args.user_topics
    centres = rng.standard_normal((n, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return centres


async def drop_secondary_indexes(pool: Pool) -> dict[str, str]:
    """Drop message_records' indexes other than the primary key; returns their definitions."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'message_records'"
            " AND schemaname = current_schema() AND indexname <> 'message_records_pkey'"
        )
        defs = {r["indexname"]: r["indexdef"] for r in await cur.fetchall()}
        for name in defs:
            await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    return defs


async def timed_index(url: str, name: str, definition: str, total: int) -> float:
    """CREATE one index with generous memory, printing its progress and how long it took."""
    took = await create_index(url, f"  {name}", definition, total, memory="6GB", poll=15)
    log(f"  {name} built in {took:.1f} s")
    return took


async def load_b(
    args: argparse.Namespace, url: str, pool: Pool, query_users: set[int]
) -> tuple[float, dict[str, np.ndarray]]:
    """COPY users x per-user rows in batches; returns the load time and the query users'
    vectors (row order: record j of user u is row j * users + u)."""
    n = args.users * args.per_user
    rng = random.Random(args.seed)
    pool_size = 20_000
    texts = [user_message(rng) if i % 2 == 0 else assistant_reply(rng) for i in range(pool_size)]
    centres = b_centres(args)
    kept: dict[str, list[np.ndarray]] = {f"u{u:04d}": [] for u in query_users}
    batch = 50_000
    started = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await register_vector_async(conn)
        for chunk, start in enumerate(range(0, n, batch)):
            count = min(batch, n - start)
            vectors = b_vectors(args, chunk, start, count, centres)
            async with conn.cursor().copy(
                f"COPY message_records ({COPY_COLUMNS}) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(COPY_TYPES)
                for off in range(count):
                    i = start + off
                    u, j = i % args.users, i // args.users
                    user_id = f"u{u:04d}"
                    speaker = "user" if j % 2 == 0 else "assistant"
                    text = texts[2 * ((i * 7919) % (pool_size // 2)) + j % 2]  # even: user
                    await copy.write_row(
                        (
                            f"r{i:08d}",
                            user_id,
                            f"{user_id}-t{j // 200}",
                            f"m{i:08d}",
                            speaker,
                            None,
                            text,
                            T0 + timedelta(seconds=30 * i),
                            vectors[off],
                        )
                    )
                    if u in query_users:
                        kept[user_id].append(vectors[off])
            done = start + count
            elapsed = time.perf_counter() - started
            log(f"  rows copied: {done:,}/{n:,} ({elapsed:.0f} s, {done / elapsed:,.0f} rows/s)")
    return time.perf_counter() - started, {u: np.array(v) for u, v in kept.items()}


def b_queries(args: argparse.Namespace, users: list[int]) -> np.ndarray:
    """One query vector per entry of `users`, drawn like that user's rows."""
    rng = np.random.default_rng((args.seed, 2 * 10**6))
    centres = b_centres(args)
    u = np.array(users, dtype=np.int64)
    x = centres[topic_of(args, rng, u, len(centres))]
    x = x + rng.standard_normal((len(users), DIM), dtype=np.float32) * args.spread
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


HNSW_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s, true),"
    " set_config('hnsw.iterative_scan', %s, true),"
    " set_config('hnsw.max_scan_tuples', %s, true),"
    " set_config('enable_sort', 'off', true)"
)


def hnsw_dense(
    pool: Pool, ef: int, mode: str, max_scan: int
) -> Callable[[str, list[float], int], Awaitable[list[str]]]:
    """The plain `ORDER BY embedding <=> q LIMIT k` through the HNSW index (sorting disabled, so
    the planner cannot answer it from the user_id index instead), with these settings."""

    async def query(user_id: str, embedding: list[float], k: int) -> list[str]:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(HNSW_SETTINGS, (str(ef), mode, str(max_scan)))
            cur = await conn.execute(
                "SELECT record_id, 1 - (embedding <=> %s::vector) AS score FROM message_records"
                " WHERE user_id = %s ORDER BY embedding <=> %s::vector LIMIT %s",
                (vector_literal(embedding), user_id, vector_literal(embedding), k),
            )
            return [r["record_id"] for r in await cur.fetchall()]

    return query


async def run_b(args: argparse.Namespace) -> ScenarioB:
    """users x per-user rows in one table; one user's queries and many users' queries."""
    n, k = args.users * args.per_user, args.top_k
    hot = 0
    spread_users = list(range(min(args.queries, args.users)))
    log(
        f"B: {args.users:,} users x {args.per_user:,} records = {n:,} rows ({args.mix} topics);"
        f" queries: {args.queries} of user u{hot:04d}, then one each of {len(spread_users)} users"
    )
    rng = random.Random(args.seed + 1)
    questions = [fill(rng, rng.choice(QUESTION_TEMPLATES)) for _ in range(args.queries)]
    hot_q = b_queries(args, [hot] * args.queries)
    spread_q = b_queries(args, spread_users)
    hot_l, spread_l = [q.tolist() for q in hot_q], [q.tolist() for q in spread_q]
    async with database() as url:
        pool = await open_pool(url, min_size=4, max_size=4)
        try:
            await migrate(pool)
            await add_users(pool, [f"u{u:04d}" for u in range(args.users)])
            indexdefs = await drop_secondary_indexes(pool)
            load_s, kept = await load_b(args, url, pool, set(spread_users) | {hot})
            index_s: dict[str, float] = {}
            for name, definition in indexdefs.items():
                index_s[name] = await timed_index(url, name, definition, n)
            index_s["VACUUM ANALYZE"] = await vacuum_analyze(url)
            log(f"  VACUUM ANALYZE in {index_s['VACUUM ANALYZE']:.1f} s")
            store = MessageRecordStore(pool)
            ids = {
                f"u{u:04d}": [f"r{j * args.users + u:08d}" for j in range(args.per_user)]
                for u in set(spread_users) | {hot}
            }
            hot_id = f"u{hot:04d}"
            hot_truth = [truth_for(ids[hot_id], kept[hot_id], q, k) for q in hot_q]
            spread_truth = [
                truth_for(ids[f"u{u:04d}"], kept[f"u{u:04d}"], q, k)
                for u, q in zip(spread_users, spread_q, strict=True)
            ]

            def check_ids(truths: list[tuple[dict, float]]) -> Callable[..., tuple[int, int]]:
                def check(i: int, found: list[Any]) -> tuple[int, int]:
                    got = [f if isinstance(f, str) else f.record.record_id for f in found]
                    sims, kth = truths[i]
                    return recall_at_k(got, sims, kth, k), len(got)

                return check

            def workload(
                search: Callable[[str, list[float], int], Awaitable[Any]],
            ) -> list[tuple[str, list[Callable[[], Awaitable[Any]]], Any]]:
                hot_calls = [(lambda q=q: search(hot_id, q, k)) for q in hot_l]
                spread_calls = [
                    (lambda u=u, q=q: search(f"u{u:04d}", q, k))
                    for u, q in zip(spread_users, spread_l, strict=True)
                ]
                return [
                    ("one user", hot_calls, check_ids(hot_truth)),
                    (f"{len(spread_users)} users", spread_calls, check_ids(spread_truth)),
                ]

            async def exact(user_id: str, q: list[float], top_k: int) -> Any:
                return await store.dense(user_id, q, top_k=top_k)

            results: list[Latency] = []
            for who, calls, check in workload(exact):
                results.append(await timed(f"exact (store.dense), {who}", calls, check, k))

            def lexical_calls(users: list[int]) -> list[Callable[[], Awaitable[Any]]]:
                return [
                    (lambda u=u, t=t: store.lexical(f"u{u:04d}", t, top_k=k))
                    for u, t in zip(users, questions, strict=False)
                ]

            def both_calls(users: list[int], qs: np.ndarray) -> list[Callable[[], Awaitable[Any]]]:
                return [
                    (
                        lambda u=u, q=q, t=t: asyncio.gather(
                            store.dense(f"u{u:04d}", q, top_k=k),
                            store.lexical(f"u{u:04d}", t, top_k=k),
                        )
                    )
                    for u, q, t in zip(users, qs, questions, strict=False)
                ]

            results.append(await timed("lexical, one user", lexical_calls([hot] * args.queries)))
            results.append(
                await timed(f"lexical, {len(spread_users)} users", lexical_calls(spread_users))
            )
            results.append(
                await timed("dense + lexical, one user", both_calls([hot] * args.queries, hot_l))
            )
            results.append(
                await timed(
                    f"dense + lexical, {len(spread_users)} users",
                    both_calls(spread_users, spread_l),
                )
            )
            plans = {
                "exact": await explain(pool, dense_sql(), [vector_literal(hot_l[0]), hot_id, k]),
            }
            hnsw_plan = ""
            if args.hnsw:
                definition = (
                    f"CREATE INDEX {HNSW_INDEX} ON message_records"
                    " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
                )
                log(f"  {definition}")
                index_s[HNSW_INDEX] = await timed_index(url, HNSW_INDEX, definition, n)
                async with pool.connection() as conn:
                    cur = await conn.execute(
                        "EXPLAIN SELECT record_id FROM message_records WHERE user_id = %s"
                        " ORDER BY embedding <=> %s::vector LIMIT %s",
                        (hot_id, vector_literal(hot_q[0].tolist()), k),
                    )
                    hnsw_plan = short_plan(str(r["QUERY PLAN"]) for r in await cur.fetchall())
                for ef, mode, max_scan in args.hnsw_settings:
                    search = hnsw_dense(pool, ef, mode, max_scan)
                    for who, calls, check in workload(search):
                        name = f"hnsw {mode} ef={ef} max_scan={max_scan:,}, {who}"
                        results.append(await timed(name, calls, check, k))
                ef, mode, max_scan = args.hnsw_settings[-1]
                plans["hnsw"] = await explain(
                    pool,
                    "SELECT record_id FROM message_records WHERE user_id = %s"
                    " ORDER BY embedding <=> %s::vector LIMIT %s",
                    [hot_id, vector_literal(hot_q[0].tolist()), k],
                    settings=(
                        f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = {mode};"
                        f" SET LOCAL hnsw.max_scan_tuples = {max_scan}; SET LOCAL enable_sort = off"
                    ),
                )
                results.append(
                    await timed(
                        "exact with the HNSW index present, one user",
                        workload(exact)[0][1],
                        workload(exact)[0][2],
                        k,
                    )
                )
            size = await sizes(pool)
        finally:
            await pool.close()
    return ScenarioB(
        args.users, args.per_user, args.mix, load_s, index_s, size, results, plans, hnsw_plan
    )


# -- main ------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", nargs="+", choices=["a", "b"], default=["a", "b"])
    parser.add_argument("--a-records", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--per-user", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--hnsw", action="store_true", help="B: also build and time HNSW")
    parser.add_argument(
        "--hnsw-settings",
        type=lambda s: [
            (int(ef), mode, int(scan)) for ef, mode, scan in (x.split(":") for x in s.split(","))
        ],
        default=[
            (40, "off", 20_000),
            (40, "strict_order", 20_000),
            (40, "relaxed_order", 20_000),
            (100, "relaxed_order", 100_000),
        ],
        help="B with --hnsw: comma-separated ef_search:iterative_scan:max_scan_tuples",
    )
    parser.add_argument(
        "--mix",
        choices=["shared", "personal"],
        default="shared",
        help="B: shared: every user's rows near the same --shared-topics topics (a user's rows"
        " are 0.1%% of every neighbourhood, the hard case for a filtered ANN index); personal:"
        " each user's rows near --user-topics topics of their own",
    )
    parser.add_argument("--shared-topics", type=int, default=50)
    parser.add_argument("--user-topics", type=int, default=20)
    parser.add_argument(
        "--spread", type=float, default=0.06, help="B: per-dimension noise around a topic"
    )
    parser.add_argument("--settings", default="", help="SQL run before EXPLAIN (debugging)")
    parser.add_argument(
        "--cache",
        default=".memoir/bench-cache",
        help="A: where the MiniLM vectors of the generated texts are kept between runs",
    )
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


async def main(argv: list[str]) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    if "a" in args.scenario:
        a = await run_a(args)
        print()
        print(
            f"A: one user, {a.n:,} message records (all-MiniLM-L6-v2), {args.queries} queries,"
            f" top_k={args.top_k}; {os.cpu_count()} CPUs"
        )
        how = "read from the cache" if a.cached else "embedded"
        print(
            f"  vectors {how} in {a.embed_s:.1f} s; load {a.load_s:.1f} s;"
            f" vectors in TOAST: {a.toasted_013[0]:,} of {a.toasted_013[1]:,} with 013's"
            f" storage, {a.toasted[0]:,} with 015's"
        )
        print_sizes(a.sizes)
        for r in a.results:
            recall = f"  recall@{args.top_k} {r.recall:.3f}" if r.recall is not None else ""
            print(f"  {r.name:<36} p50 {r.p50_ms:6.2f} ms  p95 {r.p95_ms:6.2f} ms{recall}")
        for name, plan in a.plans.items():
            print(f"  plan of {name}:\n    " + plan.replace("\n", "\n    "))
    if "b" in args.scenario:
        b = await run_b(args)
        print()
        print(
            f"B: {b.users:,} users x {b.per_user:,} records = {b.users * b.per_user:,} rows"
            f" ({b.mix} topics, synthetic vectors), {args.queries} queries, top_k={args.top_k};"
            f" {os.cpu_count()} CPUs"
        )
        print(
            f"  load (COPY) {b.load_s:.1f} s; then "
            + ", ".join(f"{name} {s:.1f} s" for name, s in b.index_s.items())
        )
        print_sizes(b.sizes)
        for r in b.results:
            recall = f"  recall@{args.top_k} {r.recall:.3f}" if r.recall is not None else ""
            rows = f"  rows {r.rows:.1f}" if r.rows is not None else ""
            print(f"  {r.name:<58} p50 {r.p50_ms:7.2f} ms  p95 {r.p95_ms:7.2f} ms{recall}{rows}")
        if b.hnsw_plan:
            print(
                "  the planner's own choice with the HNSW index:\n    "
                + b.hnsw_plan.replace("\n", "\n    ")
            )
        for name, plan in b.plans.items():
            print(f"  plan of {name}:\n    " + plan.replace("\n", "\n    "))
    log(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))

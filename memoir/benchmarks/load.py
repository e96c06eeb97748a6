"""`memoir bench load`: many turns across many users and threads, submitted at once through the
real HTTP API, then counted in the database: every turn completes, nothing is lost or doubled,
and the API answers no 5xx.

The stack is `memoir dev`'s (embedded Postgres unless a database URL is given, the Temporal dev
server, one worker, the API over HTTP) on ports and a data folder of its own; the model is the
offline provider. Each user gets `threads / users` threads and each thread `turns / threads`
messages; every message is sent at once (`POST /v1/messages`, one client per user token). A
turn is timed from its POST to its workflow result (the Temporal client's long poll); then each
turn is read once through `GET /v1/turns/{id}`. Half the messages state a fact (a memory), half
are small talk.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from temporalio.service import RPCError, RPCStatusCode

from memoir.benchmarks.bench_stack import bench_settings
from memoir.benchmarks.measure import latency_summary
from memoir.models import TurnResult
from memoir.settings import Settings
from temporal.stack import Stack, start_stack

Say = Callable[[str], None]
WAIT_FOR_TURN = 600.0  # seconds the slowest turn may take before the run fails
QUEUED_POLL_SECONDS = 0.25  # how often a queued message's turn is looked for
FACTS = ("My favourite colour is {}.", "My sister lives in {}.", "I work as a {}.")
WORDS = ("green", "Lisbon", "nurse", "blue", "Oslo", "baker", "red", "Kyoto", "pilot")
SMALL_TALK = ("Hi there!", "Thanks, that helps.", "How are you today?")


@dataclass(frozen=True)
class LoadConfig:
    """What one run sends."""

    turns: int = 500
    users: int = 50
    threads: int = 100
    http_connections: int = 100

    def __post_init__(self) -> None:
        if min(self.turns, self.users, self.threads, self.http_connections) < 1:
            raise ValueError("turns, users, threads and connections must be >= 1")
        if self.threads < self.users or self.turns < self.threads:
            raise ValueError("expected users <= threads <= turns")


@dataclass(frozen=True)
class Message:
    """One message of the run: who sends it, on which thread, with which id."""

    user: int
    thread_id: str
    message_id: str
    text: str


@dataclass
class LoadReport:
    """What `memoir bench load` prints and writes."""

    config: dict[str, int]
    wall_seconds: float = 0.0
    turns_per_second: float = 0.0
    latency: dict[str, float] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)  # HTTP status -> count
    turn_statuses: dict[str, int] = field(default_factory=dict)  # turn status -> count
    errors: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # what the database holds

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status.startswith("5"))

    @property
    def ok(self) -> bool:
        return not self.errors and self.server_errors == 0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "server_errors": self.server_errors, "ok": self.ok}


def plan_messages(config: LoadConfig) -> list[Message]:
    """The run's messages: threads spread over users, turns over threads, round robin."""
    messages = []
    for index in range(config.turns):
        thread = index % config.threads
        user = thread % config.users
        if index % 2:
            text = SMALL_TALK[index % len(SMALL_TALK)]
        else:
            text = FACTS[(index // 2) % len(FACTS)].format(WORDS[index % len(WORDS)])
        messages.append(Message(user, f"load-{thread}", f"load-m{index}", text))
    return messages


async def run_load(
    base: Settings, config: LoadConfig, *, say: Say = print, database_url: str | None = None
) -> LoadReport:
    """Start the stack, send every message at once, wait for every turn, count what is stored."""
    async with _load_stack(base, database_url, say) as stack:
        tokens = await _users(stack, config.users)
        messages = plan_messages(config)
        report = LoadReport(config=asdict(config))
        assert stack.api_url is not None
        limits = httpx.Limits(max_connections=config.http_connections)
        async with httpx.AsyncClient(base_url=stack.api_url, limits=limits, timeout=120) as http:
            say(f"sending {len(messages)} messages from {config.users} users on {config.threads}")
            started = time.monotonic()
            results = await asyncio.gather(
                *(_turn(stack, http, tokens[m.user], m, report) for m in messages)
            )
            report.wall_seconds = round(time.monotonic() - started, 2)
            turn_ids = [turn_id for turn_id, _ in results if turn_id]
            await _read_back(http, tokens, messages, results, report)
        report.latency = latency_summary([seconds for _, seconds in results if seconds])
        report.turns_per_second = round(len(turn_ids) / max(report.wall_seconds, 1e-9), 2)
        await _count(stack, messages, turn_ids, report)
        return report


@contextlib.asynccontextmanager
async def _load_stack(base: Settings, database_url: str | None, say: Say) -> AsyncIterator[Stack]:
    """`memoir dev`'s stack (API included) in a temporary folder, on ports of its own."""
    from api.app import create_app

    folder = Path(tempfile.mkdtemp(prefix="memoir-load-"))
    settings = bench_settings(base, folder).model_copy(
        update={"task_queue": "memoir-load", "database_url": database_url}
    )
    try:
        stack = await start_stack(settings, app_factory=create_app, say=say)
        try:
            yield stack
        finally:
            await stack.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _users(stack: Stack, count: int) -> list[str]:
    """`count` new users (reminders connected); their bearer tokens."""
    tokens = []
    for index in range(count):
        _, token = await stack.stores.users.create_user(f"Load {index}")
        tokens.append(token)
    return tokens


async def _turn(
    stack: Stack, http: httpx.AsyncClient, token: str, message: Message, report: LoadReport
) -> tuple[str | None, float | None]:
    """POST the message, then wait for its turn's result; (turn id, seconds) or why not."""
    body = {"thread_id": message.thread_id, "message_id": message.message_id, "text": message.text}
    started = time.monotonic()
    try:
        response = await http.post("/v1/messages", json=body, headers=_auth(token))
    except httpx.HTTPError as error:
        report.errors.append(f"{message.message_id}: POST failed: {type(error).__name__}")
        return None, None
    _count_status(report, response)
    turn_id = response.json().get("turn_id") if response.status_code == 202 else None
    if not turn_id:
        report.errors.append(f"{message.message_id}: {response.status_code} {response.text[:200]}")
        return None, None
    try:
        await asyncio.wait_for(_result(stack, turn_id), WAIT_FOR_TURN)
    except Exception as error:  # a failed or stuck turn is a finding of the run
        report.errors.append(f"{turn_id}: {type(error).__name__}: {error}")
        return turn_id, None
    return turn_id, time.monotonic() - started


async def _result(stack: Stack, turn_id: str) -> TurnResult:
    """The turn's result; a message queued behind its thread's turn starts its own later."""
    handle = stack.client.get_workflow_handle(turn_id, result_type=TurnResult)
    while True:
        try:
            return await handle.result()
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
        await asyncio.sleep(QUEUED_POLL_SECONDS)


async def _read_back(
    http: httpx.AsyncClient,
    tokens: list[str],
    messages: list[Message],
    results: list[tuple[str | None, float | None]],
    report: LoadReport,
) -> None:
    """Read every turn once through `GET /v1/turns/{id}` (status counted, 5xx reported)."""
    statuses: Counter[str] = Counter()

    async def read(message: Message, turn_id: str) -> None:
        response = await http.get(f"/v1/turns/{turn_id}", headers=_auth(tokens[message.user]))
        _count_status(report, response)
        if response.status_code == 200:
            statuses[str(response.json().get("status"))] += 1
        else:
            report.errors.append(f"GET {turn_id}: {response.status_code}")

    await asyncio.gather(
        *(read(m, turn_id) for m, (turn_id, _) in zip(messages, results, strict=True) if turn_id)
    )
    report.turn_statuses = dict(statuses)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _count_status(report: LoadReport, response: httpx.Response) -> None:
    key = str(response.status_code)
    report.statuses[key] = report.statuses.get(key, 0) + 1


async def _count(
    stack: Stack, messages: list[Message], turn_ids: list[str], report: LoadReport
) -> None:
    """Rows per message id: one turn, one user record and one reply record, at most one memory
    citing it; anything else is an error of the run."""
    ids = [m.message_id for m in messages]
    records = await _per_message(
        stack,
        "SELECT message_id AS id, count(*) AS n FROM message_records"
        " WHERE message_id = ANY(%(ids)s) GROUP BY message_id",
        ids,
    )
    replies = await _per_message(
        stack,
        "SELECT message_id AS id, count(*) AS n FROM message_records"
        " WHERE message_id = ANY(%(ids)s) GROUP BY message_id",
        [f"{i}:reply" for i in ids],
    )
    memories = await _per_message(
        stack,
        "SELECT m AS id, count(*) AS n FROM memories, unnest(source_message_ids) AS m"
        " WHERE m = ANY(%(ids)s) AND kind = 'semantic' GROUP BY m",
        ids,
    )
    report.counts = {
        "messages": len(ids),
        "turns": len(set(turn_ids)),
        "user_records": sum(records.values()),
        "reply_records": sum(replies.values()),
        "memories": sum(memories.values()),
    }
    _expect(report, "turn", Counter(turn_ids), set(turn_ids), 1)
    _expect(report, "user record", records, set(ids), 1)
    _expect(report, "reply record", replies, {f"{i}:reply" for i in ids}, 1)
    doubled = sorted(i for i, n in memories.items() if n > 1)
    if doubled:
        report.errors.append(f"{len(doubled)} messages cited by several memories: {doubled[:5]}")


async def _per_message(stack: Stack, sql: str, ids: list[str]) -> dict[str, int]:
    async with stack.pool.connection() as conn:
        rows = await (await conn.execute(sql, {"ids": ids})).fetchall()
    return {str(row["id"]): int(row["n"]) for row in rows}


def _expect(
    report: LoadReport, what: str, found: dict[str, int] | Counter[str], ids: set[str], n: int
) -> None:
    """Every id holds exactly `n` of `what`; the others are reported."""
    wrong = sorted(i for i in ids if found.get(i, 0) != n)
    if wrong:
        report.errors.append(f"{len(wrong)} ids without exactly {n} {what}: {wrong[:5]}")


def load_markdown(report: LoadReport) -> str:
    """The report as the markdown table bench/README.md quotes."""
    c, lat = report.config, report.latency
    lines = [
        f"{c['turns']} turns, {c['users']} users, {c['threads']} threads, all sent at once",
        "",
        "| wall s | turns/s | p50 ms | p95 ms | max ms | 5xx | errors | turns | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {report.wall_seconds} | {report.turns_per_second} | {lat.get('p50_ms')} "
        f"| {lat.get('p95_ms')} | {lat.get('max_ms')} | {report.server_errors} "
        f"| {len(report.errors)} | {report.counts.get('turns')} | {report.turn_statuses} |",
        "",
        f"HTTP statuses: {report.statuses}; rows: {report.counts}",
    ]
    lines += [f"error: {e}" for e in report.errors[:20]]
    return "\n".join(lines)

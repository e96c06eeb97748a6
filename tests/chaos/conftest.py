"""Chaos bed: real processes a test may kill, stop or restart.

A Postgres of the chaos tests' own (the outage test stops it), a Temporal dev server on a SQLite
file (the restart test restarts it), an SMTP sink that can hold its DATA reply, the session's
Radicale, and workers as separate OS processes (`tests.chaos.chaos_worker`, the settings of
`memoir worker`), two at a time on one task queue. The model is the offline provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.app import API_POOL_WAIT_SECONDS, create_app
from memoir.caldav_server import CalDAVServer
from memoir.crypto import MasterKey
from memoir.db import Pool, migrate, open_pool
from memoir.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from memoir.llm.scripted import ScriptedChatModel
from memoir.mail_sink import MailSink, SinkHandler
from memoir.ports import free_port
from memoir.serving import serve_app
from memoir.settings import Settings
from memoir.stores import Stores
from temporal.client import connect, open_keyring
from temporal.devserver import DevServer, start_dev_server
from temporal.harness import Harness

REPO = Path(__file__).resolve().parents[2]
HEARTBEAT_SECONDS = 3.0  # the workers' activities' heartbeat timeout in these tests
WORKERS = 2  # worker processes kept running: one may be killed while the other carries on
WAIT = 60.0  # seconds a turn may take to finish after a kill


class HoldingHandler(SinkHandler):
    """Stores each DATA as the sink does; while `hold` is set, the next DATA is stored and its
    reply held back (the client waits for the server's answer) until the test lets it go."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.hold = threading.Event()
        self.holding = threading.Event()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        reply = await super().handle_DATA(server, session, envelope)
        if self.hold.is_set():
            self.hold.clear()
            self.holding.set()
            while self.holding.is_set():
                await asyncio.sleep(0.05)
        return reply


class HoldingSink(MailSink):
    """The mail sink with a `HoldingHandler`."""

    def __init__(self, directory: Path, port: int) -> None:
        super().__init__(directory, host="127.0.0.1", port=port)
        self.holder = HoldingHandler(directory)
        self.handler = self.holder
        self._controller.handler = self.holder


@dataclass
class Hold:
    """An armed hold point (see chaos_worker); `reached` waits for a worker to stop there."""

    point: str
    mark: Path

    async def reached(self, within: float = 90.0) -> int:
        """The pid of the worker that stopped at the point."""
        deadline = time.monotonic() + within
        while not self.mark.exists() or not self.mark.read_text():
            assert time.monotonic() < deadline, f"no worker reached {self.point} in {within}s"
            await asyncio.sleep(0.05)
        return int(self.mark.read_text())


@dataclass
class Bed:
    """What the chaos tests drive: the servers, and worker processes on one task queue."""

    folder: Path
    postgres: EmbeddedPostgres
    pool: Pool
    stores: Stores
    temporal: DevServer
    client: Client
    sink: HoldingSink
    caldav: CalDAVServer
    master_key: str
    postgres_dir: Path
    workers: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # user id -> bearer token
    postgres_down: bool = False

    @property
    def settings(self) -> Settings:
        """The settings every process shares."""
        return Settings(
            data_dir=self.folder / "data",
            database_url=self.postgres.url,
            temporal_address=self.temporal.address,
            task_queue="chaos",
            smtp_host="127.0.0.1",
            smtp_port=self.sink.port,
            caldav_url=self.caldav.url,
            llm_provider="offline",
            activity_heartbeat_seconds=HEARTBEAT_SECONDS,
            master_key=self.master_key,
        )

    def env(self) -> dict[str, str]:
        """The environment that gives a worker these settings (as `memoir worker` reads it)."""
        settings = self.settings
        return {
            **os.environ,
            "MEMOIR_DATA_DIR": str(settings.data_dir),
            "MEMOIR_DATABASE_URL": str(settings.database_url),
            "TEMPORAL_ADDRESS": settings.temporal_address,
            "MEMOIR_TASK_QUEUE": settings.task_queue,
            "MEMOIR_SMTP_HOST": settings.smtp_host,
            "MEMOIR_SMTP_PORT": str(settings.smtp_port),
            "MEMOIR_CALDAV_URL": settings.caldav_url,
            "MEMOIR_LLM_PROVIDER": settings.llm_provider,
            "MEMOIR_ACTIVITY_HEARTBEAT_SECONDS": str(settings.activity_heartbeat_seconds),
            "MEMOIR_MASTER_KEY": self.master_key,
            "MEMOIR_CHAOS_HOLD": str(self.folder / "hold.json"),
        }

    def ensure_workers(self, count: int = WORKERS) -> None:
        """Start worker processes until `count` run."""
        for pid, process in list(self.workers.items()):
            if process.poll() is not None:
                del self.workers[pid]
        while len(self.workers) < count:
            with (self.folder / f"worker-{uuid.uuid4().hex[:8]}.log").open("wb") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", "tests.chaos.chaos_worker"],
                    cwd=REPO,
                    env=self.env(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            self.workers[process.pid] = process

    def arm(self, point: str, *, release: Path | None = None) -> Hold:
        """Arm a hold point for the next worker that reaches it."""
        hold = Hold(point, self.folder / f"mark-{uuid.uuid4().hex[:8]}")
        spec = {"point": point, "mark": str(hold.mark)}
        if release is not None:
            spec["release"] = str(release)
        (self.folder / "hold.json").write_text(json.dumps(spec))
        return hold

    def disarm(self) -> None:
        (self.folder / "hold.json").unlink(missing_ok=True)

    def kill(self, pid: int) -> None:
        """SIGKILL one worker (no shutdown, no goodbye to the server); start its replacement."""
        process = self.workers.pop(pid)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        self.ensure_workers()

    def senders_to_sink(self) -> list[int]:
        """The workers with a connection open to the SMTP sink."""
        found = []
        for pid in self.workers:
            with contextlib.suppress(psutil.Error):
                connections = psutil.Process(pid).net_connections(kind="tcp")
                if any(c.raddr and c.raddr.port == self.sink.port for c in connections):
                    found.append(pid)
        return found

    def stop_workers(self) -> None:
        """Kill every worker process still running."""
        for process in self.workers.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        self.workers.clear()

    async def harness(self, capabilities: tuple[str, ...]) -> Harness:
        """A fresh user and a harness that submits as the API does."""
        user, token = await self.stores.users.create_user(
            "Chaos", timezone="Europe/Paris", capabilities=capabilities
        )
        self.tokens[user.user_id] = token
        env = WorkflowEnvironment.from_client(self.client)
        return Harness(env, self.settings, self.stores, ScriptedChatModel(), user)

    async def stop_postgres(self) -> None:
        """Stop the database (the workers and the API see connections refused)."""
        await asyncio.to_thread(self.postgres.stop)
        self.postgres_down = True

    async def start_postgres(self) -> None:
        """Start it again on the same data folder and socket, if it is stopped (a test that
        failed while it was down leaves it running for the next)."""
        if self.postgres_down:
            self.postgres = await asyncio.to_thread(start_embedded_postgres, self.postgres_dir)
            self.postgres_down = False

    async def restart_temporal(self, down_for: float = 1.0) -> None:
        """Stop the dev server and start it again on the same port and SQLite file."""
        port = int(self.temporal.address.rpartition(":")[2])
        ui_port = int(self.temporal.ui_url.rpartition(":")[2])
        self.temporal.stop()
        await asyncio.sleep(down_for)
        self.temporal = await start_dev_server(self.folder / "temporal", port=port, ui_port=ui_port)


@pytest.fixture(scope="session")
def chaos_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    """A Postgres of the chaos tests' own: the outage test stops and starts it."""
    server = start_embedded_postgres(tmp_path_factory.mktemp("chaos-pg"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
async def bed(
    tmp_path_factory: pytest.TempPathFactory,
    chaos_postgres: EmbeddedPostgres,
    caldav_server: CalDAVServer,
) -> AsyncIterator[Bed]:
    folder = tmp_path_factory.mktemp("chaos")
    temporal = await start_dev_server(folder / "temporal", port=free_port(), ui_port=free_port())
    pool = await open_pool(chaos_postgres.url, timeout=API_POOL_WAIT_SECONDS)
    sink = HoldingSink(folder / "mail", free_port()).start()
    assert isinstance(sink, HoldingSink)
    bed = None
    try:
        await migrate(pool)
        master_key = MasterKey.generate().encoded()
        base = Settings(temporal_address=temporal.address, master_key=master_key)
        client = await connect(base, open_keyring(base, pool))
        stores = Stores.from_pool(pool)
        bed = Bed(
            folder,
            chaos_postgres,
            pool,
            stores,
            temporal,
            client,
            sink,
            caldav_server,
            master_key,
            chaos_postgres.pgdata.parent,
        )
        bed.ensure_workers()
        yield bed
    finally:
        if bed is not None:
            bed.stop_workers()
            bed.temporal.stop()
            if bed.postgres is not chaos_postgres:  # started again after an outage test
                await asyncio.to_thread(bed.postgres.stop)
        else:
            temporal.stop()
        sink.stop()
        await pool.close()


@pytest.fixture(scope="session")
async def api_url(bed: Bed) -> AsyncIterator[str]:
    """The real API (uvicorn, HTTP) over the bed's stores and Temporal client."""
    app = create_app(bed.settings, client=bed.client, stores=bed.stores)
    async with serve_app(app) as url:
        yield url


@pytest.fixture
async def chaos(bed: Bed) -> AsyncIterator[Bed]:
    """The bed with its workers running; afterwards the hold is disarmed and the database
    running again (a test that failed during an outage would leave it down for the next)."""
    bed.ensure_workers()
    try:
        yield bed
    finally:
        bed.disarm()
        await bed.start_postgres()

"""Shared fixtures: one real Postgres per test session (embedded unless a URL is given), and the
real protocol peers the tools talk to: an SMTP sink and a Radicale CalDAV server."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.binaries import temporal_cli
from memoir.caldav_server import CalDAVServer, start_caldav_server
from memoir.crypto import Keyring, MasterKey
from memoir.db import Pool, migrate, open_pool
from memoir.embedded_pg import start_embedded_postgres
from memoir.mail_sink import MailSink
from memoir.pgvector_check import check_vector_operations, failures_message
from memoir.ports import free_port
from memoir.shutdown import stop_signals
from memoir.stores import Stores


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM and SIGHUP stop the run as Ctrl-C does: pytest then tears the session fixtures
    down (embedded Postgres, Radicale, Temporal servers) instead of leaving them running."""
    for signum in stop_signals():
        signal.signal(signum, signal.default_int_handler)


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """MEMOIR_TEST_DATABASE_URL if set, else an embedded Postgres in a temp dir for the session."""
    url = os.environ.get("MEMOIR_TEST_DATABASE_URL")
    if url:
        yield url
        return
    server = start_embedded_postgres(tmp_path_factory.mktemp("memoir-pg"))
    try:
        _fail_fast_if_pgvector_is_broken(server.url)
        yield server.url
    finally:
        server.stop()


def _fail_fast_if_pgvector_is_broken(url: str) -> None:
    """Every database test errors at once with the reason, instead of each one timing out on a
    server that crashes at its first vector (tests/test_pgvector_portability.py names the op)."""
    failures = [r for r in check_vector_operations(url) if not r.ok]
    if failures:
        raise RuntimeError(
            "the embedded Postgres cannot run Memoir's pgvector operations on this machine: "
            + failures_message(failures)
        )


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool shared by the session; tests isolate by creating their own user."""
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        await migrate(pool)
        yield pool
    finally:
        await pool.close()


@pytest.fixture(scope="session")
def keyring(pool: Pool) -> Keyring:
    """Payload data keys in the session's database, under a master key made for the session."""
    return Keyring(pool, MasterKey.generate())


@pytest.fixture
def stores(pool: Pool) -> Stores:
    """Every store over the session pool."""
    return Stores.from_pool(pool)


@pytest.fixture
def mail_sink(tmp_path: Path) -> Iterator[MailSink]:
    """A real aiosmtpd sink on a free port, storing into a temp folder (dedupes by Message-ID)."""
    sink = MailSink(tmp_path / "mail", host="127.0.0.1", port=free_port()).start()
    try:
        yield sink
    finally:
        sink.stop()


@pytest.fixture(scope="session")
def caldav_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CalDAVServer]:
    """A real Radicale on a free port for the session; each user gets a calendar of their own."""
    server = start_caldav_server(tmp_path_factory.mktemp("caldav"), port=free_port())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
async def bare_temporal() -> AsyncIterator[WorkflowEnvironment]:
    """A plain dev server: none of Memoir's search attributes, no data converter of its own."""
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=temporal_cli())
    try:
        yield env
    finally:
        await env.shutdown()

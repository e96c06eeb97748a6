"""SIGTERM stops as Ctrl-C does: `memoir dev` and a pytest run leave no process of theirs behind.

Both start real processes (embedded Postgres, the Temporal dev server, Radicale) on free ports in
a temp folder, send SIGTERM and look for survivors. Postgres is started by `pg_ctl` and is no
child of ours, so processes are also found by the data folder in their command line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
import pytest

from memoir.ports import free_port

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT = 120.0  # the first start loads the embedder and creates a cluster
STOP_TIMEOUT = 60.0  # the worker may take up to 15 s, each server up to 10-15 s


def _mentioning(folder: Path) -> list[psutil.Process]:
    """Running processes whose command line names `folder` (or a path inside it)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if str(folder) in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


def _tree(pid: int, folder: Path) -> list[psutil.Process]:
    """The process `pid`'s descendants and every process that names `folder`."""
    children = psutil.Process(pid).children(recursive=True)
    found = {p.pid: p for p in [*children, *_mentioning(folder)] if p.pid != pid}
    return list(found.values())


def _names(processes: list[psutil.Process]) -> str:
    """The start of each running process's command line, for assertions and their messages."""
    names = set()
    for process in processes:
        try:
            names.add(" ".join(process.cmdline()[:3]))
        except psutil.Error:
            continue  # it ended meanwhile
    return " | ".join(sorted(names))


@contextmanager
def _reaped(processes: list[psutil.Process]) -> Iterator[None]:
    """On the way out, kill whatever of `processes` still runs (a failed test leaves nothing)."""
    try:
        yield
    finally:
        for process in processes:
            if process.is_running():
                process.kill()


def _wait_until_healthy(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert process.poll() is None, f"memoir dev exited early:\n{log.read_text()}"
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {START_TIMEOUT:.0f} s:\n{log.read_text()}")


def test_memoir_dev_stops_every_process_it_started_on_sigterm(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "dev.log"
    api_port = free_port()
    env = {
        **os.environ,
        "MEMOIR_DATA_DIR": str(data),
        "MEMOIR_API_PORT": str(api_port),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "MEMOIR_TEMPORAL_UI_PORT": str(free_port()),
        "MEMOIR_SMTP_PORT": str(free_port()),
        "MEMOIR_CALDAV_URL": f"http://127.0.0.1:{free_port()}/",
    }
    env.pop("MEMOIR_DATABASE_URL", None)
    memoir = Path(sys.executable).parent / "memoir"
    with log.open("wb") as out:
        dev = subprocess.Popen([str(memoir), "dev"], cwd=tmp_path, env=env, stdout=out, stderr=out)
    started: list[psutil.Process] = []
    with _reaped(started):
        try:
            _wait_until_healthy(dev, f"http://127.0.0.1:{api_port}/healthz", log)
            started += _tree(dev.pid, data)
            names = _names(started)
            assert all(n in names for n in ("postgres", "temporal", "radicale")), names
            dev.send_signal(signal.SIGTERM)
            assert dev.wait(timeout=STOP_TIMEOUT) == 0, log.read_text()
        finally:
            if dev.poll() is None:
                started.append(psutil.Process(dev.pid))
        _gone, alive = psutil.wait_procs(started, timeout=10)
        assert alive == [], _names(alive)
        assert _mentioning(data) == []


INNER_TEST = """
import os
import time
from pathlib import Path


def test_waits_for_sigterm(database_url):
    Path(os.environ["SIGTERM_TEST_READY"]).write_text(database_url)
    time.sleep(120)
"""


def test_a_pytest_run_stopped_by_sigterm_stops_its_embedded_postgres(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    ready, base = tmp_path / "ready", tmp_path / "base"
    env = {**os.environ, "SIGTERM_TEST_READY": str(ready)}
    env.pop("MEMOIR_TEST_DATABASE_URL", None)
    plugins = ["-p", "tests.conftest", "-p", "no:cacheprovider"]  # our hook, outside our rootdir
    options = ["-o", "asyncio_default_fixture_loop_scope=session", "--basetemp", str(base)]
    command = [sys.executable, "-m", "pytest", "-q", *plugins, *options]
    command += ["--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")]
    run = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    postgres: list[psutil.Process] = []
    with _reaped(postgres):
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not ready.exists() and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert ready.exists(), run.communicate(timeout=10)[0].decode()
            postgres += _mentioning(base)
            assert "postgres" in _names(postgres)
            run.send_signal(signal.SIGTERM)
            output = run.communicate(timeout=STOP_TIMEOUT)[0].decode()
        finally:
            if run.poll() is None:
                run.kill()
        assert run.returncode == pytest.ExitCode.INTERRUPTED, output
        _gone, alive = psutil.wait_procs(postgres, timeout=10)
        assert alive == [], _names(alive)

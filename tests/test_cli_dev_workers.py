"""`memoir dev --workers 2`: the API beside two `memoir worker` processes, run for real.

One `memoir dev --workers 2` for the module (embedded Postgres, Temporal dev server, Radicale, the
mail sink on free ports in a temp folder); turns go through its API; the histories name the worker
that ran each task. The tests run in order: the last one stops it with SIGTERM.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest
from temporalio.client import Client

from memoir.ports import free_port
from tests.test_sigterm import START_TIMEOUT, STOP_TIMEOUT, _mentioning, _names, _reaped

TURN_TIMEOUT = 90.0


@dataclass
class DevRun:
    process: subprocess.Popen[bytes]
    log: Path
    data: Path
    api: str
    temporal: str
    token: str
    ran: set[str] = field(default_factory=set)  # worker identities seen in turn histories

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def workers(self) -> list[psutil.Process]:
        """The `memoir worker` processes `memoir dev` started."""
        children = psutil.Process(self.process.pid).children(recursive=True)
        return [p for p in children if p.cmdline()[-1:] == ["worker"]]


def _wait_for(run: DevRun, pattern: str, timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert run.process.poll() is None, f"memoir dev exited:\n{run.text()}"
        if found := re.search(pattern, run.text()):
            return found
        time.sleep(0.5)
    raise AssertionError(f"no {pattern!r} within {timeout:.0f} s:\n{run.text()}")


@pytest.fixture(scope="module")
def dev_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevRun]:
    folder = tmp_path_factory.mktemp("dev-workers")
    data, log = folder / "data", folder / "dev.log"
    api_port, temporal = free_port(), f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "MEMOIR_DATA_DIR": str(data),
        "MEMOIR_API_PORT": str(api_port),
        "TEMPORAL_ADDRESS": temporal,
        "MEMOIR_TEMPORAL_UI_PORT": str(free_port()),
        "MEMOIR_SMTP_PORT": str(free_port()),
        "MEMOIR_CALDAV_URL": f"http://127.0.0.1:{free_port()}/",
        "COLUMNS": "200",
    }
    for name in ("MEMOIR_DATABASE_URL", "MEMOIR_MASTER_KEY"):
        env.pop(name, None)
    memoir = Path(sys.executable).parent / "memoir"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(memoir), "dev", "--workers", "2"], cwd=folder, env=env, stdout=out, stderr=out
        )
    run = DevRun(process, log, data, f"http://127.0.0.1:{api_port}", temporal, "")
    started: list[psutil.Process] = []
    with _reaped(started):
        try:
            run.token = _wait_for(run, r"MEMOIR_TOKEN=(\S+)", START_TIMEOUT + 60).group(1)
            started += [psutil.Process(process.pid), *run.workers(), *_mentioning(data)]
            yield run
        finally:
            if process.poll() is None:
                process.kill()
            started += _mentioning(data)


def _send_turns(run: DevRun, count: int) -> list[str]:
    """`count` chat messages, each on a thread of its own; their turn ids."""
    headers = {"Authorization": f"Bearer {run.token}"}
    turns = []
    with httpx.Client(base_url=run.api, headers=headers, timeout=30) as http:
        for _ in range(count):
            body = {
                "thread_id": f"t{uuid.uuid4().hex[:10]}",
                "message_id": f"m{uuid.uuid4().hex[:10]}",
                "text": "Hello! What can you do for me?",
            }
            response = http.post("/v1/messages", json=body)
            assert response.status_code == 202, response.text
            turns.append(response.json()["turn_id"])
    return turns


def _wait_completed(run: DevRun, turn_ids: list[str]) -> None:
    headers = {"Authorization": f"Bearer {run.token}"}
    deadline = time.monotonic() + TURN_TIMEOUT
    pending = set(turn_ids)
    with httpx.Client(base_url=run.api, headers=headers, timeout=30) as http:
        while pending and time.monotonic() < deadline:
            for turn_id in sorted(pending):
                view = http.get(f"/v1/turns/{turn_id}").json()
                assert view.get("status") not in ("failed", "blocked"), view
                if view.get("status") == "completed":
                    pending.discard(turn_id)
            time.sleep(0.5)
    assert not pending, f"turns not completed in {TURN_TIMEOUT:.0f} s: {pending}\n{run.text()}"


async def _identities(run: DevRun, workflow_ids: list[str]) -> set[str]:
    """The worker identities that started the workflows' workflow and activity tasks."""
    client = await Client.connect(run.temporal)  # events only: no payload is decoded
    found: set[str] = set()
    for workflow_id in workflow_ids:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        for event in history.events:
            for attributes in (
                event.workflow_task_started_event_attributes,
                event.activity_task_started_event_attributes,
            ):
                if attributes.identity:
                    found.add(attributes.identity)
    return found


def _identity(pid: int) -> str:
    return f"{pid}@{socket.gethostname()}"


def test_dev_starts_two_worker_processes_beside_the_api(dev_run: DevRun) -> None:
    workers = dev_run.workers()
    assert len(workers) == 2, _names(workers)
    assert len({w.pid for w in workers}) == 2
    assert dev_run.process.pid not in {w.pid for w in workers}
    assert re.search(r"2 worker processes \(pids \d+, \d+\)", dev_run.text())


async def test_turns_complete_on_the_worker_processes(dev_run: DevRun) -> None:
    turn_ids = _send_turns(dev_run, 4)
    _wait_completed(dev_run, turn_ids)
    ran = await _identities(dev_run, turn_ids)
    workers = {_identity(w.pid) for w in dev_run.workers()}
    assert ran, "no task identity in the histories"
    assert ran <= workers, f"tasks ran outside the worker processes: {ran - workers}"
    dev_run.ran.update(ran)


async def test_a_killed_worker_is_reported_restarted_and_the_other_takes_the_turns(
    dev_run: DevRun,
) -> None:
    busy = {int(identity.split("@")[0]) for identity in dev_run.ran}
    victim = next(w for w in dev_run.workers() if w.pid in busy)
    victim.send_signal(signal.SIGKILL)
    pattern = rf"worker \d \(pid {victim.pid}\) exited with code -9; restarted as pid (\d+)"
    restarted = int(_wait_for(dev_run, pattern, 30).group(1))
    pids = {w.pid for w in dev_run.workers()}
    assert restarted in pids and victim.pid not in pids and len(pids) == 2, pids
    turn_ids = _send_turns(dev_run, 2)
    _wait_completed(dev_run, turn_ids)
    ran = await _identities(dev_run, turn_ids)
    workers = {_identity(w.pid) for w in dev_run.workers()}
    assert ran and ran <= workers and _identity(victim.pid) not in ran, (ran, workers)
    dev_run.ran.update(ran)
    assert len(dev_run.ran) >= 2, f"one worker process ran every task: {dev_run.ran}"


def test_sigterm_stops_the_workers_and_the_stack(dev_run: DevRun) -> None:
    workers = dev_run.workers()
    dev_run.process.send_signal(signal.SIGTERM)
    assert dev_run.process.wait(timeout=STOP_TIMEOUT) == 0, dev_run.text()
    _gone, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == [], _names(alive)
    assert _mentioning(dev_run.data) == []

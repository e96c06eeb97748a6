"""temporal.worker_processes with real processes standing in for `memoir worker`: a death is said
and restarted, quick deaths in a row are given up on, stop() ends every process."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from temporal.worker_processes import GIVE_UP_AFTER, WorkerProcesses

SLEEPER = [sys.executable, "-c", "import time; print('polling', flush=True); time.sleep(600)"]
CRASHER = [sys.executable, "-c", "import sys; print('boom', flush=True); sys.exit(3)"]


def _processes(tmp_path: Path, command: list[str], said: list[str]) -> WorkerProcesses:
    return WorkerProcesses(2, {}, tmp_path / "workers", say=said.append, command=command)


def _wait_exited(processes: WorkerProcesses) -> None:
    deadline = time.monotonic() + 20
    while processes.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes.pids() == []


def test_start_runs_one_process_per_worker_with_its_log(tmp_path: Path) -> None:
    said: list[str] = []
    processes = _processes(tmp_path, SLEEPER, said)
    processes.start()
    try:
        assert len(set(processes.pids())) == 2
        assert [slot.log.name for slot in processes.slots] == ["worker-1.log", "worker-2.log"]
        deadline = time.monotonic() + 20  # each writes its own log
        while not all("polling" in slot.log.read_text() for slot in processes.slots):
            assert time.monotonic() < deadline, [slot.log.read_text() for slot in processes.slots]
            time.sleep(0.05)
    finally:
        processes.stop()
    assert processes.pids() == [] and said == []


def test_a_killed_worker_is_said_and_restarted(tmp_path: Path) -> None:
    said: list[str] = []
    processes = _processes(tmp_path, SLEEPER, said)
    processes.start()
    try:
        first = processes.slots[0].process
        assert first is not None
        victim = first.pid
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        processes.check()
        assert len(said) == 1 and f"worker 1 (pid {victim}) exited with code -9" in said[0]
        assert "restarted as pid" in said[0]
        assert victim not in processes.pids() and len(processes.pids()) == 2
    finally:
        processes.stop()


def test_a_worker_that_keeps_dying_at_start_is_given_up_on(tmp_path: Path) -> None:
    said: list[str] = []
    processes = _processes(tmp_path, CRASHER, said)
    processes.start()
    for _ in range(GIVE_UP_AFTER):
        _wait_exited(processes)
        processes.check()
    assert processes.pids() == []
    assert all(slot.given_up for slot in processes.slots)
    given_up = [line for line in said if "not restarting it" in line]
    assert len(given_up) == 2 and "exited with code 3" in given_up[0]
    assert len(said) == 2 * GIVE_UP_AFTER  # (GIVE_UP_AFTER - 1) restarts, then the give-up
    processes.check()
    assert len(said) == 2 * GIVE_UP_AFTER  # said once, not again


def test_stop_ends_the_workers_with_sigterm(tmp_path: Path) -> None:
    processes = _processes(tmp_path, SLEEPER, [])
    processes.start()
    started = time.monotonic()
    processes.stop()
    assert time.monotonic() - started < 5  # SIGTERM ended them: no wait for the SIGKILL
    assert [slot.process.returncode for slot in processes.slots if slot.process] == [-15, -15]

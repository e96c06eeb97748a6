"""`memoir dev --workers N`: N `memoir worker` processes beside the embedded stack.

Each worker is a process of its own (`memoir worker`, log in the data folder) on the stack's
database and Temporal server. A worker that dies is said and started again; one that dies
`GIVE_UP_AFTER` times within `QUICK_DEATH` of its start each time is said and left stopped.
`stop()` sends SIGTERM to every worker (SIGKILL after `STOP_TIMEOUT`). Workers run in sessions of
their own, so a Ctrl-C in the terminal reaches `memoir dev` alone, which stops them in order.
"""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from memoir.settings import Settings

STOP_TIMEOUT = 20.0  # a worker finishes its running tasks for up to 15 s (temporal/stack.py)
QUICK_DEATH = 30.0
GIVE_UP_AFTER = 3
WATCH_INTERVAL = 0.5


def worker_command() -> list[str]:
    """`memoir worker` from this interpreter's environment."""
    script = Path(sys.executable).parent / "memoir"
    if script.exists():
        return [str(script), "worker"]
    return [sys.executable, "-m", "memoir.cli", "worker"]


def worker_environment(settings: Settings, database_url: str) -> dict[str, str]:
    """This process's environment plus what the stack decided: its database and data folder."""
    return {
        **os.environ,
        "MEMOIR_DATA_DIR": str(settings.data_dir.resolve()),
        "MEMOIR_DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_NAMESPACE": settings.temporal_namespace,
        "MEMOIR_TASK_QUEUE": settings.task_queue,
    }


def identity(pid: int) -> str:
    """The Temporal SDK's default worker identity for a process of this host."""
    return f"{pid}@{socket.gethostname()}"


@dataclass
class WorkerProcess:
    """One `memoir worker` slot: its current process, its log, its quick deaths in a row."""

    number: int
    log: Path
    process: "subprocess.Popen[bytes] | None" = None
    started_at: float = 0.0
    quick_deaths: int = 0
    given_up: bool = False


@dataclass
class WorkerProcesses:
    """N worker processes, watched; `say` tells the person running `memoir dev`."""

    count: int
    env: dict[str, str]
    log_dir: Path
    say: Callable[[str], None] = print
    command: list[str] = field(default_factory=worker_command)
    slots: list[WorkerProcess] = field(default_factory=list)

    def start(self) -> None:
        """Start every worker."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.slots = [
            WorkerProcess(n, self.log_dir / f"worker-{n}.log") for n in range(1, self.count + 1)
        ]
        for slot in self.slots:
            self._spawn(slot)

    def pids(self) -> list[int]:
        """The pids of the workers running now."""
        return [s.process.pid for s in self.slots if s.process and s.process.poll() is None]

    def _spawn(self, slot: WorkerProcess) -> None:
        with slot.log.open("ab") as log:
            slot.process = subprocess.Popen(
                self.command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        slot.started_at = time.monotonic()

    def check(self) -> None:
        """Say which workers died since the last check; start them again (or give up on one)."""
        for slot in self.slots:
            if slot.given_up or slot.process is None or slot.process.poll() is None:
                continue
            code, pid = slot.process.returncode, slot.process.pid
            quick = time.monotonic() - slot.started_at < QUICK_DEATH
            slot.quick_deaths = slot.quick_deaths + 1 if quick else 0
            if slot.quick_deaths >= GIVE_UP_AFTER:
                slot.given_up = True
                self.say(
                    f"worker {slot.number} (pid {pid}) exited with code {code}, "
                    f"{GIVE_UP_AFTER} times in a row within {QUICK_DEATH:.0f} s of its start: "
                    f"not restarting it; see {slot.log}"
                )
                continue
            self._spawn(slot)
            assert slot.process is not None
            self.say(
                f"worker {slot.number} (pid {pid}) exited with code {code}; restarted as "
                f"pid {slot.process.pid} (log: {slot.log})"
            )

    async def watch(self) -> None:
        """Check the workers until cancelled."""
        while True:
            self.check()
            await asyncio.sleep(WATCH_INTERVAL)

    async def wait_polling(self, client: Client, task_queue: str, timeout: float) -> bool:
        """Wait until every running worker polls `task_queue` (False after `timeout` s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check()
            expected = {identity(pid) for pid in self.pids()}
            if expected and expected <= await _pollers(client, task_queue):
                return True
            await asyncio.sleep(0.5)
        return False

    def stop(self) -> None:
        """SIGTERM to every worker, SIGKILL to those still running after `STOP_TIMEOUT`."""
        running = [s.process for s in self.slots if s.process and s.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _pollers(client: Client, task_queue: str) -> set[str]:
    """Identities polling `task_queue` for workflow and for activity tasks, both."""
    found: list[set[str]] = []
    for queue_type in (
        TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    ):
        request = DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=queue_type,
        )
        response = await client.workflow_service.describe_task_queue(request)
        found.append({poller.identity for poller in response.pollers})
    return found[0] & found[1]

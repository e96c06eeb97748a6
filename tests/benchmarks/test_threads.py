"""The bench's split of this process's CPU by thread: event loop, SDK core, workflows, others."""

import os
import threading
import time

from memoir.benchmarks.measure import thread_cpu_seconds, thread_group, threads_per_turn


def test_threads_are_grouped_by_what_they_run() -> None:
    assert thread_group(os.getpid(), "python") == "main"
    assert thread_group(os.getpid() + 1, "tokio-rt-worker") == "sdk_core"
    assert thread_group(os.getpid() + 1, "workflow-proces") == "workflow"
    assert thread_group(os.getpid() + 1, "python") == "other"


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_busy_thread_counts_in_its_group() -> None:
    before = thread_cpu_seconds()
    spun, done = threading.Event(), threading.Event()

    def work() -> None:
        _spin(0.3)
        spun.set()
        done.wait(10)  # alive until read: an ended thread is not listed

    worker = threading.Thread(target=work)
    worker.start()
    _spin(0.3)
    assert spun.wait(10)
    after = thread_cpu_seconds()
    done.set()
    worker.join()
    per_turn = threads_per_turn(before, after, turns=1)
    assert per_turn["main"] >= 250 and per_turn["other"] >= 250, per_turn

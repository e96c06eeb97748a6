"""Stop on SIGTERM and SIGHUP as on Ctrl-C, so every `finally` runs and every child process stops.

Python's default for SIGTERM and SIGHUP ends the process at once: no `finally`, no `atexit`, and
the processes it started (Postgres, the Temporal dev server, Radicale) keep running.
`run_until_stopped` runs a coroutine whose task is cancelled on the first of those signals,
as `asyncio.run` does for Ctrl-C; later ones are ignored while it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


def stop_signals() -> tuple[signal.Signals, ...]:
    """The signals that stop a command as Ctrl-C does (SIGHUP where the platform has it)."""
    hangup = getattr(signal, "SIGHUP", None)
    return (signal.SIGTERM,) if hangup is None else (signal.SIGTERM, hangup)


def run_until_stopped(coro: Coroutine[Any, Any, _T]) -> _T | None:
    """`asyncio.run(coro)`, but SIGTERM and SIGHUP cancel it; None when a signal stopped it.

    The handlers in place before (a test run's, say) are put back afterwards.
    """
    previous = {signum: signal.getsignal(signum) for signum in stop_signals()}
    try:
        return asyncio.run(_cancelled_by_signals(coro))
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                with contextlib.suppress(ValueError):  # not the main thread: nothing was changed
                    signal.signal(signum, handler)


async def _cancelled_by_signals(coro: Coroutine[Any, Any, _T]) -> _T | None:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[signal.Signals] = []

    def on_signal(signum: signal.Signals) -> None:
        if received:
            _log.debug("%s: already stopping", signum.name)  # e.g. re-raised by uvicorn
        else:
            task.cancel(f"stopped by {signum.name}")
        received.append(signum)

    installed = []
    for signum in stop_signals():
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, on_signal, signum)  # main thread, Unix only
            installed.append(signum)
    try:
        return await coro
    except asyncio.CancelledError:
        if not received:
            raise
        return None
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)

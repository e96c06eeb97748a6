"""`run_until_stopped`: SIGTERM and SIGHUP cancel the command as Ctrl-C does; cleanups run."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from memoir.shutdown import run_until_stopped


async def _signal_self_then_wait(signum: signal.Signals, cleaned: list[str]) -> str:
    try:
        os.kill(os.getpid(), signum)
        await asyncio.sleep(30)
        return "not stopped"
    finally:
        cleaned.append("finally ran")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_cancels_the_coroutine_and_its_cleanup_runs(signum: signal.Signals) -> None:
    cleaned: list[str] = []
    assert run_until_stopped(_signal_self_then_wait(signum, cleaned)) is None
    assert cleaned == ["finally ran"]


async def _answer() -> int:
    return 42


def test_without_a_signal_the_result_comes_back() -> None:
    assert run_until_stopped(_answer()) == 42


def test_the_handlers_in_place_before_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    run_until_stopped(_answer())
    assert signal.getsignal(signal.SIGTERM) is before

"""Workflow tests: the time-skipping server, real activities on real Postgres, a scripted LLM."""

from collections.abc import AsyncIterator

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.crypto import Keyring
from memoir.stores import Stores
from temporal.codec import encrypted_data_converter
from temporal.harness import Harness, running_harness, start_time_skipping


@pytest.fixture
async def time_env(keyring: Keyring) -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server of the test's own; its client encrypts payloads as Memoir's does.

    One per test (it starts in about 0.1 s): virtual time belongs to the whole server, so a task
    that one test leaves behind with its worker gone would stop time skipping for every test after
    it, and they would hang on their first skip instead of failing where the leftover is.
    """
    env = await start_time_skipping(encrypted_data_converter(keyring))
    yield env
    await env.shutdown()


@pytest.fixture
async def harness(time_env: WorkflowEnvironment, stores: Stores) -> AsyncIterator[Harness]:
    async with running_harness(time_env, stores) as harness:
        yield harness


@pytest.fixture
async def short_run_harness(
    time_env: WorkflowEnvironment, stores: Stores
) -> AsyncIterator[Harness]:
    """A thread that continues-as-new after every two turns."""
    async with running_harness(time_env, stores, thread_turns_per_run=2) as harness:
        yield harness


__all__ = ["Harness"]

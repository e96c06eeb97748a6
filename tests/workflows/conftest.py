"""Workflow tests: the time-skipping server, real activities on real Postgres, a scripted LLM."""

from collections.abc import AsyncIterator

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.stores import Stores
from temporal.harness import Harness, running_harness, start_time_skipping


@pytest.fixture(scope="session")
async def time_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_time_skipping()
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

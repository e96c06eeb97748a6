"""API fixtures: a real Temporal dev server for the session, the app over it and real Postgres.

No Memoir worker runs; tests that need a workflow to answer use the stubs in `support.py`, served by
the `stub_worker` fixture on the app's task queue. Postgres comes from `tests/conftest.py`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from api.app import create_app
from memoir.models import search_attributes as sa
from memoir.settings import Settings
from memoir.stores import Stores
from tests.api.support import TASK_QUEUE, ApiUser, StubThreadWorkflow, StubTurnWorkflow


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    """A Temporal dev server (the venv's `temporal` binary) with Memoir's search attributes."""
    env = await WorkflowEnvironment.start_local(
        data_converter=pydantic_data_converter,
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        search_attributes=list(sa.ALL),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
def temporal_client(temporal_env: WorkflowEnvironment) -> Client:
    """A client of the dev server with the pydantic data converter."""
    return temporal_env.client


@pytest.fixture(scope="session")
async def stub_worker(temporal_client: Client) -> AsyncIterator[Worker]:
    """Stub thread and turn workflows on the app's task queue, for the paths that need answers."""
    worker = Worker(
        temporal_client,
        task_queue=TASK_QUEUE,
        workflows=[StubThreadWorkflow, StubTurnWorkflow],
        workflow_runner=UnsandboxedWorkflowRunner(),
    )
    async with worker:
        yield worker


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Settings with the test task queue and knobs easy to recognise in a ThreadInput."""
    return Settings(
        database_url=database_url,
        task_queue=TASK_QUEUE,
        hitl_ttl_seconds=123,
        thread_idle_hours=7.5,
        max_replans=2,
    )


@pytest.fixture
def app(settings: Settings, temporal_client: Client, stores: Stores) -> FastAPI:
    """The app over the session's dev server and Postgres."""
    return create_app(settings, client=temporal_client, stores=stores)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the app in-process."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        yield client


@pytest.fixture
async def user(stores: Stores) -> ApiUser:
    """A fresh user, so tests never see each other's workflows."""
    profile, token = await stores.users.create_user("Api Tester")
    return ApiUser(profile, token)


@pytest.fixture
async def other_user(stores: Stores) -> ApiUser:
    """A second user, for the 'another user's resource answers 404' checks."""
    profile, token = await stores.users.create_user("Someone Else")
    return ApiUser(profile, token)

"""API fixtures: a real Temporal dev server for the session, the real worker, the app over both.

Every test gets a fresh harness (`temporal.harness.running_harness`): a user with the reminders
capability, the real workflows and activities on their own task queue, real Postgres from
`tests/conftest.py`, and a `ScriptedChatModel` (the only scripted part). The app uses the harness's
settings, so its turns run for real on that worker.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from memoir.crypto import Keyring
from memoir.models import search_attributes as sa
from memoir.settings import Settings
from memoir.stores import Stores
from temporal.codec import encrypted_data_converter
from temporal.devserver import dev_server_tuning
from temporal.harness import Harness
from tests.api.support import ApiUser, api_harness, api_user, collect_garbage, http_client


@pytest.fixture(scope="package", autouse=True)
def gc_between_tests() -> Iterator[None]:
    """No automatic garbage collection while the API tests run: `collect_garbage` runs it between
    tests, outside any workflow. Everything comes back, and is collected, when the package ends."""
    collect_garbage()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()
        collect_garbage()
        gc.unfreeze()


@pytest.fixture(scope="session")
async def temporal_env(keyring: Keyring) -> AsyncIterator[WorkflowEnvironment]:
    """A Temporal dev server (the venv's `temporal` binary) with Memoir's search attributes;
    its client encrypts payloads as Memoir's does (`temporal.codec`)."""
    env = await WorkflowEnvironment.start_local(
        data_converter=encrypted_data_converter(keyring),
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        search_attributes=list(sa.ALL),
        dev_server_extra_args=dev_server_tuning(sqlite_file=False),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
def temporal_client(temporal_env: WorkflowEnvironment) -> Client:
    """A client of the dev server with the pydantic data converter and the encryption codec."""
    return temporal_env.client


@pytest.fixture
async def harness(
    temporal_env: WorkflowEnvironment, stores: Stores, database_url: str, keyring: Keyring
) -> AsyncIterator[Harness]:
    """The real worker on a task queue of its own, a fresh user and the scripted model; its
    settings carry the session's master key (an app's own client encrypts as the worker's)."""
    master_key = keyring.master.encoded()
    async with api_harness(temporal_env, stores, database_url, master_key=master_key) as harness:
        yield harness


@pytest.fixture
def settings(harness: Harness) -> Settings:
    """The harness's settings: its worker's task queue, the test database, knobs easy to spot."""
    return harness.settings


@pytest.fixture
def app(settings: Settings, temporal_client: Client, stores: Stores) -> FastAPI:
    """The app over the session's dev server and Postgres."""
    return create_app(settings, client=temporal_client, stores=stores)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the app in-process."""
    async with http_client(app) as client:
        yield client


@pytest.fixture
async def user(harness: Harness, stores: Stores) -> ApiUser:
    """The harness's fresh user (reminders connected), with a token."""
    return await api_user(stores, harness.user)


@pytest.fixture
async def other_user(stores: Stores) -> ApiUser:
    """A second user (reminders connected), for 'another user's resource answers 404'."""
    profile, token = await stores.users.create_user("Someone Else", capabilities=("reminders",))
    return ApiUser(profile, token)

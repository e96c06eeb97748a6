"""GET /healthz: 200 while the database and Temporal answer, 503 naming the one that does not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from api.app import create_app
from memoir.db import open_pool
from memoir.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from memoir.ports import free_port
from memoir.settings import Settings
from memoir.stores import Stores
from tests.api.support import http_client


@pytest.fixture
async def own_postgres(tmp_path: Path) -> AsyncIterator[EmbeddedPostgres]:
    """A Postgres of this test's own, which the test may stop."""
    server = start_embedded_postgres(tmp_path)
    try:
        yield server
    finally:
        server.stop()


async def test_healthz_is_200_with_every_check_ok(http: httpx.AsyncClient) -> None:
    response = await http.get("/healthz")
    assert response.status_code == 200, response.text
    ok = {"ok": True, "error": None}
    assert response.json() == {"status": "ok", "checks": {"database": ok, "temporal": ok}}


async def test_healthz_is_503_naming_the_database_while_it_is_down(
    own_postgres: EmbeddedPostgres, temporal_client: Client
) -> None:
    pool = await open_pool(own_postgres.url, min_size=1, max_size=2)
    try:
        app = create_app(Settings(), client=temporal_client, stores=Stores.from_pool(pool))
        async with http_client(app) as http:
            before = await http.get("/healthz")
            own_postgres.stop()
            during = await http.get("/healthz")
    finally:
        await pool.close()
    assert before.status_code == 200, before.text
    assert during.status_code == 503, during.text
    body = during.json()
    assert body["status"] == "unhealthy"
    assert body["checks"]["temporal"] == {"ok": True, "error": None}
    database = body["checks"]["database"]
    assert database["ok"] is False
    assert "OperationalError" in database["error"], database


async def test_healthz_is_503_naming_temporal_when_it_is_unreachable(
    app: FastAPI, stores: Stores
) -> None:
    nowhere = await Client.connect(
        f"127.0.0.1:{free_port()}", data_converter=pydantic_data_converter, lazy=True
    )
    unreachable = create_app(app.state.settings, client=nowhere, stores=stores)
    async with http_client(unreachable) as http:
        response = await http.get("/healthz")
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["checks"]["database"] == {"ok": True, "error": None}
    assert body["checks"]["temporal"]["ok"] is False
    assert body["checks"]["temporal"]["error"]


async def test_healthz_is_503_before_the_lifespan_has_opened_anything(settings: Settings) -> None:
    async with http_client(create_app(settings)) as http:
        response = await http.get("/healthz")
    assert response.status_code == 503, response.text
    checks = response.json()["checks"]
    assert checks["database"]["error"] == "the database is not opened yet"
    assert checks["temporal"]["error"] == "Temporal is not connected yet"

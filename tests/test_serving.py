"""`serve_app`: the app over HTTP on this event loop; a taken port or a failed startup is an
exception in the caller, never a SystemExit out of the event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from memoir.ports import PortInUseError, listen
from memoir.serving import serve_app


def hello_app() -> FastAPI:
    app = FastAPI()

    @app.get("/hello")
    def hello() -> dict[str, str]:
        return {"hello": "world"}

    return app


async def test_serves_the_app_on_a_free_port() -> None:
    async with serve_app(hello_app()) as base_url, httpx.AsyncClient() as http:
        response = await http.get(f"{base_url}/hello")
    assert response.json() == {"hello": "world"}


async def test_stops_serving_when_the_block_ends() -> None:
    async with serve_app(hello_app()) as base_url:
        pass
    async with httpx.AsyncClient() as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"{base_url}/hello")


async def test_a_taken_port_raises_port_in_use() -> None:
    with listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError):
            async with serve_app(hello_app(), port=port):
                pass


async def test_a_failed_startup_raises_in_the_caller() -> None:
    @asynccontextmanager
    async def broken(_: FastAPI) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield

    with pytest.raises(RuntimeError, match="while starting"):
        async with serve_app(FastAPI(lifespan=broken), lifespan="on"):
            pass

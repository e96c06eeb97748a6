"""An ASGI app served by uvicorn in a task of the running event loop, on a socket bound first.

Binding first turns "the port is taken" into a `PortInUseError` here, instead of uvicorn's
`sys.exit` inside a task (a SystemExit that escapes the event loop and leaves the rest running).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import uvicorn

from memoir.ports import listen

STARTUP_SECONDS = 30.0


@asynccontextmanager
async def serve_app(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    sock: socket.socket | None = None,
    lifespan: Literal["auto", "on", "off"] = "auto",
) -> AsyncIterator[str]:
    """Serve `app` on host:port (0: a free one), or on `sock` when given; its base URL."""
    sock = sock or listen(host, port)
    with sock:
        config = uvicorn.Config(app, log_level="warning", lifespan=lifespan)
        server = uvicorn.Server(config)
        task = asyncio.create_task(_serve(server, sock), name="uvicorn")
        try:
            await _started(server, task)
            bound_host, bound_port = sock.getsockname()[:2]
            yield f"http://{bound_host}:{bound_port}"
        finally:
            await _stop(server, task)


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    except SystemExit as exit_:  # uvicorn's answer to a failed startup
        raise RuntimeError(f"uvicorn exited with status {exit_.code} while starting") from None


async def _started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_SECONDS
    while not server.started:
        if task.done():
            task.result()  # the app's startup failed: say why
            raise RuntimeError("uvicorn stopped before serving")
        if loop.time() > deadline:
            raise TimeoutError(f"uvicorn did not start within {STARTUP_SECONDS:.0f} s")
        await asyncio.sleep(0.02)


async def _stop(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    server.should_exit = True
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(task), timeout=10)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

"""The embedded stack behind `memoir dev` and `memoir demo`: Postgres, Temporal, worker, API.

Everything runs from pip packages and stops with the process that started it: `Stack.stop()`
(Ctrl-C, or SIGTERM / SIGHUP through `memoir.shutdown`), or a failed or cancelled start.
"""

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from temporalio.client import Client
from temporalio.worker import Worker

from memoir.caldav_server import CalDAVServer, local_address, start_caldav_server
from memoir.db import Pool, migrate, open_pool
from memoir.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from memoir.mail_sink import MailSink, mail_dir
from memoir.models import UserProfile
from memoir.ports import listen, port_open
from memoir.serving import serve_app
from memoir.settings import Settings
from memoir.stores import Stores, UserExistsError
from temporal.client import connect, open_keyring
from temporal.devserver import DevServer, start_dev_server
from temporal.worker import build_deps, build_worker

log = logging.getLogger(__name__)

DEV_USER_ID = "dev"
AppFactory = Callable[..., Any]
_P = TypeVar("_P")


@dataclass
class Stack:
    """The running stack; `stop()` stops what it started."""

    settings: Settings
    database_url: str
    pool: Pool
    client: Client
    stores: Stores
    temporal_ui: str
    api_url: str | None = None
    _started: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    async def stop(self) -> None:
        """Stop what this stack started, newest first (API, worker, ..., Postgres); idempotent."""
        await self._started.aclose()


async def start_stack(
    settings: Settings,
    *,
    app_factory: AppFactory | None = None,
    say: Callable[[str], None] = print,
    llm: BaseChatModel | None = None,
    worker: bool = True,
) -> Stack:
    """Start (or reuse) each part; `app_factory(settings=, client=, stores=)` builds the API;
    `llm` is the worker's model (default: the configured provider); `worker=False` leaves the
    worker out (`memoir dev --workers N` runs N `memoir worker` processes instead).

    A failure or a cancellation (Ctrl-C, SIGTERM) on the way stops the parts already started.
    """
    async with contextlib.AsyncExitStack() as started:
        # The API's port is taken first: the Web UI is told where its codec server will be
        # before the API starts, and nothing started meanwhile can take that port.
        api_socket = None if app_factory is None else started.enter_context(_api_socket(settings))
        database_url = settings.database_url
        if database_url is None:
            say(f"starting embedded Postgres in {settings.data_dir / 'postgres'}")
            postgres = await _start_part(
                started,
                asyncio.to_thread(start_embedded_postgres, settings.data_dir),
                EmbeddedPostgres.stop,
            )
            database_url = postgres.url
        pool = await open_pool(database_url)
        started.push_async_callback(pool.close)
        await migrate(pool)
        codec = f"{api_base_url(settings)}/codec" if app_factory is not None else None
        ui = await _start_temporal(settings, say, started, codec)
        client = await connect(settings, open_keyring(settings, pool, create_master_key=True))
        stores = Stores.configured(pool, settings)
        await _start_mail_sink(settings, say, started)
        await _start_caldav(settings, say, started)
        if worker:
            _start_worker(settings, client, stores, started, llm)
        api_url = None
        if app_factory is not None:
            app = app_factory(settings=settings, client=client, stores=stores)
            await started.enter_async_context(serve_app(app, sock=api_socket))
            api_url = api_base_url(settings)
        return Stack(settings, database_url, pool, client, stores, ui, api_url, started.pop_all())
    raise AssertionError("unreachable")  # mypy: the exit stack may swallow exceptions


async def _start_part(
    started: contextlib.AsyncExitStack, starting: Awaitable[_P], stop: Callable[[_P], object]
) -> _P:
    """Await a part's start and register its stop. A cancellation meanwhile waits for the start
    to end (a half-started process or thread cannot be abandoned), so the part is stopped too."""
    task = asyncio.ensure_future(starting)
    try:
        part = await asyncio.shield(task)
    except asyncio.CancelledError:
        started.callback(stop, await task)
        raise
    started.callback(stop, part)
    return part


def api_base_url(settings: Settings) -> str:
    """Where the stack's API listens."""
    return f"http://{settings.api_host}:{settings.api_port}"


async def _start_temporal(
    settings: Settings,
    say: Callable[[str], None],
    started: contextlib.AsyncExitStack,
    codec_endpoint: str | None = None,
) -> str:
    """The Temporal dev server, unless one already listens there; the Web UI's URL. Its Web UI
    decodes payloads through `codec_endpoint` (the API's codec server)."""
    host, _, port = settings.temporal_address.rpartition(":")
    if port_open(host or "127.0.0.1", int(port)):
        say(f"using the Temporal server already listening at {settings.temporal_address}")
        return f"http://127.0.0.1:{settings.temporal_ui_port}"
    say("starting the Temporal dev server (SQLite history in the data folder)")
    starting = start_dev_server(
        settings.data_dir,
        port=int(port),
        ui_port=settings.temporal_ui_port,
        codec_endpoint=codec_endpoint,
    )
    dev_server = await _start_part(started, starting, DevServer.stop)
    return dev_server.ui_url


def _start_worker(
    settings: Settings,
    client: Client,
    stores: Stores,
    started: contextlib.AsyncExitStack,
    llm: BaseChatModel | None = None,
) -> None:
    """The worker, polling in a task until the stack stops."""
    deps = build_deps(settings, stores, client, llm)
    worker = build_worker(client, deps, settings.task_queue, sandboxed=False)
    task = asyncio.create_task(worker.run(), name="memoir-worker")
    started.push_async_callback(_stop_worker, worker, task)


async def _stop_worker(worker: Worker, task: "asyncio.Task[None]") -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(worker.shutdown(), timeout=15)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _api_socket(settings: Settings) -> socket.socket:
    """The API's listening socket; a clear error if its port is taken."""
    return listen(settings.api_host, settings.api_port)


async def _start_mail_sink(
    settings: Settings, say: Callable[[str], None], started: contextlib.AsyncExitStack
) -> None:
    """The local SMTP sink behind `email.send`, unless something already listens there."""
    host, port = settings.smtp_host, settings.smtp_port
    if host not in ("127.0.0.1", "localhost") or port_open(host, port):
        say(f"using the SMTP server at {host}:{port}")
        return
    sink = MailSink(mail_dir(settings.data_dir), host=host, port=port)
    await _start_part(started, asyncio.to_thread(sink.start), MailSink.stop)
    say(f"mail sink listening on {host}:{port} (messages in {sink.directory}, `memoir mail`)")


async def _start_caldav(
    settings: Settings, say: Callable[[str], None], started: contextlib.AsyncExitStack
) -> None:
    """The local Radicale behind `calendar.*`, unless the URL is remote or already served."""
    address = local_address(settings.caldav_url)
    if address is None or port_open(*address):
        say(f"using the CalDAV server at {settings.caldav_url}")
        return
    host, port = address
    starting = asyncio.to_thread(start_caldav_server, settings.data_dir, port=port, host=host)
    server = await _start_part(started, starting, CalDAVServer.stop)
    say(f"Radicale CalDAV server at {server.url} (calendars in {server.folder})")


async def dev_user(stores: Stores, *, timezone: str = "UTC") -> tuple[UserProfile, str]:
    """The dev user (created on first use) and a fresh bearer token for it."""
    try:
        return await stores.users.create_user(
            "Dev",
            user_id=DEV_USER_ID,
            timezone=timezone,
            capabilities=("reminders", "email", "calendar"),
        )
    except UserExistsError:
        user = await stores.users.get_user(DEV_USER_ID)
        assert user is not None
        return user, await stores.users.issue_token(DEV_USER_ID)

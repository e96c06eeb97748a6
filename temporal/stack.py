"""The embedded stack behind `memoir dev` and `memoir demo`: Postgres, Temporal, worker, API.

Everything runs from pip packages and stops with the process that started it.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from temporalio.client import Client
from temporalio.worker import Worker

from memoir.caldav_server import CalDAVServer, local_address, start_caldav_server
from memoir.db import Pool, migrate, open_pool
from memoir.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from memoir.mail_sink import MailSink, mail_dir
from memoir.models import UserProfile
from memoir.settings import Settings
from memoir.stores import Stores, UserExistsError
from temporal.client import connect
from temporal.devserver import DevServer, port_open, start_dev_server
from temporal.worker import build_deps, build_worker

log = logging.getLogger(__name__)

DEV_USER_ID = "dev"
AppFactory = Callable[..., Any]


@dataclass
class Stack:
    settings: Settings
    database_url: str
    pool: Pool
    client: Client
    stores: Stores
    temporal_ui: str
    api_url: str | None = None
    _postgres: EmbeddedPostgres | None = None
    _dev_server: DevServer | None = None
    _worker: Worker | None = None
    _tasks: list["asyncio.Task[Any]"] = field(default_factory=list)
    _api: uvicorn.Server | None = None
    _mail_sink: MailSink | None = None
    _caldav: CalDAVServer | None = None

    async def stop(self) -> None:
        """Stop what this stack started, newest first."""
        if self._api is not None:
            self._api.should_exit = True
            api_task = next(t for t in self._tasks if t.get_name() == "memoir-api")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(api_task), timeout=10)
        if self._worker is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._worker.shutdown(), timeout=15)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.pool.close()
        if self._mail_sink is not None:
            self._mail_sink.stop()
        if self._caldav is not None:
            self._caldav.stop()
        if self._dev_server is not None:
            self._dev_server.stop()
        if self._postgres is not None:
            self._postgres.stop()


async def start_stack(
    settings: Settings, *, app_factory: AppFactory | None = None, say: Callable[[str], None] = print
) -> Stack:
    """Start (or reuse) each part; `app_factory(settings=, client=, stores=)` builds the API."""
    postgres = None
    database_url = settings.database_url
    if database_url is None:
        say(f"starting embedded Postgres in {settings.data_dir / 'postgres'}")
        postgres = await asyncio.to_thread(start_embedded_postgres, settings.data_dir)
        database_url = postgres.url
    pool = await open_pool(database_url)
    await migrate(pool)

    dev_server = None
    host, _, port = settings.temporal_address.rpartition(":")
    if port_open(host or "127.0.0.1", int(port)):
        say(f"using the Temporal server already listening at {settings.temporal_address}")
        ui = f"http://127.0.0.1:{settings.temporal_ui_port}"
    else:
        say("starting the Temporal dev server (SQLite history in the data folder)")
        dev_server = await start_dev_server(
            settings.data_dir, port=int(port), ui_port=settings.temporal_ui_port
        )
        ui = dev_server.ui_url
    client = await connect(settings)
    stores = Stores.configured(pool, settings)
    stack = Stack(settings, database_url, pool, client, stores, ui, None, postgres, dev_server)
    stack._mail_sink = await _start_mail_sink(settings, say)
    stack._caldav = await _start_caldav(settings, say)

    worker = build_worker(client, build_deps(settings, stores, client), settings.task_queue)
    stack._worker = worker
    stack._tasks.append(asyncio.create_task(worker.run(), name="memoir-worker"))

    if app_factory is not None:
        app = app_factory(settings=settings, client=client, stores=stores)
        config = uvicorn.Config(
            app, host=settings.api_host, port=settings.api_port, log_level="warning"
        )
        server = uvicorn.Server(config)
        stack._api = server
        stack._tasks.append(asyncio.create_task(server.serve(), name="memoir-api"))
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        stack.api_url = f"http://{settings.api_host}:{settings.api_port}"
    return stack


async def _start_mail_sink(settings: Settings, say: Callable[[str], None]) -> MailSink | None:
    """The local SMTP sink behind `email.send`, unless something already listens there."""
    host, port = settings.smtp_host, settings.smtp_port
    if host not in ("127.0.0.1", "localhost") or port_open(host, port):
        say(f"using the SMTP server at {host}:{port}")
        return None
    sink = MailSink(mail_dir(settings.data_dir), host=host, port=port)
    await asyncio.to_thread(sink.start)
    say(f"mail sink listening on {host}:{port} (messages in {sink.directory}, `memoir mail`)")
    return sink


async def _start_caldav(settings: Settings, say: Callable[[str], None]) -> CalDAVServer | None:
    """The local Radicale behind `calendar.*`, unless the URL is remote or already served."""
    address = local_address(settings.caldav_url)
    if address is None or port_open(*address):
        say(f"using the CalDAV server at {settings.caldav_url}")
        return None
    host, port = address
    server = await asyncio.to_thread(start_caldav_server, settings.data_dir, port=port, host=host)
    say(f"Radicale CalDAV server at {server.url} (calendars in {server.folder})")
    return server


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

"""The FastAPI application: ingest, turns, the inbox, memories, preferences and erasure."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI, Request, Response
from temporalio.client import Client

from api.errors import install_error_handlers
from api.health import health
from api.routes import audit, codec, inbox, me, memories, messages, preferences, turns
from api.schemas import Health
from memoir.db import migrate, open_pool
from memoir.logging_hygiene import install as install_log_hygiene
from memoir.settings import Settings, get_settings
from memoir.stores import Stores
from memoir.telemetry import instrument_app
from temporal.client import connect, open_keyring

# How long a request waits for a database connection before it answers 503 (database down).
API_POOL_WAIT_SECONDS = 10.0


@asynccontextmanager
async def _open_stores(settings: Settings) -> AsyncIterator[Stores]:
    """A migrated pool on `database_url`, or on an embedded Postgres under `data_dir` if unset."""
    async with AsyncExitStack() as stack:
        url = settings.database_url
        if url is None:
            from memoir.embedded_pg import start_embedded_postgres

            server = await asyncio.to_thread(start_embedded_postgres, settings.data_dir)
            stack.callback(server.stop)
            url = server.url
        pool = await open_pool(url, timeout=API_POOL_WAIT_SECONDS)
        stack.push_async_callback(pool.close)
        await migrate(pool)
        yield Stores.configured(pool, settings)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open what `create_app` was not given: the database and the Temporal client."""
    state = app.state
    async with AsyncExitStack() as stack:
        if state.stores is None:
            state.stores = await stack.enter_async_context(_open_stores(state.settings))
            stack.callback(setattr, state, "stores", None)
        if state.client is None:
            keyring = open_keyring(state.settings, state.stores.pool)
            state.client = await connect(state.settings, keyring)
            stack.callback(setattr, state, "client", None)
        yield


def create_app(
    settings: Settings | None = None,
    *,
    client: Client | None = None,
    stores: Stores | None = None,
) -> FastAPI:
    """The API; a given `client` or `stores` is used as is, the others open in the lifespan."""
    app = FastAPI(
        title="Memoir",
        summary="A durable assistant runtime: every message is a Temporal workflow turn.",
        version="0.1.0",
        lifespan=_lifespan,
    )
    app.state.settings = settings or get_settings()
    install_log_hygiene(app.state.settings.log_content)
    app.state.client = client
    app.state.stores = stores
    install_error_handlers(app)
    instrument_app(app)
    app.include_router(messages.router)
    app.include_router(turns.router)
    app.include_router(inbox.router)
    app.include_router(inbox.page_router)
    app.include_router(memories.router)
    app.include_router(preferences.router)
    app.include_router(me.router)
    app.include_router(codec.router)
    app.add_middleware(codec.CodecCORS, origins=codec.cors_origins(app.state.settings))
    app.include_router(audit.router)

    @app.get("/healthz", tags=["health"], responses={503: {"model": Health}})
    async def healthz(request: Request, response: Response) -> Health:
        """The database and Temporal answer: 200, else 503 with the failing check's error."""
        state = request.app.state
        pool = state.stores.pool if state.stores is not None else None
        result = await health(pool, state.client)
        if result.status != "ok":
            response.status_code = 503
        return result

    return app

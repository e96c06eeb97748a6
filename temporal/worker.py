"""The Memoir worker: every workflow and activity on one task queue."""

import logging

from temporalio.client import Client
from temporalio.worker import Worker

from activities import Deps, all_activities
from memoir.db import migrate, open_pool
from memoir.llm import get_chat_model
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from temporal.client import connect
from workflows import ALL_WORKFLOWS

log = logging.getLogger(__name__)


def build_deps(settings: Settings, stores: Stores) -> Deps:
    return Deps(
        settings=settings,
        stores=stores,
        llm=get_chat_model(settings),
        tools=ToolRegistry.from_stores(stores),
    )


def build_worker(client: Client, deps: Deps, task_queue: str) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=ALL_WORKFLOWS,
        activities=all_activities(deps),
        max_concurrent_activities=50,
    )


async def run_worker(settings: Settings, database_url: str) -> None:
    """Connect, migrate, and poll until cancelled (Ctrl-C)."""
    pool = await open_pool(database_url)
    try:
        await migrate(pool)
        client = await connect(settings)
        deps = build_deps(settings, Stores.from_pool(pool))
        log.info("worker polling task queue %s at %s", settings.task_queue, client.service_client)
        await build_worker(client, deps, settings.task_queue).run()
    finally:
        await pool.close()

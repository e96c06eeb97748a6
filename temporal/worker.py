"""The Memoir worker: every workflow and activity on one task queue."""

import logging
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import Interceptor, UnsandboxedWorkflowRunner, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities import Deps, all_activities
from memoir.db import migrate, open_pool
from memoir.embeddings import get_embedder
from memoir.knowledge import KnowledgeStore
from memoir.llm import get_chat_model
from memoir.models import ReminderDue, names
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.telemetry import tracing_interceptors
from memoir.tools import (
    CalendarTool,
    DraftTool,
    EmailTool,
    KnowledgeTool,
    ScheduleReminder,
    ToolRegistry,
)
from temporal.client import connect, open_keyring
from temporal.heartbeat import HeartbeatInterceptor
from workflows import ALL_WORKFLOWS

log = logging.getLogger(__name__)


def reminder_scheduler(
    client: Client, task_queue: str, heartbeat_seconds: float | None = None
) -> ScheduleReminder:
    """Start a reminder's durable timer; a retry finds it started (its id is the reminder's)."""

    async def schedule(due: ReminderDue) -> None:
        if heartbeat_seconds is not None:
            due = due.model_copy(update={"heartbeat_seconds": heartbeat_seconds})
        try:
            await client.start_workflow(
                names.REMINDER_WORKFLOW,
                due,
                id=names.reminder_workflow_id(due.reminder_id),
                task_queue=task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=f"reminder: {due.text[:80]}",
            )
        except WorkflowAlreadyStartedError:
            log.info("reminder %s already scheduled", due.reminder_id)

    return schedule


def build_deps(
    settings: Settings, stores: Stores, client: Client, llm: BaseChatModel | None = None
) -> Deps:
    """Activities' dependencies; the model defaults to the configured provider."""
    model = llm or get_chat_model(settings)
    return Deps(
        settings=settings,
        stores=stores,
        llm=model,
        tools=ToolRegistry.from_stores(
            stores,
            schedule_reminder=reminder_scheduler(
                client, settings.task_queue, settings.activity_heartbeat_seconds
            ),
            email=EmailTool(settings, stores.contacts),
            calendar=CalendarTool(
                settings.caldav_url, settings.caldav_username, settings.caldav_password
            ),
            knowledge=KnowledgeTool(KnowledgeStore(stores.pool), lambda: get_embedder(settings)),
            drafts=DraftTool(stores.interactions, model),
        ),
    )


def build_worker(
    client: Client,
    deps: Deps,
    task_queue: str,
    *,
    sandboxed: bool = True,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """The worker; `sandboxed=False` runs workflow code outside the SDK's sandbox.

    Activities heartbeat in the background (`HeartbeatInterceptor`), so a killed worker's
    activity is retried elsewhere within its heartbeat timeout; `interceptors` come after it.

    The sandbox re-creates the workflow's modules for every run and proxies what workflow code
    touches: with a turn a run, that is about 20 ms of worker CPU and 20-25 ms of latency per
    turn (docs/capacity.md). Tests and replays keep it (they catch non-deterministic calls);
    the stack and `memoir worker` run without it. Pollers and slots stay at the SDK's defaults:
    on a small machine the CPU is the limit, and more or fewer pollers changed nothing measured.
    """
    return Worker(
        client,
        task_queue=task_queue,
        workflows=ALL_WORKFLOWS,
        activities=all_activities(deps),
        max_concurrent_activities=50,
        interceptors=[HeartbeatInterceptor(), *tracing_interceptors(client), *interceptors],
        workflow_runner=SandboxedWorkflowRunner() if sandboxed else UnsandboxedWorkflowRunner(),
    )


# How long a worker's store call waits for a database connection: while the database is down,
# an attempt fails after this (and its error shows) instead of after the pool's default 30 s.
WORKER_POOL_WAIT_SECONDS = 5.0


async def run_worker(settings: Settings, database_url: str) -> None:
    """Connect, migrate, and poll until cancelled (Ctrl-C)."""
    pool = await open_pool(database_url, timeout=WORKER_POOL_WAIT_SECONDS)
    try:
        await migrate(pool)
        client = await connect(settings, open_keyring(settings, pool))
        deps = build_deps(settings, Stores.configured(pool, settings), client)
        log.info("worker polling task queue %s at %s", settings.task_queue, client.service_client)
        await build_worker(client, deps, settings.task_queue, sandboxed=False).run()
    finally:
        await pool.close()

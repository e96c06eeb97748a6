"""The stack a benchmark runs on: `memoir dev`'s embedded stack on free ports in a data folder
of its own, a user, an HTTP client of the API, the worker's model, and the CPU meter.

The worker's model answers offline (the `offline` provider, as `memoir dev` runs by default),
except for what a phase scripts: `script_email_turns` makes the next email turns' triage, plan
and reply instant (a `ScriptedChatModel` whose scripts, once used up, fall back to offline).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio.client import Client

from memoir.benchmarks.langgraph_pipeline import BenchApp, Durability, LangGraphPipeline
from memoir.benchmarks.measure import CpuMeter, postgres_process, temporal_server_process
from memoir.llm import get_chat_model
from memoir.llm.scripted import ScriptedChatModel
from memoir.models import Classification, Plan, TriageDecision
from memoir.ports import free_port
from memoir.settings import Settings
from memoir.stores import Stores
from temporal.stack import Stack, start_stack
from temporal.worker import build_deps

BENCH_TASK_QUEUE = "memoir-bench"
EMAIL_REPLY = "Thanks for your note, I'll get back to you on Friday."
EMAIL_PLAN = Plan(
    intent="reply to the email", intent_type="conversation", confidence=0.95, steps=[]
)
EMAIL_TRIAGE = TriageDecision(
    reasoning="benchmark: a scripted answer", classification=Classification.RESPOND
)


def bench_settings(base: Settings, data_dir: Path) -> Settings:
    """`base` with the data folder and every port of its own, so nothing running is reused."""
    return base.model_copy(
        update={
            "data_dir": data_dir,
            "temporal_address": f"127.0.0.1:{free_port()}",
            "temporal_ui_port": free_port(),
            "api_host": "127.0.0.1",
            "api_port": free_port(),
            "smtp_host": "127.0.0.1",
            "smtp_port": free_port(),
            "caldav_url": f"http://127.0.0.1:{free_port()}/",
            "task_queue": BENCH_TASK_QUEUE,
            "llm_provider": "offline",
        }
    )


def bench_model(settings: Settings) -> ScriptedChatModel:
    """Offline answers, and scripted ones where a phase asks for them."""
    return ScriptedChatModel(fallback=get_chat_model(settings))


def script_email_turns(llm: ScriptedChatModel, turns: int) -> None:
    """Make the next `turns` email turns' triage (respond), plan (no steps) and reply instant.

    Tops the scripts up to `turns` answers each, so what an earlier phase left is counted."""
    llm.script("TriageDecision", *[EMAIL_TRIAGE] * max(0, turns - llm.remaining("TriageDecision")))
    llm.script("Plan", *[EMAIL_PLAN] * max(0, turns - llm.remaining("Plan")))
    llm.reply(*[EMAIL_REPLY] * max(0, turns - llm.remaining(None)))


@dataclass
class BenchStack:
    """What a benchmark drives: the running stack, its user and the instruments."""

    stack: Stack
    llm: ScriptedChatModel
    user_id: str
    token: str
    http: httpx.AsyncClient
    meter: CpuMeter
    langgraph: LangGraphPipeline | None

    @property
    def client(self) -> Client:
        return self.stack.client

    @property
    def stores(self) -> Stores:
        return self.stack.stores


@asynccontextmanager
async def bench_stack(
    base: Settings,
    *,
    data_dir: Path | None = None,
    say: Callable[[str], None] = print,
    with_langgraph: bool = True,
    durability: Durability = "sync",
) -> AsyncIterator[BenchStack]:
    """Start the stack (in a temporary data folder unless `data_dir`), a user with reminders,
    email and calendar connected, the LangGraph pipeline over the same Postgres; stop it all."""
    folder = data_dir or Path(tempfile.mkdtemp(prefix="memoir-bench-"))
    settings = bench_settings(base, folder)
    llm = bench_model(settings)
    app = BenchApp()
    async with contextlib.AsyncExitStack() as started:
        if data_dir is None:
            started.callback(shutil.rmtree, folder, True)
        stack = await start_stack(settings, app_factory=app, say=say, llm=llm)
        started.push_async_callback(stack.stop)
        assert stack.api_url is not None
        profile, token = await stack.stores.users.create_user(
            "Bench", capabilities=("reminders", "email", "calendar")
        )
        pipeline = None
        if with_langgraph:
            deps = build_deps(settings, stack.stores, stack.client, llm)
            pipeline = await LangGraphPipeline.open(deps, stack.database_url, durability=durability)
            started.push_async_callback(pipeline.close)
            app.attach(pipeline)
        http = await started.enter_async_context(
            httpx.AsyncClient(
                base_url=stack.api_url,
                headers={"Authorization": f"Bearer {token}"},
                timeout=httpx.Timeout(60.0),
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
            )
        )
        meter = CpuMeter(temporal_server_process(), await postgres_process(stack.pool))
        if meter.server is None:
            say("note: the Temporal server is not this run's own: its CPU is not measured")
        yield BenchStack(stack, llm, profile.user_id, token, http, meter, pipeline)

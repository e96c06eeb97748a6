"""Telemetry fixtures: the process's providers set up once with an in-memory span exporter and
metric reader (plus the local JSON-lines exporter), the API over a client with the tracing
interceptor, and the real worker of `tests.api` (its dev server and harness fixtures)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.telemetry import MemoirTracingInterceptor, Providers, apply_settings, configure
from memoir.telemetry.local import JsonLinesSpanExporter, spans_file
from tests.api.conftest import (  # noqa: F401
    gc_between_tests,
    harness,
    settings,
    temporal_env,
    user,
)
from tests.api.support import http_client


@dataclass
class Telemetry:
    """What the process's providers export to: memory, a JSON-lines file, a metric reader."""

    providers: Providers
    memory: InMemorySpanExporter
    data_dir: Path
    metrics: InMemoryMetricReader

    def spans(self) -> tuple[ReadableSpan, ...]:
        self.providers.tracer.force_flush()
        return self.memory.get_finished_spans()


@pytest.fixture(scope="package")
def telemetry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Telemetry]:
    """The global providers (set once per process), exporting to memory and to a data folder."""
    data_dir = tmp_path_factory.mktemp("otel-data")
    reader = InMemoryMetricReader()
    providers = configure(
        Settings(otel_local_spans=False), "memoir-test", exporters=[], readers=[reader]
    )
    memory = InMemorySpanExporter()
    providers.tracer.add_span_processor(SimpleSpanProcessor(memory))
    providers.tracer.add_span_processor(
        SimpleSpanProcessor(JsonLinesSpanExporter(spans_file(data_dir)))
    )
    try:
        yield Telemetry(providers, memory, data_dir, reader)
    finally:
        memory.clear()
        memory.shutdown()  # later packages' spans are dropped, not kept in memory
        apply_settings(Settings())


@pytest.fixture
def spans(telemetry: Telemetry) -> Iterator[Telemetry]:
    """The telemetry, emptied of earlier tests' spans, content capture as the default says."""
    telemetry.memory.clear()
    apply_settings(Settings())
    yield telemetry
    apply_settings(Settings())


@pytest.fixture
def traced_client(temporal_env: WorkflowEnvironment) -> Client:  # noqa: F811
    """A client of the session's dev server with the tracing interceptor, as `connect` makes."""
    config = temporal_env.client.config()
    config["interceptors"] = [MemoirTracingInterceptor()]
    return Client(**config)


@pytest.fixture
def app(settings: Settings, traced_client: Client, stores: Stores) -> FastAPI:  # noqa: F811
    """The instrumented app over the traced client and the session's Postgres."""
    return create_app(settings, client=traced_client, stores=stores)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app) as client:
        yield client

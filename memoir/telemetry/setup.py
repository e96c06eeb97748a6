"""Tracer and meter providers, set up once per process (`configure`), from `Settings`.

Spans go to OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and to the data folder's
JSON lines (`memoir trace`) unless `MEMOIR_OTEL_LOCAL_SPANS=false`; metrics likewise (OTLP, or
`traces/metrics.jsonl` every minute). Nothing connects anywhere when the endpoint is unset.
psycopg queries are traced only inside a trace (a pool's background queries start none).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SynchronousMultiSpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased

from memoir.settings import Settings
from memoir.telemetry.local import JsonLinesSpanExporter, spans_file
from memoir.telemetry.options import apply_settings

METRICS_EVERY_MS = 60_000


@dataclass
class Providers:
    """What `build_providers` made: the tracer provider, the one for psycopg (no root spans),
    the meter provider, and the exporters (tests look at them)."""

    tracer: TracerProvider
    db_tracer: TracerProvider
    meter: MeterProvider
    span_exporters: list[SpanExporter] = field(default_factory=list)

    def shutdown(self) -> None:
        """Flush and stop every exporter."""
        self.tracer.shutdown()
        self.meter.shutdown()


def otlp_url(endpoint: str, signal: str) -> str:
    """The OTLP/HTTP URL of a signal under a base endpoint (as the SDK's env handling does)."""
    return endpoint.rstrip("/") + f"/v1/{signal}"


def span_exporters(settings: Settings) -> list[SpanExporter]:
    """OTLP when an endpoint is set (imported only then), the local file unless turned off."""
    exporters: list[SpanExporter] = []
    if settings.otel_exporter_otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporters.append(
            OTLPSpanExporter(endpoint=otlp_url(settings.otel_exporter_otlp_endpoint, "traces"))
        )
    if settings.otel_local_spans:
        exporters.append(JsonLinesSpanExporter(spans_file(settings.data_dir)))
    return exporters


def metric_readers(settings: Settings) -> list[MetricReader]:
    """A periodic reader to OTLP when an endpoint is set, else to the local metrics file."""
    exporter: MetricExporter | None = None
    if settings.otel_exporter_otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter(
            endpoint=otlp_url(settings.otel_exporter_otlp_endpoint, "metrics")
        )
    elif settings.otel_local_spans:
        exporter = JsonLinesMetricExporter(spans_file(settings.data_dir).with_name("metrics.jsonl"))
    if exporter is None:
        return []
    return [PeriodicExportingMetricReader(exporter, export_interval_millis=METRICS_EVERY_MS)]


def build_providers(
    settings: Settings,
    service: str,
    *,
    exporters: Sequence[SpanExporter] | None = None,
    readers: Sequence[MetricReader] | None = None,
) -> Providers:
    """Providers for `service` (OTEL_SERVICE_NAME overrides); exporters/readers from settings."""
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service)})
    chosen = list(span_exporters(settings) if exporters is None else exporters)
    processors = SynchronousMultiSpanProcessor()
    for exporter in chosen:
        processors.add_span_processor(BatchSpanProcessor(exporter))
    tracer = TracerProvider(resource=resource, active_span_processor=processors)
    db_tracer = TracerProvider(
        resource=resource, sampler=ParentBased(ALWAYS_OFF), active_span_processor=processors
    )
    meter = MeterProvider(
        resource=resource,
        metric_readers=list(metric_readers(settings) if readers is None else readers),
    )
    return Providers(tracer, db_tracer, meter, chosen)


_configured: Providers | None = None
_lock = threading.Lock()


def configure(
    settings: Settings,
    service: str,
    *,
    exporters: Sequence[SpanExporter] | None = None,
    readers: Sequence[MetricReader] | None = None,
) -> Providers:
    """Set the global providers and the psycopg instrumentation, once per process."""
    global _configured
    with _lock:
        apply_settings(settings)
        if _configured is not None:
            return _configured
        providers = build_providers(settings, service, exporters=exporters, readers=readers)
        trace.set_tracer_provider(providers.tracer)
        metrics.set_meter_provider(providers.meter)
        _instrument_psycopg(providers.db_tracer)
        _configured = providers
        return providers


def shutdown() -> None:
    """Flush what is buffered (at process exit)."""
    if _configured is not None:
        with contextlib.suppress(Exception):
            _configured.shutdown()


def _instrument_psycopg(tracer_provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    instrumentor = PsycopgInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument(tracer_provider=tracer_provider, skip_dep_check=True)


class JsonLinesMetricExporter(MetricExporter):
    """Appends each collection of metrics as one JSON line; never connects anywhere."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(metrics_data.to_json(indent=None) + "\n")
        except OSError:
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        """Nothing to release."""

"""OpenTelemetry for Memoir: traces from the API through the workflows to the reply, metrics.

- `configure(settings, service)`: the global tracer and meter providers (OTLP when
  `OTEL_EXPORTER_OTLP_ENDPOINT` is set, the data folder's JSON lines otherwise) and psycopg;
- `instrument_app(app)`: FastAPI server spans; `MemoirTracingInterceptor` on Temporal clients
  and workers (`tracing_interceptors`);
- `llm_span`, `tool_call`, `memory_decision`: spans (and counters) of model calls, executed
  steps and memory decisions; `render_turn_trace` prints a turn's span tree (`memoir trace`).
"""

from memoir.telemetry.fastapi import instrument_app
from memoir.telemetry.genai import llm_span
from memoir.telemetry.options import apply_settings
from memoir.telemetry.setup import Providers, build_providers, configure, shutdown
from memoir.telemetry.spans import memory_decision, tool_call
from memoir.telemetry.temporal import MemoirTracingInterceptor, tracing_interceptors

__all__ = [
    "MemoirTracingInterceptor",
    "Providers",
    "apply_settings",
    "build_providers",
    "configure",
    "instrument_app",
    "llm_span",
    "memory_decision",
    "shutdown",
    "tool_call",
    "tracing_interceptors",
]

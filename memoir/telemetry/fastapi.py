"""FastAPI server spans (one per request, the root of a turn's trace)."""

from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

# Liveness probes and the inbox page's assets start no trace.
EXCLUDED_URLS = "healthz,/static"


def instrument_app(app: FastAPI) -> None:
    """Trace every request of `app` on the global tracer provider (no-op until configured)."""
    FastAPIInstrumentor.instrument_app(
        app, excluded_urls=EXCLUDED_URLS, exclude_spans=["receive", "send"]
    )

"""Where spans go: nowhere on the network unless OTEL_EXPORTER_OTLP_ENDPOINT is set (then to
that OTLP/HTTP endpoint), and to the data folder's JSON lines that `memoir trace` reads."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.context import Context

from memoir.settings import Settings
from memoir.telemetry import build_providers
from memoir.telemetry.local import read_spans, spans_file


def emit(settings: Settings) -> None:
    """Build the providers of `settings`, end one span under another and flush and stop all."""
    providers = build_providers(settings, "memoir-test")
    tracer = providers.tracer.get_tracer("test")
    with (
        tracer.start_as_current_span("parent", context=Context()),
        tracer.start_as_current_span("child", attributes={"memoir.turn_id": "turn:x"}),
    ):
        pass
    providers.meter.get_meter("test").create_counter("c").add(1)
    providers.shutdown()


def test_no_exporter_connects_when_no_endpoint_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connects: list[Any] = []
    real_connect = socket.socket.connect

    def record(self: socket.socket, address: Any) -> None:
        connects.append(address)
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", record)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    emit(Settings(data_dir=tmp_path))
    assert connects == []
    assert [s.name for s in read_spans(spans_file(tmp_path))] == ["child", "parent"]


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, int]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Collector.received.append((self.path, len(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def collector() -> Iterator[str]:
    """A local HTTP server standing for an OTLP collector; its base URL."""
    _Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_spans_and_metrics_go_to_the_otlp_endpoint_when_set(tmp_path: Path, collector: str) -> None:
    emit(Settings(data_dir=tmp_path, otel_exporter_otlp_endpoint=collector, otel_local_spans=False))
    paths = [path for path, size in _Collector.received if size > 0]
    assert "/v1/traces" in paths and "/v1/metrics" in paths
    assert not spans_file(tmp_path).exists()

"""Spans for people without a collector: finished spans as JSON lines in the data folder.

Every process (API, workers) appends whole lines to `DATA_DIR/traces/spans.jsonl` (one `write`
per batch on an append-only descriptor); past `MAX_BYTES` the file moves to `spans.1.jsonl`.
`memoir trace TURN_ID` reads both back (`read_spans`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from pydantic import BaseModel, Field

MAX_BYTES = 64 * 1024 * 1024


def spans_file(data_dir: Path) -> Path:
    """Where the local exporter of a data folder writes."""
    return data_dir / "traces" / "spans.jsonl"


class SpanLink(BaseModel):
    trace_id: str
    span_id: str


class SpanRecord(BaseModel):
    """One finished span as the local exporter writes it (ids in hex, times in ns since epoch)."""

    trace_id: str
    span_id: str
    parent_id: str | None = None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    status_message: str | None = None
    service: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    links: list[SpanLink] = Field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def to_record(span: ReadableSpan) -> SpanRecord:
    """The record of a finished SDK span."""
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    service = span.resource.attributes.get("service.name") if span.resource else None
    return SpanRecord(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        name=span.name,
        kind=span.kind.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or span.start_time or 0,
        status=span.status.status_code.name,
        status_message=span.status.description,
        service=str(service) if service is not None else None,
        attributes={k: _plain(v) for k, v in (span.attributes or {}).items()},
        links=[
            SpanLink(
                trace_id=f"{link.context.trace_id:032x}", span_id=f"{link.context.span_id:016x}"
            )
            for link in span.links
        ],
    )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


class JsonLinesSpanExporter(SpanExporter):
    """Appends finished spans to a JSON-lines file; never connects anywhere."""

    def __init__(self, path: Path, *, max_bytes: int = MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write the batch as lines in one append; a failure is reported, not raised."""
        data = "".join(to_record(s).model_dump_json(exclude_defaults=True) + "\n" for s in spans)
        try:
            with self._lock:
                self._rotate_if_full()
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, data.encode())
                finally:
                    os.close(fd)
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _rotate_if_full(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            full = self.path.stat().st_size >= self.max_bytes
        except FileNotFoundError:
            return
        if full:
            os.replace(self.path, _older(self.path))

    def shutdown(self) -> None:
        """Nothing to release: every export opens and closes the file."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _older(path: Path) -> Path:
    return path.with_name(path.stem + ".1" + path.suffix)


def read_spans(path: Path) -> Iterator[SpanRecord]:
    """Every span in the file and its rotated predecessor, oldest file first; bad lines skipped."""
    for file in (_older(path), path):
        if not file.exists():
            continue
        with file.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    yield SpanRecord.model_validate(json.loads(line))
                except ValueError:
                    continue

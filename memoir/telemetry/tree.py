"""A turn's traces as indented span trees, from the local exporter's file (`memoir trace`).

The turn's own trace (from its `POST /v1/messages`) comes first; then every other trace that
touched the turn (an answer posted to the inbox, a chat answer routed through the thread), each
linked to the turn by the spans it sent there. Workflow spans are instants (`·`); the others
show their duration; key attributes follow the name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from memoir.telemetry.local import SpanRecord

TURN_KEYS = ("temporalWorkflowID", "memoir.turn_id")
# Attributes worth a glance, in the order shown.
KEY_ATTRIBUTES = (
    "http.route",
    "http.response.status_code",
    "http.status_code",
    "gen_ai.request.model",
    "memoir.llm.task",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "memoir.tool.success",
    "memoir.memory.action",
    "memoir.memory.candidates",
    "memoir.hitl.kind",
    "outcome",
    "memoir.turn.status",
    "db.statement",
    "db.query.text",
)
MAX_VALUE = 60


@dataclass
class Node:
    span: SpanRecord
    children: list[Node] = field(default_factory=list)


def turn_trace_ids(spans: Iterable[SpanRecord], turn_id: str) -> list[str]:
    """Traces with a span of the turn, the one that started first first."""
    first: dict[str, int] = {}
    for span in spans:
        if any(span.attributes.get(key) == turn_id for key in TURN_KEYS):
            start = first.get(span.trace_id)
            first[span.trace_id] = span.start_ns if start is None else min(start, span.start_ns)
    return sorted(first, key=lambda trace_id: first[trace_id])


def build_trees(spans: list[SpanRecord]) -> list[Node]:
    """Roots (spans whose parent is not here), each with its children in start order."""
    nodes = {span.span_id: Node(span) for span in spans}
    roots: list[Node] = []
    for node in nodes.values():
        parent = nodes.get(node.span.parent_id or "")
        (parent.children if parent is not None else roots).append(node)
    for node in nodes.values():
        node.children.sort(key=_order)
    return sorted(roots, key=_order)


def _order(node: Node) -> tuple[int, int]:
    return node.span.start_ns, -node.span.end_ns


def render_turn_trace(spans: Iterable[SpanRecord], turn_id: str, *, sql: bool = True) -> list[str]:
    """The lines `memoir trace TURN_ID` prints: a header per trace, then its indented tree;
    without `sql`, no database spans. A pool's connection checks (no statement) never show."""
    everything = [span for span in spans if _shown(span, sql)]
    trace_ids = turn_trace_ids(everything, turn_id)
    by_trace: dict[str, list[SpanRecord]] = defaultdict(list)
    for span in everything:
        if span.trace_id in trace_ids:
            by_trace[span.trace_id].append(span)
    lines: list[str] = []
    for number, trace_id in enumerate(trace_ids):
        members = _unique(by_trace[trace_id])
        title = "turn trace" if number == 0 else "related trace"
        lines.append(f"{title} {trace_id} ({len(members)} spans)")
        roots = build_trees(members)
        origin = roots[0].span.start_ns
        for root in roots:
            lines.extend(_render(root, origin, depth=1))
        lines.append("")
    return lines[:-1] if lines else lines


def _shown(span: SpanRecord, sql: bool) -> bool:
    if "db.system" not in span.attributes and "db.system.name" not in span.attributes:
        return True
    statement = span.attributes.get("db.statement") or span.attributes.get("db.query.text")
    return sql and bool(statement)


def _unique(spans: list[SpanRecord]) -> list[SpanRecord]:
    """One record per span id (a file may hold a span twice after a retried export)."""
    return list({span.span_id: span for span in spans}.values())


def _render(node: Node, origin: int, depth: int) -> list[str]:
    span = node.span
    offset = (span.start_ns - origin) / 1e6
    took = "·" if span.end_ns == span.start_ns else _duration(span.duration_ms)
    error = "  ERROR" if span.status == "ERROR" else ""
    line = f"{'  ' * depth}{span.name}  [{took}, +{offset:.0f} ms]{_keys(span)}{error}"
    lines = [line]
    for child in node.children:
        lines.extend(_render(child, origin, depth + 1))
    return lines


def _duration(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


def _keys(span: SpanRecord) -> str:
    shown = []
    for key in KEY_ATTRIBUTES:
        if key in span.attributes:
            value = " ".join(str(span.attributes[key]).split())
            if len(value) > MAX_VALUE:
                value = value[: MAX_VALUE - 1] + "…"
            shown.append(f"{key.rsplit('.', 1)[-1]}={value}")
    return "  " + " ".join(shown) if shown else ""

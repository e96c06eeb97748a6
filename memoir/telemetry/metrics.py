"""Memoir's metric instruments, on the global meter (real once `configure` set the provider)."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry import metrics
from opentelemetry.metrics import Counter, Histogram

from memoir.telemetry.options import TRACER_NAME


@dataclass(frozen=True)
class Instruments:
    """Turn latency and HITL wait (seconds), LLM tokens, memory decisions and tool calls."""

    turn_latency: Histogram
    hitl_wait: Histogram
    llm_tokens: Counter
    memory_decisions: Counter
    tool_calls: Counter


def _instruments() -> Instruments:
    meter = metrics.get_meter(TRACER_NAME)
    return Instruments(
        turn_latency=meter.create_histogram(
            "memoir.turn.duration", unit="s", description="A turn from its start to its result."
        ),
        hitl_wait=meter.create_histogram(
            "memoir.hitl.wait",
            unit="s",
            description="A question from its asking to its answer or expiry.",
        ),
        llm_tokens=meter.create_counter(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens models reported."
        ),
        memory_decisions=meter.create_counter(
            "memoir.memory.decisions",
            unit="{decision}",
            description="Memory candidates created, updated (merged) or skipped.",
        ),
        tool_calls=meter.create_counter(
            "memoir.tool.calls", unit="{call}", description="Plan steps executed, by outcome."
        ),
    )


INSTRUMENTS = _instruments()

"""Process-wide telemetry options, set once from `Settings` by `configure` (or `apply_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from memoir.settings import Settings

TRACER_NAME = "memoir"


@dataclass
class Options:
    """What spans may carry: model prompts and answers only when `capture_content` is on."""

    capture_content: bool = False


OPTIONS = Options()


def apply_settings(settings: Settings) -> None:
    """Take the telemetry options of `settings` (MEMOIR_OTEL_CAPTURE_CONTENT)."""
    OPTIONS.capture_content = settings.otel_capture_content

"""Logs without personal data: message, email and memory content stays out of log records unless
debug content logging is switched on (`MEMOIR_LOG_CONTENT=true`).

`install()` (run on import) puts a log record factory in front of the current one. Unless
content logging is on, every record's arguments are reduced to what cannot carry content:
numbers, booleans, enums and identifier-like strings (no whitespace, no '@', at most 200
characters) stay; any other text, an exception's message, an email address or a
`Content`-wrapped value reads `<redacted: N chars>`; exception tracebacks keep their frames but
lose their messages. Call sites wrap what they know is content in `content()`; structured fields
go through `safe_fields()`.
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Mapping
from enum import Enum
from typing import Any

ENV = "MEMOIR_LOG_CONTENT"
_IDENTIFIER = re.compile(r"[^\s@]{0,200}")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_state = {"content": os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes", "on"}}


def content_logging() -> bool:
    """Whether logs may carry content (debugging only)."""
    return _state["content"]


def set_content_logging(enabled: bool) -> None:
    """Switch content logging on or off for this process."""
    _state["content"] = enabled


def _redacted(text: str) -> str:
    return f"<redacted: {len(text)} chars>"


class Content:
    """A value that is content: rendered only while content logging is on."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __str__(self) -> str:
        return str(self.value) if content_logging() else _redacted(str(self.value))

    def __repr__(self) -> str:
        return repr(self.value) if content_logging() else _redacted(str(self.value))


class Scrubbed(str):
    """Text built from already scrubbed parts (`safe_fields`): logged as it is."""

    __slots__ = ()


def content(value: object) -> Content:
    """Mark a log argument as content (message, email or memory text, a model's reasoning)."""
    return Content(value)


def safe(value: object) -> object:
    """What a log record may show of `value` (itself while content logging is on)."""
    if content_logging() or value is None:
        return value
    if isinstance(value, bool | int | float | Content | Scrubbed):
        return value
    if isinstance(value, Enum):
        return safe(value.value)
    if isinstance(value, str):
        if not _IDENTIFIER.fullmatch(value):
            return _redacted(value)
        path, mark, query = value.partition("?")  # an access log's path: `?query=...` is content
        return f"{path}?{_redacted(query)}" if mark else value
    if isinstance(value, BaseException):
        return f"{type(value).__name__}({_redacted(str(value))})"
    if isinstance(value, list | tuple | set | frozenset):
        return [safe(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): safe(item) for key, item in value.items()}
    return safe(str(value))


def _all_redacted(value: object) -> object:
    """Every string inside `value` redacted (numbers, booleans and None kept)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_all_redacted(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _all_redacted(item) for key, item in value.items()}
    return content(value)


def safe_fields(fields: Mapping[str, Any], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Structured log fields: those named in `keep` (ids, enums) through `safe`, every string in
    the others redacted, whatever its shape (a memory key reads like an identifier)."""
    if content_logging():
        return dict(fields)
    return {
        key: safe(value) if key in keep else _all_redacted(value) for key, value in fields.items()
    }


def _scrub_traceback(record: logging.LogRecord) -> None:
    """Keep the frames of the record's exception, not its message."""
    exc_info = record.exc_info
    if not exc_info or exc_info[1] is None:
        return
    error = exc_info[1]
    frames = "".join(traceback.format_tb(error.__traceback__))
    record.exc_text = f"Traceback (most recent call last):\n{frames}{safe(error)}"


def scrub(record: logging.LogRecord) -> logging.LogRecord:
    """Redact the record's arguments, exception and any email address in its message."""
    if content_logging():
        return record
    if isinstance(record.args, Mapping):
        record.args = {key: safe(value) for key, value in record.args.items()}
    elif record.args:
        record.args = tuple(safe(arg) for arg in record.args)
    if isinstance(record.msg, str):
        record.msg = _EMAIL.sub(lambda m: _redacted(m.group(0)), record.msg)
    else:
        record.msg = str(safe(record.msg))
    _scrub_traceback(record)
    return record


class _RedactingFactory:
    """A log record factory that scrubs what the one before it made."""

    # Recognised by name: a module re-imported (the workflow sandbox) must not wrap it again.
    memoir_redacting = True

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        return scrub(self.previous(*args, **kwargs))


def install(enabled: bool | None = None) -> None:
    """Scrub every log record of this process from now on (once; `enabled`: content logging)."""
    if enabled is not None:
        set_content_logging(enabled)
    current = logging.getLogRecordFactory()
    if not getattr(current, "memoir_redacting", False):
        logging.setLogRecordFactory(_RedactingFactory(current))


# Any process that imports Memoir's logging code scrubs its records (the flag from the
# environment); `create_app` applies the settings' `log_content` again.
install()

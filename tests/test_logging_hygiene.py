"""memoir.logging_hygiene: what a log record may show of its arguments, exceptions and fields."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import StrEnum

import pytest

from memoir import logging_hygiene as hygiene

SECRET = "my sister Quorra moves to Lisbon"


class Color(StrEnum):
    RED = "red"


@pytest.fixture(autouse=True)
def content_off() -> Iterator[None]:
    """Content logging off for each test, as it was afterwards."""
    before = hygiene.content_logging()
    hygiene.set_content_logging(False)
    yield
    hygiene.set_content_logging(before)


def record(msg: object, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    """A record made through the installed factory, formatted as a handler would."""
    hygiene.install()
    factory = logging.getLogRecordFactory()
    exc_info = (type(exc), exc, exc.__traceback__) if exc else None
    return factory("memoir.test", logging.INFO, __file__, 1, msg, args, exc_info)


def test_identifiers_numbers_and_enums_are_kept() -> None:
    made = record("%s %s %s %s", "turn:ana-1f:t1:m1", 3, 0.5, Color.RED)
    assert made.getMessage() == "turn:ana-1f:t1:m1 3 0.5 red"


def test_text_with_spaces_is_redacted_with_its_length() -> None:
    assert record("plan: %s", SECRET).getMessage() == f"plan: <redacted: {len(SECRET)} chars>"


def test_an_email_address_is_redacted_in_arguments_and_in_the_message() -> None:
    made = record("sent to ana@example.com and %s", "bo@example.org")
    assert "@" not in made.getMessage()


def test_a_query_string_is_redacted_from_an_access_log_path() -> None:
    made = record('"%s %s"', "GET", "/v1/memories?query=my%20sister%20Quorra")
    assert made.getMessage() == '"GET /v1/memories?<redacted: 26 chars>"'


def test_content_wrapped_single_words_are_redacted() -> None:
    assert "Quorra" not in record("name %s", hygiene.content("Quorra")).getMessage()


def test_an_exception_keeps_its_type_and_frames_not_its_message() -> None:
    try:
        raise ValueError(SECRET)
    except ValueError as error:
        made = record("failed: %s", error, exc=error)
    assert made.getMessage().startswith("failed: ValueError(<redacted")
    formatted = logging.Formatter().format(made)
    assert "Quorra" not in formatted and "test_logging_hygiene.py" in formatted


def test_nested_arguments_are_redacted_item_by_item() -> None:
    made = record("%s", {"to": ["ana@example.com"], "n": 2, "subject": SECRET})
    assert "Quorra" not in made.getMessage() and "ana@" not in made.getMessage()
    assert "'n': 2" in made.getMessage()


def test_safe_fields_keep_only_the_named_fields_strings() -> None:
    fields = hygiene.safe_fields(
        {"user_id": "ana-1f", "key": "profile:sister:quorra", "score": 0.9, "tags": ["quorra"]},
        keep=frozenset({"user_id"}),
    )
    assert fields["user_id"] == "ana-1f" and fields["score"] == 0.9
    assert "quorra" not in str(fields)


def test_content_logging_on_logs_everything() -> None:
    hygiene.set_content_logging(True)
    assert record("plan: %s", SECRET).getMessage() == f"plan: {SECRET}"


def test_install_wraps_the_factory_once() -> None:
    hygiene.install()
    first = logging.getLogRecordFactory()
    hygiene.install(enabled=False)
    assert logging.getLogRecordFactory() is first

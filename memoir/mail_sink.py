"""A local SMTP sink (aiosmtpd) for `memoir dev` / `memoir demo` and the tests.

Every message it accepts is stored as an `.eml` file in `{data_dir}/mail/`, named after its
`Message-ID`. A message whose Message-ID it already holds is accepted (250) but not stored
again, as real mail systems dedupe: that is what makes a retried `email.send` harmless.
"""

import contextlib
import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import make_msgid, parsedate_to_datetime
from pathlib import Path
from typing import Any, cast

from aiosmtpd.controller import Controller

log = logging.getLogger(__name__)


def mail_dir(data_dir: Path) -> Path:
    return data_dir / "mail"


@dataclass(frozen=True)
class SinkMessage:
    message_id: str
    sender: str
    to: str
    subject: str
    date: datetime
    body: str
    path: Path


class SinkHandler:
    """aiosmtpd handler: store each DATA once per Message-ID; count what came in."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.received = 0  # DATA transactions accepted, duplicates included
        self.duplicates = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        content = envelope.original_content or envelope.content
        raw = content if isinstance(content, bytes) else str(content).encode()
        message_id = _parse(raw).get("Message-ID")
        if not message_id:
            message_id = make_msgid(domain="memoir-sink")
            raw = f"Message-ID: {message_id}\r\n".encode() + raw
        self.received += 1
        if not store(self.directory, str(message_id).strip(), raw):
            self.duplicates += 1
            log.info("mail sink: duplicate %s accepted, not stored again", message_id)
            return "250 OK: duplicate Message-ID, already delivered"
        log.info("mail sink: stored %s for %s", message_id, envelope.rcpt_tos)
        return "250 OK: stored"


def store(directory: Path, message_id: str, raw: bytes) -> bool:
    """Store `raw` under its Message-ID; False when that Message-ID is already held."""
    directory.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(message_id.encode()).hexdigest()[:40]
    try:
        with (directory / f"{name}.eml").open("xb") as file:
            file.write(raw)
    except FileExistsError:
        return False
    return True


def list_messages(directory: Path, limit: int | None = None) -> list[SinkMessage]:
    """The stored messages, newest first."""
    if not directory.is_dir():
        return []
    messages = [_read(path) for path in directory.glob("*.eml")]
    messages.sort(key=lambda m: m.date, reverse=True)
    return messages if limit is None else messages[:limit]


class MailSink:
    """The SMTP server in its own thread (aiosmtpd's `Controller`)."""

    def __init__(self, directory: Path, host: str = "127.0.0.1", port: int = 8025) -> None:
        self.directory = directory
        self.host = host
        self.port = port
        self.handler = SinkHandler(directory)
        self._controller = Controller(self.handler, hostname=host, port=port)

    def start(self) -> "MailSink":
        self.directory.mkdir(parents=True, exist_ok=True)
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()

    def messages(self, limit: int | None = None) -> list[SinkMessage]:
        return list_messages(self.directory, limit)


def _parse(raw: bytes) -> EmailMessage:
    return cast(EmailMessage, message_from_bytes(raw, policy=policy.default))


def _read(path: Path) -> SinkMessage:
    message = _parse(path.read_bytes())
    date = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    if message["Date"]:
        with contextlib.suppress(TypeError, ValueError):
            date = parsedate_to_datetime(str(message["Date"]))
    if date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    body_part = message.get_body(preferencelist=("plain", "html"))
    body = body_part.get_content() if body_part is not None else ""
    return SinkMessage(
        message_id=str(message["Message-ID"] or ""),
        sender=str(message["From"] or ""),
        to=str(message["To"] or ""),
        subject=str(message["Subject"] or ""),
        date=date,
        body=str(body),
        path=path,
    )

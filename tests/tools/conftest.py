"""A real aiosmtpd sink on a free port, storing into a temp folder."""

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoir.caldav_server import CalDAVServer, start_caldav_server
from memoir.caldav_server import free_port as caldav_free_port
from memoir.mail_sink import MailSink
from memoir.tools.calendar import CalendarTool


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def mail_sink(tmp_path: Path) -> Iterator[MailSink]:
    sink = MailSink(tmp_path / "mail", host="127.0.0.1", port=free_port()).start()
    try:
        yield sink
    finally:
        sink.stop()


# ----- calendar.*: a real Radicale on a free port for the session -----


@pytest.fixture(scope="session")
def caldav_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CalDAVServer]:
    server = start_caldav_server(tmp_path_factory.mktemp("caldav"), port=caldav_free_port())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def calendar_tool(caldav_server: CalDAVServer) -> CalendarTool:
    return CalendarTool(caldav_server.url, "memoir", "memoir")

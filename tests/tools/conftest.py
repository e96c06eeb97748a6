"""Tool fixtures: the calendar tool over the session's Radicale (tests/conftest.py)."""

import pytest

from memoir.caldav_server import CalDAVServer
from memoir.tools.calendar import CalendarTool


@pytest.fixture
def calendar_tool(caldav_server: CalDAVServer) -> CalendarTool:
    return CalendarTool(caldav_server.url, "memoir", "memoir")

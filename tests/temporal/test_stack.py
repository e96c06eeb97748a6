"""The embedded stack refuses to start when the API's port is taken, before starting anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.app import create_app
from memoir.ports import PortInUseError, listen
from memoir.settings import Settings
from temporal.stack import start_stack


async def test_a_taken_api_port_stops_the_start_before_anything_runs(tmp_path: Path) -> None:
    with listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        settings = Settings(data_dir=tmp_path, api_host="127.0.0.1", api_port=port)
        with pytest.raises(PortInUseError, match=f"127.0.0.1:{port}"):
            await start_stack(settings, app_factory=create_app, say=lambda _: None)
    assert list(tmp_path.iterdir()) == []

"""A local Radicale CalDAV server for `memoir dev`, `memoir demo` and the tests.

Radicale runs as a subprocess (`python -m radicale`) with a config written into
`{data_dir}/radicale/`: collections stored in the data folder, no authentication (any user name
is accepted and owns its own calendars), listening on 127.0.0.1 only.
"""

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from memoir.ports import port_open

CONFIG = """\
[server]
hosts = {host}:{port}

[auth]
type = none
delay = 0

[rights]
type = owner_only

[storage]
filesystem_folder = {folder}

[logging]
level = warning
"""


def local_address(url: str) -> tuple[str, int] | None:
    """(host, port) of a CalDAV URL on this machine, or None for a remote server."""
    parsed = urlparse(url)
    if parsed.hostname not in ("127.0.0.1", "localhost"):
        return None
    return parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)


@dataclass
class CalDAVServer:
    process: "subprocess.Popen[bytes]"
    host: str
    port: int
    folder: Path

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start_caldav_server(
    data_dir: Path, *, port: int = 5232, host: str = "127.0.0.1", timeout: float = 30.0
) -> CalDAVServer:
    """Start Radicale with its config and storage under `{data_dir}/radicale/`; wait until it
    listens. Raises RuntimeError when it exits or does not listen within `timeout` seconds."""
    root = (Path(data_dir) / "radicale").resolve()
    folder = root / "collections"
    folder.mkdir(parents=True, exist_ok=True)
    config = root / "config"
    config.write_text(CONFIG.format(host=host, port=port, folder=folder))
    log = (root / "radicale.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "radicale", "--config", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    server = CalDAVServer(process, host, port, folder)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"Radicale exited with {process.returncode}; see {root / 'radicale.log'}"
            )
        if port_open(host, port):
            return server
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"Radicale did not listen on {host}:{port} within {timeout:.0f}s")

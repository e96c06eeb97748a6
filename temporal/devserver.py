"""The embedded Temporal dev server: SQLite file in the data folder, Web UI, search attributes."""

import asyncio
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from memoir.binaries import temporal_cli
from memoir.models import names
from memoir.ports import port_open

SEARCH_ATTRIBUTE_TYPES = {
    names.SA_USER_ID: "Keyword",
    names.SA_THREAD_ID: "Keyword",
    names.SA_CHANNEL: "Keyword",
    names.SA_CLASSIFICATION: "Keyword",
    names.SA_HITL_KIND: "Keyword",
    names.SA_AWAITING_HUMAN: "Bool",
}


# The history service hands workflow tasks to matching at most `transferProcessorMaxPollRPS` times
# a second (default 20), which puts 7-45 ms between a task being scheduled and started; 1000 takes
# that gap to a few ms.
DEV_SERVER_DYNAMIC_CONFIG = ("history.transferProcessorMaxPollRPS=1000",)
# WAL and synchronous=normal: the dev server's SQLite file stops fsyncing every write.
DEV_SERVER_SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=normal")


def dev_server_env(
    environ: Mapping[str, str] = os.environ, cpus: int | None = None
) -> dict[str, str]:
    """The dev server's environment: `GOMAXPROCS` at half the CPUs (at least 1) unless set.

    The worker beside it is one Python process (about one core); with the Go scheduler on every
    core, its idle threads spin for work. On 2 CPUs, GOMAXPROCS=1 took the server's CPU per chat
    turn from 66.7-69.7 to 54.5-61.8 ms (four interleaved runs, bench/README.md)."""
    env = dict(environ)
    env.setdefault("GOMAXPROCS", str(max(1, (cpus or os.cpu_count() or 2) // 2)))
    return env


def dev_server_tuning(*, sqlite_file: bool) -> list[str]:
    """Flags for `temporal server start-dev` that make turns fast on a small machine."""
    args: list[str] = []
    for value in DEV_SERVER_DYNAMIC_CONFIG:
        args += ["--dynamic-config-value", value]
    if sqlite_file:
        for pragma in DEV_SERVER_SQLITE_PRAGMAS:
            args += ["--sqlite-pragma", pragma]
    return args


@dataclass
class DevServer:
    process: subprocess.Popen[bytes]
    address: str
    ui_url: str

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


async def start_dev_server(
    data_dir: Path, *, port: int = 7233, ui_port: int = 8233, codec_endpoint: str | None = None
) -> DevServer:
    """Start `temporal server start-dev` and wait until its frontend answers; the Web UI decodes
    payloads through `codec_endpoint` (Memoir's /codec) when given."""
    data_dir.mkdir(parents=True, exist_ok=True)
    args = [
        temporal_cli(),
        "server",
        "start-dev",
        "--db-filename",
        str(data_dir / "temporal.sqlite"),
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--ip",
        "127.0.0.1",
        "--log-level",
        "warn",
        "--ui-disable-news-fetch",
        *dev_server_tuning(sqlite_file=True),
    ]
    if codec_endpoint:
        args += ["--ui-codec-endpoint", codec_endpoint]
    for key, kind in SEARCH_ATTRIBUTE_TYPES.items():
        args += ["--search-attribute", f"{key}={kind}"]
    log = (data_dir / "temporal.log").open("ab")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=dev_server_env())
    for _ in range(240):
        if process.poll() is not None:
            raise RuntimeError(f"temporal dev server exited; see {data_dir / 'temporal.log'}")
        if port_open("127.0.0.1", port):
            return DevServer(process, f"127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}")
        await asyncio.sleep(0.25)
    process.terminate()
    raise TimeoutError(f"temporal dev server did not listen on {port} within 60 s")


async def register_search_attributes(client: Client) -> None:
    """Register Memoir's search attributes on any server (dev, test, cluster); idempotent."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
    from temporalio.service import RPCError, RPCStatusCode

    kinds = {
        "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        "Bool": IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
    }
    request = AddSearchAttributesRequest(
        namespace=client.namespace,
        search_attributes={k: kinds[v] for k, v in SEARCH_ATTRIBUTE_TYPES.items()},
    )
    try:
        await client.operator_service.add_search_attributes(request)
    except RPCError as error:
        if error.status is not RPCStatusCode.ALREADY_EXISTS:
            raise

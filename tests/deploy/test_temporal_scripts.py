"""The compose stack's scripts against a real Temporal dev server: deploy/temporal-setup.sh (the
namespace and search attributes) and deploy/worker_healthcheck.py (a worker on this host polls)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio import activity
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from temporal.devserver import SEARCH_ATTRIBUTE_TYPES

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
KINDS = {
    IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD: "Keyword",
    IndexedValueType.INDEXED_VALUE_TYPE_BOOL: "Bool",
}


def _address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


def _run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run with the venv's bin first on PATH (its `temporal` CLI) and only the given settings."""
    base = {"PATH": f"{BIN}:{os.environ['PATH']}", "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run(
        command, capture_output=True, text=True, env={**base, **env}, cwd=REPO, timeout=120
    )


async def _custom_attributes(client: Client, namespace: str) -> dict[str, str]:
    request = ListSearchAttributesRequest(namespace=namespace)
    response = await client.operator_service.list_search_attributes(request)
    return {name: KINDS.get(kind, str(kind)) for name, kind in response.custom_attributes.items()}


async def test_setup_script_creates_the_namespace_and_memoirs_search_attributes(
    bare_temporal: WorkflowEnvironment,
) -> None:
    namespace = f"compose-{uuid.uuid4().hex[:8]}"
    script = ["sh", "deploy/temporal-setup.sh"]
    env = {"TEMPORAL_ADDRESS": _address(bare_temporal), "TEMPORAL_NAMESPACE": namespace}
    first = _run(script, **env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert await _custom_attributes(bare_temporal.client, namespace) == SEARCH_ATTRIBUTE_TYPES
    again = _run(script, **env)  # every `docker compose up` runs it: idempotent
    assert again.returncode == 0, again.stdout + again.stderr
    assert "search attribute MemoirUserId exists" in again.stdout


@activity.defn
async def noop() -> None:
    """An activity, so that the worker below polls."""


async def test_worker_health_check_sees_a_worker_of_this_host_polling(
    bare_temporal: WorkflowEnvironment,
) -> None:
    queue = f"health-{uuid.uuid4().hex[:8]}"
    check = [str(BIN / "python"), "deploy/worker_healthcheck.py"]
    env = {"TEMPORAL_ADDRESS": _address(bare_temporal), "MEMOIR_TASK_QUEUE": queue}
    idle = _run(check, **env)
    assert idle.returncode == 1, idle.stdout + idle.stderr
    assert f"no worker on {os.uname().nodename} polls task queue {queue}" in idle.stdout
    async with Worker(bare_temporal.client, task_queue=queue, activities=[noop]):
        for _ in range(20):  # the worker's first poll reaches the server within moments
            polling = await asyncio.to_thread(_run, check, **env)
            if polling.returncode == 0:
                break
            await asyncio.sleep(0.5)
    assert polling.returncode == 0, polling.stdout + polling.stderr
    assert polling.stdout.startswith("healthy:")


def test_worker_health_check_is_unhealthy_without_temporal() -> None:
    from memoir.ports import free_port

    result = _run(
        [str(BIN / "python"), "deploy/worker_healthcheck.py"],
        TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
    )
    assert result.returncode == 1
    assert result.stdout.startswith("unhealthy:")

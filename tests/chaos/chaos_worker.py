"""`python -m tests.chaos.chaos_worker`: `memoir worker` (the same settings, from the environment,
the same `build_deps` / `build_worker`), with hold points that let a test kill it at a chosen
moment.

The test arms a hold by writing the file `MEMOIR_CHAOS_HOLD` (a JSON object: `point`, `mark`,
and optionally `release`). Points:
- `activity:<type>`: the activity runs to its end, then its result is held back (the side
  effects are done, the server does not know);
- `store:<store>.<method>`: the worker stops when its stores call that method (before it runs).
The first worker to reach the point creates `mark` (holding its pid) and waits: until the file
`release` exists when one is named, else for ever (the test kills it meanwhile). A worker that
finds the mark already made goes on, so the worker that takes over does not hold again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from memoir.db import migrate, open_pool
from memoir.settings import get_settings
from memoir.stores import Stores
from temporal.client import connect, open_keyring
from temporal.worker import WORKER_POOL_WAIT_SECONDS, build_deps, build_worker

HOLD = "MEMOIR_CHAOS_HOLD"
log = logging.getLogger("chaos_worker")


def _armed(point: str) -> dict[str, str] | None:
    """The armed hold when it is at `point` and nobody holds it yet."""
    try:
        hold: dict[str, str] = json.loads(Path(os.environ[HOLD]).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return hold if hold.get("point") == point else None


async def maybe_hold(point: str) -> None:
    """At an armed point: take the mark (first worker only), then wait for release or kill."""
    hold = _armed(point)
    if hold is None:
        return
    try:
        with Path(hold["mark"]).open("x") as mark:
            mark.write(str(os.getpid()))
    except FileExistsError:
        return  # another worker held here; this one takes over
    log.warning("chaos: holding at %s", point)
    release = hold.get("release")
    while release is None or not Path(release).exists():
        await asyncio.sleep(0.05)
    log.warning("chaos: released at %s", point)


class _HoldAfter(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        result = await self.next.execute_activity(input)
        await maybe_hold(f"activity:{activity.info().activity_type}")
        return result


class HoldAfterActivity(Interceptor):
    """Hold back an activity's result at an armed `activity:<type>` point."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _HoldAfter(next)


class HoldingStore:
    """Delegates to `inner`; a method call stops first at an armed `store:<name>.<method>`."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner = inner
        self._name = name

    def __getattr__(self, method: str) -> Any:
        value = getattr(self._inner, method)
        if not asyncio.iscoroutinefunction(value):
            return value

        async def holding(*args: Any, **kwargs: Any) -> Any:
            await maybe_hold(f"store:{self._name}.{method}")
            return await value(*args, **kwargs)

        return holding


def _held_stores(stores: Stores) -> Stores:
    """Every store but the pool behind a `HoldingStore`."""
    fields = [f.name for f in dataclasses.fields(stores) if f.name != "pool"]
    held: dict[str, Any] = {name: HoldingStore(getattr(stores, name), name) for name in fields}
    return dataclasses.replace(stores, **held)


async def main() -> None:
    """`temporal.worker.run_worker` with the hold points put in place."""
    settings = get_settings()
    assert settings.database_url, "the chaos worker needs MEMOIR_DATABASE_URL"
    pool = await open_pool(settings.database_url, timeout=WORKER_POOL_WAIT_SECONDS)
    try:
        await migrate(pool)
        client = await connect(settings, open_keyring(settings, pool))
        deps = build_deps(settings, _held_stores(Stores.configured(pool, settings)), client)
        worker = build_worker(
            client, deps, settings.task_queue, sandboxed=False, interceptors=[HoldAfterActivity()]
        )
        log.warning("chaos worker %d polling %s", os.getpid(), settings.task_queue)
        await worker.run()
    finally:
        await pool.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    asyncio.run(main())

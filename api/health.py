"""`GET /healthz`: the database and Temporal each answer within a short timeout, or the reason."""

import asyncio
from datetime import timedelta

import psycopg
from psycopg_pool import PoolTimeout
from temporalio.client import Client

from api.schemas import Health, HealthCheck
from memoir.db import Pool

# Seconds each check may take; a check that takes longer fails with a timeout.
CHECK_TIMEOUT = 2.0


def _failed(error: BaseException) -> HealthCheck:
    message = str(error).strip() or "no answer"
    return HealthCheck(ok=False, error=f"{type(error).__name__}: {message}")


async def _select_one(pool: Pool) -> None:
    async with pool.connection(timeout=CHECK_TIMEOUT) as conn:
        await conn.execute("SELECT 1")


async def _why_no_connection(pool: Pool) -> HealthCheck:
    """The pool gave no connection in time: a direct connection says why (e.g. refused)."""
    busy = HealthCheck(ok=False, error=f"no connection from the pool in {CHECK_TIMEOUT:g} s")
    if not isinstance(pool.conninfo, str):
        return busy
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            conn = await psycopg.AsyncConnection.connect(
                pool.conninfo, connect_timeout=max(2, int(CHECK_TIMEOUT))
            )
            await conn.close()
    except Exception as err:  # any failure to connect is the answer
        return _failed(err)
    return busy


async def check_database(pool: Pool | None) -> HealthCheck:
    """A `SELECT 1` through the app's pool (None: the lifespan has not opened it yet)."""
    if pool is None:
        return HealthCheck(ok=False, error="the database is not opened yet")
    try:
        async with asyncio.timeout(CHECK_TIMEOUT + 1):
            await _select_one(pool)
    except PoolTimeout:
        return await _why_no_connection(pool)
    except Exception as err:  # a health check reports every failure, it never raises
        return _failed(err)
    return HealthCheck(ok=True)


async def check_temporal(client: Client | None) -> HealthCheck:
    """Temporal's gRPC health service (None: the lifespan has not connected yet)."""
    if client is None:
        return HealthCheck(ok=False, error="Temporal is not connected yet")
    try:
        serving = await client.service_client.check_health(timeout=timedelta(seconds=CHECK_TIMEOUT))
    except Exception as err:  # a health check reports every failure, it never raises
        return _failed(err)
    return HealthCheck(ok=True) if serving else HealthCheck(ok=False, error="not serving")


async def health(pool: Pool | None, client: Client | None) -> Health:
    """Both checks, run at once."""
    database, temporal = await asyncio.gather(check_database(pool), check_temporal(client))
    checks = {"database": database, "temporal": temporal}
    status = "ok" if all(c.ok for c in checks.values()) else "unhealthy"
    return Health(status=status, checks=checks)

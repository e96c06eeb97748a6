"""Outages of the servers under running turns: the Temporal dev server restarted mid-turn (same
SQLite file), the database stopped for 10 s during memory writes. Nothing is lost, and while the
database is down `/healthz` and the turn say so."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from memoir.models import TurnStatus, names
from temporal.diagnosis import failing_activities
from temporal.harness import Harness, until
from tests.chaos.conftest import WAIT, Bed
from tests.chaos.support import interactions_of, memories_mentioning

OUTAGE_SECONDS = 10.0


async def test_turns_complete_across_a_temporal_server_restart(chaos: Bed) -> None:
    h = await chaos.harness(("reminders",))
    release = chaos.folder / f"release-{uuid.uuid4().hex[:8]}"
    hold = chaos.arm(f"activity:{names.CONTEXT_MEMORY_AND_PLAN}", release=release)
    first = await h.send("Hi there!", message_id="m-before")
    await hold.reached()  # the turn is mid-flight: its plan is done, not yet reported
    await chaos.restart_temporal()
    release.touch()
    second = await h.send("Thanks!", message_id="m-after")
    for routed in (first, second):
        assert routed.turn_id
        assert (await h.result(routed.turn_id, within=WAIT)).status is TurnStatus.COMPLETED
    for message_id in ("m-before", "m-after"):
        assert await interactions_of(chaos.pool, h.user.user_id, message_id=message_id) == 1


async def test_a_database_outage_during_memory_writes_loses_nothing(
    chaos: Bed, api_url: str
) -> None:
    h = await chaos.harness(("reminders",))
    release = chaos.folder / f"release-{uuid.uuid4().hex[:8]}"
    hold = chaos.arm("store:memories.add", release=release)
    routed = await h.send("My cat Miso is 7 years old.", message_id="m-miso")
    assert routed.turn_id
    turn_id = routed.turn_id
    await hold.reached()
    headers = {"Authorization": f"Bearer {chaos.tokens[h.user.user_id]}"}
    async with httpx.AsyncClient(base_url=api_url, headers=headers, timeout=30) as http:
        await chaos.stop_postgres()
        release.touch()  # the held write goes on, into a database that is down
        down = asyncio.get_running_loop().time()
        health = await http.get("/healthz")
        assert health.status_code == 503
        database = health.json()["checks"]["database"]
        assert not database["ok"] and database["error"], database
        error = await until(lambda: _failing(h, turn_id), "the turn to show its error", tries=150)
        assert names.CONTEXT_MEMORY_AND_PLAN in error, error
        assert "PoolTimeout" in error or "OperationalError" in error, error
        turn = await http.get(f"/v1/turns/{turn_id}")
        assert turn.status_code == 503 and turn.json()["error"]["code"] == "database_unavailable"
        left = OUTAGE_SECONDS - (asyncio.get_running_loop().time() - down)
        await asyncio.sleep(max(0.0, left))
        await chaos.start_postgres()
        result = await h.result(turn_id, within=WAIT)
        assert result.status is TurnStatus.COMPLETED
        # the API's pool reconnects with a backoff of its own: healthy again within seconds
        await until(lambda: _healthy(http), "/healthz to say ok again", tries=60, every=0.5)
        view = (await http.get(f"/v1/turns/{turn_id}")).json()
        assert view["status"] == "completed", view
    assert await memories_mentioning(chaos.pool, h.user.user_id, "Miso") == 1
    assert await interactions_of(chaos.pool, h.user.user_id, message_id="m-miso") == 1


async def _healthy(http: httpx.AsyncClient) -> bool:
    return bool((await http.get("/healthz")).json()["status"] == "ok")


async def _failing(h: Harness, turn_id: str) -> str | None:
    """The turn's failing activities' last errors, as `GET /v1/turns/{id}` shows them."""
    description = await h.client.get_workflow_handle(turn_id).describe()
    return "; ".join(failing_activities(description)) or None

"""GET /v1/turns/{id} while a stage keeps failing: stage and last error, from the first retry."""

from __future__ import annotations

from typing import Any

from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from memoir.stores import Stores
from temporal.harness import until
from tests.api.support import api_harness, api_user, get_turn, http_client
from tests.faults import REFUSED, RefusingStore, refusing


async def test_a_turn_whose_store_keeps_failing_shows_its_stage_and_last_error(
    temporal_env: WorkflowEnvironment, stores: Stores, database_url: str
) -> None:
    faults: list[RefusingStore] = []
    wrap = refusing("interactions", "save_interaction_in", faults)
    async with api_harness(temporal_env, stores, database_url, wrap_stores=wrap) as harness:
        user = await api_user(stores, harness.user)
        app = create_app(harness.settings, client=temporal_env.client, stores=stores)
        harness.llm.script("Plan", await harness.remind_plan("call mom"))
        turn_id = (await harness.send("remind me to call mom")).turn_id or ""
        async with http_client(app) as http:

            async def failing_view() -> dict[str, Any] | None:
                view: dict[str, Any] = (await get_turn(http, user, turn_id)).json()
                return view if view.get("last_error") else None

            view = await until(failing_view, f"{turn_id} to show its error", tries=150, every=0.1)
    assert (view["status"], view["stage"]) == ("running", "remember")
    # the pending activity's last failure ('remember_turn (attempt 2): …') until a round of
    # attempts is spent, then the turn's own ('remember: …')
    assert "remember" in view["last_error"] and REFUSED in view["last_error"]

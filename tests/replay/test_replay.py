"""Every committed history replays against today's workflow code without nondeterminism."""

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from temporal.histories import HISTORY_DIR, SCENARIOS
from workflows import ALL_WORKFLOWS

HISTORIES = sorted(HISTORY_DIR.glob("*.json"))


def test_every_scenario_has_committed_turn_and_thread_histories() -> None:
    names = {path.name for path in HISTORIES}
    for scenario in SCENARIOS:
        assert f"{scenario}.turn.json" in names
        assert f"{scenario}.thread.json" in names


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_history_replays_deterministically(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None

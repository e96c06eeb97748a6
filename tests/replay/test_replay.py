"""Every committed history replays against today's workflow code without nondeterminism."""

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from temporal.histories import HISTORY_DIR, SCENARIOS, committed_histories, load_histories
from workflows import ALL_WORKFLOWS

HISTORIES = committed_histories()


def test_every_scenario_has_committed_turn_and_thread_histories() -> None:
    recorded = {history.workflow_id for history in load_histories(HISTORY_DIR)}
    assert len(recorded) == 2 * len(SCENARIOS)
    assert sum(workflow_id.startswith("turn:") for workflow_id in recorded) == len(SCENARIOS)


@pytest.mark.parametrize("history", HISTORIES, ids=lambda h: h.workflow_id)
async def test_history_replays_deterministically(history: WorkflowHistory) -> None:
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None

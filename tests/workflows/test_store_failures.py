"""A store that keeps failing (the database is down) never hangs a turn silently: its last error
shows in the turn's view and current details while the turn keeps retrying, the turn completes once
the database is back, and a harness timeout names the failing activity and its error."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.testing import WorkflowEnvironment

from memoir.models import EmailMessage, TurnStatus, TurnView
from memoir.stores import Stores
from temporal.harness import Harness, running_harness, until
from tests.faults import REFUSED, RefusingStore, refusing
from workflows.retry import FIRST_ROUND, LOCAL_ROUND

ERROR = f"OperationalError: {REFUSED}"
NEWSLETTER = EmailMessage(
    email_id="weekly-digest",
    author="News <news@example.com>",
    to="tess@example.com",
    subject="Your weekly digest",
    body="The week's top stories. Unsubscribe at any time.",
)


@asynccontextmanager
async def failing(
    env: WorkflowEnvironment, stores: Stores, store: str, method: str
) -> AsyncIterator[tuple[Harness, RefusingStore]]:
    """A harness whose worker's `stores.<store>.<method>` refuses until the test clears it."""
    faults: list[RefusingStore] = []
    async with running_harness(env, stores, wrap_stores=refusing(store, method, faults)) as h:
        yield h, faults[0]


async def failing_view(harness: Harness, turn_id: str) -> TurnView:
    """The turn's view once it reports a last error (letting retry backoffs pass meanwhile)."""

    async def reported() -> TurnView | None:
        view = await harness.view(turn_id)
        if view.last_error is None:
            await harness.skip(timedelta(seconds=1))
        return view if view.last_error else None

    await harness.started(turn_id)
    return await until(reported, f"{turn_id} to report its error", tries=400, every=0.1)


@pytest.mark.parametrize(
    ("store", "method", "stage", "label", "round_"),
    [
        # remember: a local activity (patch `fast-turn`), retried by the worker
        ("interactions", "save_interaction_in", "remember", "remember", LOCAL_ROUND),
        # execute: an activity, retried by the server
        ("reminders", "create", "execute", "execute s1", FIRST_ROUND),
    ],
    ids=["local activity", "activity"],
)
async def test_a_failing_store_activity_shows_its_last_error_and_keeps_retrying(
    time_env: WorkflowEnvironment,
    stores: Stores,
    store: str,
    method: str,
    stage: str,
    label: str,
    round_: RetryPolicy,
) -> None:
    async with failing(time_env, stores, store, method) as (harness, fault):
        harness.llm.script("Plan", await harness.remind_plan("call mom"))
        turn_id = (await harness.send("remind me to call mom")).turn_id or ""
        view = await failing_view(harness, turn_id)
        details = await harness.details(turn_id)
    assert view.status is TurnStatus.RUNNING and view.stage == stage
    assert view.last_error == f"{label}: {ERROR}"
    assert details == f"stage {stage}: retrying after error: {label}: {ERROR}"
    # a whole round of attempts, then the turn waits to retry
    assert fault.calls >= (round_.maximum_attempts or 0)


async def test_a_turn_completes_and_clears_its_error_when_the_database_is_back(
    time_env: WorkflowEnvironment, stores: Stores
) -> None:
    async with failing(time_env, stores, "interactions", "save_interaction_in") as (harness, fault):
        harness.llm.script("Plan", await harness.remind_plan("call mom"))
        turn_id = (await harness.send("remind me to call mom")).turn_id or ""
        await failing_view(harness, turn_id)
        fault.failing = False
        await harness.skip(timedelta(minutes=1))  # the backoff between rounds
        result = await harness.result(turn_id)
        view, details = await harness.view(turn_id), await harness.details(turn_id)
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success
    assert view.last_error is None and details == ""


@pytest.mark.parametrize(
    ("email", "label", "outcome"),
    [
        # email: the context is a local activity of its own, retried by the worker
        (NEWSLETTER, "assemble context", TurnStatus.IGNORED),
        # chat (turn version 2): the context is the first part of one activity
        (None, "context, memory and plan", TurnStatus.COMPLETED),
    ],
    ids=["email", "chat"],
)
async def test_a_failing_context_read_shows_its_last_error_then_the_turn_goes_on(
    time_env: WorkflowEnvironment,
    stores: Stores,
    email: EmailMessage | None,
    label: str,
    outcome: TurnStatus,
) -> None:
    async with failing(time_env, stores, "users", "get_user") as (harness, fault):
        turn_id = (await harness.send("hello", email=email)).turn_id or ""
        view = await failing_view(harness, turn_id)
        fault.failing = False
        await harness.skip(timedelta(minutes=1))
        result = await harness.result(turn_id)
    assert view.stage == "context"
    assert view.last_error == f"{label}: {ERROR}"
    assert result.status is outcome


async def test_the_harness_timeout_names_the_failing_activity_and_its_error(
    time_env: WorkflowEnvironment, stores: Stores
) -> None:
    async with failing(time_env, stores, "interactions", "save_interaction_in") as (harness, _):
        harness.llm.script("Plan", await harness.remind_plan("call mom"))
        turn_id = (await harness.send("remind me to call mom")).turn_id or ""
        with pytest.raises(AssertionError) as timeout:
            await harness.result(turn_id, within=8)
    message = str(timeout.value)
    assert f"timed out waiting for turn {turn_id} to finish" in message
    # the turn's own last error ('remember: …') or, before a round is spent, the pending
    # activity's last failure ('remember_turn (attempt 3): …')
    assert "remember" in message and REFUSED in message


async def test_a_non_retryable_failure_still_fails_the_turn_at_once(harness: Harness) -> None:
    harness.user = harness.user.model_copy(update={"user_id": "ghost-user"})
    turn_id = (await harness.send("hello")).turn_id or ""
    with pytest.raises(WorkflowFailureError) as failure:
        await harness.result(turn_id)
    assert "unknown user ghost-user" in " / ".join(_causes(failure.value))


def _causes(error: BaseException | None) -> list[str]:
    """The messages of an error's chain of causes (an activity's failure wraps what it raised)."""
    found = []
    while error is not None:
        found.append(str(error))
        error = getattr(error, "cause", None)
    return found

"""What the routes ask of Temporal: ingest by update-with-start, turn views and pending requests."""

import asyncio
import logging
import re
from collections.abc import Iterable
from datetime import timedelta

from pydantic import TypeAdapter
from temporalio.client import (
    Client,
    RPCTimeoutOrCancelledError,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from api.errors import ApiError, ErrorDetail, not_found, validation_failed
from memoir.models import (
    Classification,
    HitlAnswer,
    HitlRequest,
    IncomingMessage,
    RouteResult,
    ThreadState,
    TurnResult,
    TurnStatus,
    TurnView,
)
from memoir.models import search_attributes as sa
from memoir.models.names import (
    SA_AWAITING_HUMAN,
    SA_USER_ID,
    THREAD_STATE_QUERY,
    TURN_ANSWER_SIGNAL,
    TURN_PENDING_QUERY,
    TURN_VIEW_QUERY,
    TURN_WORKFLOW,
    thread_workflow_id,
)
from memoir.settings import Settings
from temporal import ingest
from temporal.diagnosis import decode_failures, failing_activities

# How long a query may take before the turn counts as not answering (no worker, stuck task).
QUERY_TIMEOUT = timedelta(seconds=5)
# Most pending requests listed at once (there is at most one per thread).
INBOX_LIMIT = 200
# Most running workflows of one user terminated when the user is erased.
ERASE_LIMIT = 1000

log = logging.getLogger(__name__)

UNSTORABLE = "must not contain NUL characters or unpaired surrogates"
_SURROGATE = re.compile("[\ud800-\udfff]")

_QUERY_ERRORS = (
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
    RPCTimeoutOrCancelledError,
    RPCError,
)
_PENDING = TypeAdapter(HitlRequest | None)


def owns_turn(user_id: str, turn_id: str) -> bool:
    """Whether `turn_id` is a turn of this user (`turn:{user_id}:{thread}:{message}`)."""
    parts = turn_id.split(":")
    return len(parts) == 4 and parts[0] == "turn" and parts[1] == user_id


def _unstorable(value: object, path: str = "") -> list[ErrorDetail]:
    """The strings inside `value` that Postgres cannot store: with a NUL or a lone surrogate."""
    if isinstance(value, str):
        if "\x00" in value or _SURROGATE.search(value):
            return [ErrorDetail(field=path, reason=UNSTORABLE, type="string_unstorable")]
        return []
    if isinstance(value, dict):
        return [d for k, v in value.items() for d in _unstorable(v, f"{path}.{k}".strip("."))]
    if isinstance(value, list):
        return [d for i, v in enumerate(value) for d in _unstorable(v, f"{path}.{i}")]
    return []


async def submit_message(
    client: Client, settings: Settings, message: IncomingMessage
) -> RouteResult:
    """Send a message to its thread workflow; the thread's routing decision, or a clear error
    (422 for text no turn could store: a NUL character or a lone surrogate)."""
    unstorable = _unstorable(message.model_dump(mode="python"))
    if unstorable:
        raise validation_failed(unstorable)
    try:
        result = await ingest.submit_message(client, settings, message)
    except WorkflowUpdateFailedError as err:
        raise ApiError(422, "rejected", f"The thread refused the message: {err.cause}") from err
    except WorkflowUpdateRPCTimeoutOrCancelledError as err:
        message_text = "The thread did not answer in time; send again with the same message_id."
        raise ApiError(503, "timeout", message_text) from err
    return result


async def _describe(handle: WorkflowHandle) -> WorkflowExecutionDescription | None:
    """The workflow's description, or None when there is no such workflow."""
    try:
        return await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


async def turn_view(client: Client, turn_id: str) -> TurnView | None:
    """The turn as `GET /v1/turns/{id}` shows it, or None when no such workflow exists."""
    handle = client.get_workflow_handle(turn_id, result_type=TurnResult)
    description = await _describe(handle)
    if description is None:
        return None
    if description.status == WorkflowExecutionStatus.RUNNING:
        return await _running_view(client, handle, description)
    if description.status == WorkflowExecutionStatus.COMPLETED:
        result: TurnResult = await handle.result()
        return TurnView(
            turn_id=turn_id,
            status=result.status,
            stage="done",
            classification=result.classification,
            reply=result.reply,
            actions=result.actions,
        )
    stage = description.status.name.lower() if description.status else "unknown"
    return TurnView(turn_id=turn_id, status=TurnStatus.FAILED, stage=stage)


async def _running_view(
    client: Client, handle: WorkflowHandle, description: WorkflowExecutionDescription
) -> TurnView:
    """The `view` query (or what the search attributes say when the turn cannot answer), with
    the last error of a pending activity that is being retried if the turn shows none yet."""
    view = await _queried_view(handle, description)
    if view.last_error is None:
        await decode_failures(description.raw_description.pending_activities, client.data_converter)
        view.last_error = next(iter(failing_activities(description)), None)
    return view


async def _queried_view(
    handle: WorkflowHandle, description: WorkflowExecutionDescription
) -> TurnView:
    """The `view` query; if the turn cannot answer, what its search attributes say."""
    try:
        view: TurnView = await handle.query(
            TURN_VIEW_QUERY, result_type=TurnView, rpc_timeout=QUERY_TIMEOUT
        )
        return view
    except _QUERY_ERRORS:
        attributes = description.typed_search_attributes
        awaiting = attributes.get(sa.AWAITING_HUMAN)
        classification = attributes.get(sa.CLASSIFICATION)
        return TurnView(
            turn_id=handle.id,
            status=TurnStatus.AWAITING_HUMAN if awaiting else TurnStatus.RUNNING,
            stage="unknown",
            classification=(
                Classification(classification) if classification in set(Classification) else None
            ),
        )


async def queued_stage(client: Client, user_id: str, thread_id: str, turn_id: str) -> str | None:
    """`queued` when the thread holds the turn back, `starting` while it starts it, else None."""
    handle = client.get_workflow_handle(thread_workflow_id(user_id, thread_id))
    description = await _describe(handle)
    if description is None or description.status != WorkflowExecutionStatus.RUNNING:
        return None
    try:
        state: ThreadState = await handle.query(
            THREAD_STATE_QUERY, result_type=ThreadState, rpc_timeout=QUERY_TIMEOUT
        )
    except _QUERY_ERRORS:
        return None
    if turn_id in state.queued_turn_ids:
        return "queued"
    return "starting" if state.running_turn_id == turn_id else None


async def _pending_of(handle: WorkflowHandle) -> HitlRequest | None:
    raw = await handle.query(TURN_PENDING_QUERY, rpc_timeout=QUERY_TIMEOUT)
    return _PENDING.validate_python(raw)


def _quoted(value: str) -> str:
    """A string literal for a visibility query."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


async def pending_requests(client: Client, user_id: str) -> list[HitlRequest]:
    """Every request of this user waiting on a human, soonest expiry first."""
    query = (
        f"WorkflowType={_quoted(TURN_WORKFLOW)} AND {SA_USER_ID}={_quoted(user_id)} "
        f"AND {SA_AWAITING_HUMAN}=true AND ExecutionStatus='Running'"
    )
    handles = [
        client.get_workflow_handle(execution.id, run_id=execution.run_id)
        async for execution in client.list_workflows(query, limit=INBOX_LIMIT)
    ]
    answers = await asyncio.gather(*(_pending_of(h) for h in handles), return_exceptions=True)
    found = [a for a in answers if isinstance(a, HitlRequest) and a.user_id == user_id]
    return sorted(found, key=lambda request: request.expires_at)


async def current_request(client: Client, turn_id: str) -> HitlRequest | None:
    """The request the turn waits on now (None if it waits on nothing); 404 if no such turn."""
    handle = client.get_workflow_handle(turn_id)
    description = await _describe(handle)
    if description is None:
        raise not_found("No such request.")
    if description.status != WorkflowExecutionStatus.RUNNING:
        return None
    try:
        return await _pending_of(handle)
    except _QUERY_ERRORS as err:
        message = "The turn did not answer its pending query in time; try again."
        raise ApiError(503, "turn_unavailable", message) from err


async def send_answer(client: Client, turn_id: str, answer: HitlAnswer) -> None:
    """Signal the answer to the waiting turn."""
    await client.get_workflow_handle(turn_id).signal(TURN_ANSWER_SIGNAL, answer)


async def _terminate(client: Client, workflow_id: str, run_id: str | None = None) -> bool:
    """Terminate one workflow; False when it is not running (or Temporal refused)."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        await handle.terminate(reason="user erased (DELETE /v1/me)")
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            log.warning("could not terminate %s: %s", workflow_id, err)
        return False
    return True


async def terminate_user_workflows(client: Client, user_id: str, also: Iterable[str] = ()) -> int:
    """Best effort: terminate the user's running threads and turns (found by `MemoirUserId`)
    and the workflows in `also` (e.g. reminder timers, which carry no search attributes).
    Returns how many were terminated; a visibility failure is logged, never raised."""
    query = f"{SA_USER_ID}={_quoted(user_id)} AND ExecutionStatus='Running'"
    targets: dict[str, str | None] = dict.fromkeys(also)
    try:
        async for execution in client.list_workflows(query, limit=ERASE_LIMIT):
            targets[execution.id] = execution.run_id
    except RPCError as err:
        log.warning("could not list the workflows of %s: %s", user_id, err)
    done = await asyncio.gather(*(_terminate(client, wid, rid) for wid, rid in targets.items()))
    return sum(done)

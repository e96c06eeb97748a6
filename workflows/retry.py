"""Store activities retry in bounded rounds with a durable backoff between them, for ever.

A round is a few attempts that the server (or, for a local activity, the worker) retries with a
short backoff. When a round is spent, the turn records the last error (its `view` query, its
current details in the Web UI), sleeps on a durable timer and starts another round: the database
may come back and a turn must not be lost, but nothing retries without its error showing.
Deterministic: pure functions of the round number and the error.
"""

from datetime import timedelta

from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    FailureError,
    RetryState,
)

# Round 1: four attempts over about 7 s, so an error shows quickly.
FIRST_ROUND = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=4,
)
# Later rounds: eight attempts over about 2 minutes, so a long outage adds few history events.
LATER_ROUNDS = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=60),
    maximum_attempts=8,
)
# A local activity's round runs inside a workflow task, which answers no query meanwhile: keep it
# to three attempts over about 1.5 s (then the turn's queries show the error during the backoff).
LOCAL_ROUND = RetryPolicy(
    initial_interval=timedelta(milliseconds=500),
    maximum_interval=timedelta(seconds=2),
    maximum_attempts=3,
)
# Between rounds: 5 s, 10 s, 20 s, 40 s, then 60 s.
FIRST_BACKOFF = timedelta(seconds=5)
MAX_BACKOFF = timedelta(seconds=60)
# Longest error text kept (the Web UI's details line and the API's `last_error`).
MAX_ERROR_CHARS = 500

_SPENT = frozenset({RetryState.MAXIMUM_ATTEMPTS_REACHED, RetryState.TIMEOUT})


def round_policy(round_: int, *, local: bool = False) -> RetryPolicy:
    """The retry policy of round `round_` (0-based); a local activity keeps to short rounds."""
    if local:
        return LOCAL_ROUND
    return FIRST_ROUND if round_ == 0 else LATER_ROUNDS


def backoff(rounds_failed: int) -> timedelta:
    """The durable sleep after `rounds_failed` (1-based) spent rounds, doubling up to a cap."""
    return min(FIRST_BACKOFF * 2 ** min(rounds_failed - 1, 16), MAX_BACKOFF)


def round_spent(error: FailureError) -> bool:
    """Whether the error only means the round ran out of attempts (or time): retry again.

    A non-retryable failure (e.g. an `ApplicationError(non_retryable=True)`) or a cancellation
    is not: it propagates as before. A local activity's failure carries no retry state (this
    SDK even raises its cause itself), so the cause decides."""
    if isinstance(error, ActivityError) and error.retry_state is not None:
        return error.retry_state in _SPENT
    cause = _cause(error)
    if isinstance(cause, CancelledError):
        return False
    return not (isinstance(cause, ApplicationError) and cause.non_retryable)


def _cause(error: FailureError) -> BaseException | None:
    """What the activity raised: the cause of an `ActivityError`, else the error itself."""
    return error.cause if isinstance(error, ActivityError) else error


def label_of(summary: str) -> str:
    """The stage label of an activity summary: 'memory hot path: semantic…' → 'memory hot path'."""
    return summary.split(":", 1)[0].strip()


def failure_text(label: str, error: FailureError) -> str:
    """'memory hot path: OperationalError: connection refused' (the cause's type and message)."""
    cause = _cause(error)
    if isinstance(cause, ApplicationError) and cause.type:
        reason = f"{cause.type}: {cause.message}"
    elif cause is not None:
        reason = str(cause) or type(cause).__name__
    else:
        reason = str(error)
    return f"{label}: {reason}"[:MAX_ERROR_CHARS]


def retry_details(stage: str, error: str) -> str:
    """The Web UI's current-details line while a stage keeps failing."""
    return f"stage {stage}: retrying after error: {error}"

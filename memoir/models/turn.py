"""What flows between the stages of a turn, and what a turn returns."""

import re
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from memoir.models.hitl import HitlOutcome, HitlRequest
from memoir.models.messages import EmailMessage, IncomingMessage
from memoir.models.plan import Classification, Plan, PlanStep

PREFERENCE_NAMESPACES = ("triage_preferences", "response_preferences", "cal_preferences")
PreferenceNamespace = Literal["triage_preferences", "response_preferences", "cal_preferences"]
# Seed 000: the response agent reads these in every prompt (the planner and the reply writer).
RESPONSE_AGENT_PREFERENCES: tuple[PreferenceNamespace, ...] = (
    "response_preferences",
    "cal_preferences",
)


TURN_VERSION = 2  # the version of the turns a thread starts (see `TurnInput.version`)


class TurnInput(BaseModel):
    """Input of `AgentTurnWorkflow`: the message and the knobs workflow code cannot read."""

    message: IncomingMessage
    hitl_ttl_seconds: int = 300
    max_replans: int = 3
    heartbeat_seconds: float = 15.0  # an activity's heartbeat timeout (see temporal.heartbeat)
    # The turn's code path, set by the thread that starts it (`TURN_VERSION`). 0: turns started
    # before versions, which follow the patch markers in their histories. 1: every patch of
    # AgentTurnWorkflow so far applies without recording a marker (nor the TemporalChangeVersion
    # upsert each marker brings), and a plan that answers alone brings its reply
    # (`plan_and_answer`). 2: as 1, and a chat turn's context, memory and first plan run in one
    # activity (`context_memory_and_plan`).
    version: int = 0


class TurnStatus(StrEnum):
    RUNNING = "running"
    AWAITING_HUMAN = "awaiting_human"
    COMPLETED = "completed"
    IGNORED = "ignored"
    EXPIRED = "expired"
    BLOCKED = "blocked"
    FAILED = "failed"


class LatestAction(BaseModel):
    """Seed 002 `LatestAction`: a successful step, for resolving "it / that"."""

    created_at: datetime
    capability: str
    action: str
    summary: str
    when: str | None = None
    external_ids: dict[str, str] = Field(default_factory=dict)


class RecentMessage(BaseModel):
    role: Literal["user", "assistant", "tool"]
    content: str
    at: datetime


class UserProfile(BaseModel):
    user_id: str
    name: str
    timezone: str = "UTC"
    language: str = "en"
    capabilities: list[str] = Field(default_factory=list)


class TurnContext(BaseModel):
    """Stage 1 output: everything later stages read about the user and the thread."""

    user: UserProfile
    now: datetime
    recent_messages: list[RecentMessage] = Field(default_factory=list)
    latest_actions: list[LatestAction] = Field(default_factory=list)
    reply_context: str | None = None


class MemoryContext(BaseModel):
    """Stages 2 and 3: the profile line and retrieved memory bullets."""

    profile_line: str = ""
    bullets: list[str] = Field(default_factory=list)
    now_line: str = ""
    events: list[str] = Field(default_factory=list)


class MemoryStages(BaseModel):
    """Stages 2 and 3 run as one activity: each stage's own result, under its name."""

    hotpath: MemoryContext
    context: MemoryContext

    def for_turn(self) -> MemoryContext:
        """What the later stages read: the hot path's profile line, the retrieved bullets."""
        return MemoryContext(
            profile_line=self.hotpath.profile_line or self.context.profile_line,
            bullets=self.context.bullets,
            now_line=self.context.now_line,
        )

    @property
    def events(self) -> list[str]:
        """Both stages' memory events, in order."""
        return self.hotpath.events + self.context.events


class TurnRequest(BaseModel):
    """Common input of most stage activities."""

    turn_id: str
    message: IncomingMessage
    context: TurnContext
    memory: MemoryContext = Field(default_factory=MemoryContext)


class TriageRequest(BaseModel):
    turn: TurnRequest


class PlanRequest(BaseModel):
    turn: TurnRequest
    feedback: list[str] = Field(default_factory=list, description="Human answers to re-plan with.")
    classification: Classification | None = Field(
        default=None, description="The turn's triage outcome, for a reply written with the plan."
    )


class PlannedTurn(BaseModel):
    """`plan_and_answer`'s result: the plan, and its reply when the plan is an answer alone."""

    plan: Plan
    reply: str | None = None


class PreferenceUpdate(BaseModel):
    user_id: str
    namespace: PreferenceNamespace
    decision: str = Field(description="The human decision that caused it, e.g. notify.ignore.")
    messages: list[str]
    turn_id: str
    email: EmailMessage | None = Field(
        default=None, description="The email a triage decision is about (scopes its lesson)."
    )
    original: dict[str, Any] | None = Field(
        default=None, description="An edited or commented draft's args as proposed."
    )
    edited: dict[str, Any] | None = Field(default=None, description="The args as edited.")
    feedback: str | None = Field(default=None, description="The person's words on the draft.")


def normalize_decision(decision: str) -> str:
    """A `PreferenceUpdate.decision` from a capability spelling: "email.send.edit" →
    "email.edit", "calendar.schedule.response" → "calendar.feedback"."""
    name = re.sub(
        r"^(?:(email)\.send|(calendar)\.(?:schedule|update|cancel))\.", r"\1\2.", decision.strip()
    )
    return re.sub(r"(^|\.)response$", r"\1feedback", name)


class Candidate(BaseModel):
    id: str
    label: str
    args: dict[str, Any] = Field(default_factory=dict)


class ResolveRequest(BaseModel):
    turn_id: str
    user_id: str
    step: PlanStep
    timezone: str = "UTC"
    prior_results: dict[str, "ExecutionResult"] = Field(default_factory=dict)


class StepResolution(BaseModel):
    """Entity resolution of one step: ids, several candidates, or nothing found."""

    step_id: str
    status: Literal["resolved", "candidates", "not_found"]
    args: dict[str, Any] = Field(default_factory=dict)
    candidates: list[Candidate] = Field(default_factory=list)
    message: str | None = None


class ExecuteRequest(BaseModel):
    turn_id: str
    user_id: str
    thread_id: str
    step: PlanStep
    args: dict[str, Any]
    idempotency_key: str
    timezone: str = "UTC"


class ExecutionResult(BaseModel):
    step_id: str
    capability: str
    success: bool
    summary: str
    args: dict[str, Any] = Field(default_factory=dict, description="The args it executed with.")
    data: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    latest_action: LatestAction | None = None


class ReplyRequest(BaseModel):
    turn: TurnRequest
    plan: Plan | None
    results: list[ExecutionResult]
    classification: Classification | None = None
    note: str | None = Field(default=None, description="A fixed outcome to say, e.g. expiry.")


class RememberRequest(BaseModel):
    turn_id: str
    message: IncomingMessage
    reply: str
    results: list[ExecutionResult]
    status: "TurnStatus"
    # The user's name as the turn's context read it (the speaker of a message that names none);
    # None: remember reads it from the users table.
    user_name: str | None = None

    @classmethod
    def answered_alone(
        cls, turn_id: str, message: IncomingMessage, reply: str, user_name: str | None
    ) -> "RememberRequest":
        """What a turn whose plan answers alone remembers: completed with the plan's reply and
        no results (`context_memory_and_plan` remembers it; the workflow then need not)."""
        return cls(
            turn_id=turn_id,
            message=message,
            reply=reply,
            results=[],
            status=TurnStatus.COMPLETED,
            user_name=user_name,
        )


class RememberStages(BaseModel):
    """Stage 12 run as one activity: the events of remember and of episodic capture."""

    remember: list[str] = Field(default_factory=list)
    episodic_capture: list[str] = Field(default_factory=list)


class PrepareRequest(BaseModel):
    """Input of `context_memory_and_plan`: a chat turn as it starts."""

    turn_id: str
    message: IncomingMessage
    classification: Classification | None = None


class PreparedTurn(BaseModel):
    """Stages 1, 2-3 and 6 of a chat turn run as one activity: each stage's own result; and
    stage 12's when the plan answers alone (the turn's outcome is then known: completed, with
    the plan's reply)."""

    context: TurnContext
    memory: MemoryStages
    planned: PlannedTurn
    remembered: RememberStages | None = None


class TurnResult(BaseModel):
    turn_id: str
    status: TurnStatus
    classification: Classification | None = None
    reply: str | None = None
    actions: list[ExecutionResult] = Field(default_factory=list)
    hitl: list[HitlOutcome] = Field(default_factory=list)
    memory_events: list[str] = Field(default_factory=list)


class TurnView(BaseModel):
    """What `GET /v1/turns/{id}` and the `view` query show."""

    turn_id: str
    status: TurnStatus
    stage: str = ""
    classification: Classification | None = None
    pending: HitlRequest | None = None
    reply: str | None = None
    actions: list[ExecutionResult] = Field(default_factory=list)
    last_error: str | None = Field(
        default=None,
        description="While a stage keeps failing and is retried: its last error, e.g. "
        "'memory hot path: OperationalError: connection refused'.",
    )


class ReminderDue(BaseModel):
    reminder_id: str
    user_id: str
    thread_id: str
    text: str
    due_at: datetime
    heartbeat_seconds: float = 15.0


ResolveRequest.model_rebuild()
RememberRequest.model_rebuild()

"""The HITL gate's pure parts: which question a plan needs, how requests are built, what they teach.

Options' ids, labels and order come from code here; the LLM only ever writes question text.
"""

from datetime import datetime, timedelta

from memoir.models import (
    ActionRequest,
    Candidate,
    Decision,
    ExpectedInput,
    HitlConfig,
    HitlKind,
    HitlOption,
    HitlRequest,
    IncomingMessage,
    Plan,
    PlanStep,
    PreferenceNamespace,
)

MIN_CONFIDENCE = 0.6
EXPIRED_REPLY = (
    "That question expired after {after}, so I did nothing. "
    "Send your request again if you still want it."
)
STALE_REPLY = "I'm not waiting on a question right now — what would you like to do?"
CANCELLED_REPLY = "Okay, I won't do anything with that."

NOTIFY_OPTIONS = [
    HitlOption(id="respond", label="Respond"),
    HitlOption(id="ignore", label="Ignore"),
]
# With acknowledge (Agent Inbox `accept`): "seen, thanks" closes it and teaches that notifying
# was right; ignore teaches "don't show me emails like this".
ACKNOWLEDGE_OPTIONS = [
    HitlOption(id="respond", label="Respond"),
    HitlOption(id="acknowledge", label="Acknowledge"),
    HitlOption(id="ignore", label="Ignore"),
]

# Seed 000, section 4: which human decision on which tool updates which preference memory.
_EDIT_OR_FEEDBACK: dict[str, PreferenceNamespace] = {
    "email.send": "response_preferences",
    "calendar.schedule": "cal_preferences",
    "calendar.update": "cal_preferences",
}
_IGNORE_TEACHES_TRIAGE = frozenset({"email.send", "calendar.schedule", "calendar.update"})


def preference_for(decision: Decision, capability: str) -> PreferenceNamespace | None:
    """The namespace an approval decision updates, or None (seed 000 table)."""
    if decision.type in ("edit", "response"):
        return _EDIT_OR_FEEDBACK.get(capability)
    if decision.type == "ignore" and capability in _IGNORE_TEACHES_TRIAGE:
        return "triage_preferences"
    return None


def hitl_id(turn_id: str, number: int) -> str:
    return f"{turn_id}:hitl{number}"


class RequestFactory:
    """Builds the requests of one turn: ids numbered in order, timer from the first ask."""

    def __init__(self, message: IncomingMessage, turn_id: str, ttl_seconds: int) -> None:
        self._message = message
        self._turn_id = turn_id
        self._ttl = timedelta(seconds=ttl_seconds)
        self._count = 0

    def _new(
        self,
        now: datetime,
        *,
        kind: HitlKind,
        action: ActionRequest,
        config: HitlConfig,
        description: str,
        question: str,
        expected: ExpectedInput,
        options: list[HitlOption] | None = None,
    ) -> HitlRequest:
        self._count += 1
        return HitlRequest(
            hitl_id=hitl_id(self._turn_id, self._count),
            turn_id=self._turn_id,
            thread_id=self._message.thread_id,
            user_id=self._message.user_id,
            kind=kind,
            action_request=action,
            config=config,
            description=description,
            question=question,
            expected_input=expected,
            options=options or [],
            created_at=now,
            expires_at=now + self._ttl,
        )

    def notify(self, now: datetime, *, acknowledge: bool = True) -> HitlRequest:
        """Seed 000 triage interrupt for a 'notify' email: respond, acknowledge ("seen, thanks")
        or ignore. `acknowledge=False`: the seed's respond / ignore only (older histories)."""
        description = self._message.email.markdown() if self._message.email else self._message.text
        question = (
            "This email looks worth knowing about. Respond to it, acknowledge it (seen, thanks), "
            "or ignore emails like it?"
            if acknowledge
            else "This email looks worth knowing about. Respond to it, or ignore it?"
        )
        return self._new(
            now,
            kind=HitlKind.NOTIFY,
            action=ActionRequest(action="Email Assistant: notify", args={}),
            config=HitlConfig(allow_ignore=True, allow_respond=True, allow_accept=acknowledge),
            description=description,
            question=question,
            expected=ExpectedInput.HUMAN_RESPONSE,
            options=list(ACKNOWLEDGE_OPTIONS if acknowledge else NOTIFY_OPTIONS),
        )

    def for_plan(self, now: datetime, plan: Plan) -> HitlRequest | None:
        """The planner's question, if the plan needs one (`plan_question`)."""
        kind = plan_question(plan)
        if kind is HitlKind.MISSING_FIELDS:
            missing = ", ".join(plan.missing_fields)
            question = plan.question or f"I need a bit more to do that: {missing}?"
            return self._free_text(now, kind, plan, question)
        if kind is HitlKind.INTENT_UNCLEAR:
            question = plan.question or "I'm not sure what you'd like me to do. Could you rephrase?"
            return self._free_text(now, kind, plan, question)
        if kind is HitlKind.CLARIFICATION:
            return self._free_text(now, kind, plan, plan.question or "")
        step = approval_step(plan)
        if step is not None:
            return self._approval(now, plan, step)
        return None

    def _free_text(self, now: datetime, kind: HitlKind, plan: Plan, question: str) -> HitlRequest:
        return self._new(
            now,
            kind=kind,
            action=ActionRequest(action="Question", args={"intent": plan.intent}),
            config=HitlConfig(allow_ignore=True, allow_respond=True),
            description=f"**Request**: {self._message.text[:2000]}\n\n**Intent**: {plan.intent}",
            question=question,
            expected=ExpectedInput.FREE_TEXT,
        )

    def _approval(self, now: datetime, plan: Plan, step: PlanStep) -> HitlRequest:
        summary = step.description or step.capability
        return self._new(
            now,
            kind=HitlKind.APPROVAL,
            action=ActionRequest(action=step.capability, args=dict(step.args)),
            config=HitlConfig(
                allow_ignore=True, allow_respond=True, allow_edit=True, allow_accept=True
            ),
            description=_approval_markdown(plan, step),
            question=f"Shall I go ahead: {summary}? (yes / no)",
            expected=ExpectedInput.YES_NO,
        )

    def disambiguation(
        self, now: datetime, step: PlanStep, candidates: list[Candidate]
    ) -> HitlRequest:
        """Template-built, never LLM-written (seed 002)."""
        options = [HitlOption(id=c.id, label=c.label) for c in candidates]
        lines = "\n".join(f"{i}. {o.label}" for i, o in enumerate(options, start=1))
        return self._new(
            now,
            kind=HitlKind.DISAMBIGUATION,
            action=ActionRequest(action=step.capability, args=dict(step.args)),
            config=HitlConfig(allow_ignore=True, allow_respond=True),
            description=f"**{step.description or step.capability}** matches several items.",
            question=f"Which one did you mean?\n{lines}\nAnswer with a number.",
            expected=ExpectedInput.SINGLE_CHOICE,
            options=options,
        )


def plan_question(plan: Plan) -> HitlKind | None:
    """The kind of question a plan needs before it runs, if any (seed 002 HITL gate, in order)."""
    if plan.missing_fields:
        return HitlKind.MISSING_FIELDS
    if plan.confidence < MIN_CONFIDENCE:
        return HitlKind.INTENT_UNCLEAR
    if plan.question and not plan.steps:
        return HitlKind.CLARIFICATION
    if approval_step(plan) is not None:
        return HitlKind.APPROVAL
    return None


def approval_step(plan: Plan) -> PlanStep | None:
    """The step a person must approve: the first side-effecting step of a plan that needs it."""
    if not (plan.needs_approval or plan.risk == "high") or not plan.steps:
        return None
    for step in plan.steps:
        if not step.capability.endswith((".list", ".search", ".availability", ".lookup")):
            return step
    return plan.steps[0]


def _approval_markdown(plan: Plan, step: PlanStep) -> str:
    args = "\n".join(f"- **{key}**: {value}" for key, value in step.args.items())
    return (
        f"**Action**: `{step.capability}` ({plan.risk} risk)\n\n{args}\n\n{plan.reasoning}".strip()
    )


def with_error(request: HitlRequest, error: str) -> HitlRequest:
    """The same request, asked again with an error prefix (seed 002: same hitl id)."""
    base = request.question.split("\n\n", 1)[1] if request.error else request.question
    return request.model_copy(
        update={
            "error": error,
            "attempts": request.attempts + 1,
            "question": f"⚠️ {error}\n\n{base}",
        }
    )


def current_details(request: HitlRequest) -> str:
    """The Web UI's current-details line while the turn waits."""
    waits = {
        HitlKind.NOTIFY: "waiting for a respond / acknowledge / ignore decision on",
        HitlKind.APPROVAL: "waiting for approval:",
        HitlKind.DISAMBIGUATION: "waiting for a choice:",
    }.get(request.kind, "waiting for an answer:")
    target = request.action_request.action
    if request.action_request.args:
        shown = ", ".join(f"{k}={v}" for k, v in list(request.action_request.args.items())[:3])
        target = f"{target} ({shown})"
    return f"{waits} {target} — expires {request.expires_at:%H:%M:%S} UTC"

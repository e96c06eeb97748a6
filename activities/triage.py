"""Stage 4: triage an email into ignore / notify / respond (seed 000 triage router)."""

from datetime import UTC, datetime

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from memoir.models import (
    Channel,
    EmailMessage,
    IncomingMessage,
    TriageDecision,
    TriageRequest,
    TurnContext,
    TurnRequest,
    UserProfile,
    names,
)
from memoir.triage import reader_address, triage_email

READER_KEY = "email"  # the user context key of their own address


def lone_email_request(user: UserProfile, email: EmailMessage, turn_id: str) -> TriageRequest:
    """The triage request for `email` alone: turn `turn_id`, on a thread of that id (how the
    triage eval and the tests call the activity without a workflow)."""
    message = IncomingMessage(
        user_id=user.user_id,
        thread_id=turn_id,
        message_id=email.email_id,
        channel=Channel.EMAIL,
        text=email.markdown(),
        email=email,
    )
    context = TurnContext(user=user, now=datetime.now(UTC))
    return TriageRequest(turn=TurnRequest(turn_id=turn_id, message=message, context=context))


class TriageActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.TRIAGE)
    async def triage(self, request: TriageRequest) -> TriageDecision:
        message = request.turn.message
        if message.email is None:
            raise ApplicationError("triage needs an email", type="NotAnEmail", non_retryable=True)
        instructions = await self._deps.stores.preferences.get_memory(
            message.user_id, "triage_preferences"
        )
        reader = await self._reader(message.user_id, message.email)
        decision = await triage_email(self._deps.llm, message.email, instructions, reader=reader)
        activity.logger.info(
            "triage %s → %s: %s", message.message_id, decision.classification, decision.reasoning
        )
        return decision

    async def _reader(self, user_id: str, email: EmailMessage) -> str:
        """The user's own address (`email` in their context): learned from the first email
        addressed to them alone, kept once known (a person may set it too)."""
        contexts = self._deps.stores.user_context
        known = (await contexts.get(user_id)).extra.get(READER_KEY)
        if isinstance(known, str) and known:
            return known
        learned = reader_address(email)
        if learned is not None:
            await contexts.apply(user_id, {READER_KEY: learned})
        return learned or ""

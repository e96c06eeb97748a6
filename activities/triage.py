"""Stage 4: triage an email into ignore / notify / respond (seed 000 triage router)."""

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from memoir.models import TriageDecision, TriageRequest, names
from memoir.triage import triage_email


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
        decision = await triage_email(self._deps.llm, message.email, instructions)
        activity.logger.info(
            "triage %s → %s: %s", message.message_id, decision.classification, decision.reasoning
        )
        return decision

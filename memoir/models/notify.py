"""The notify gate's answer and what it teaches (seed 000 triage interrupt, plus acknowledge).

Pure functions of the models, shared by the turn workflow and `memoir eval triage`, so the eval
teaches exactly what a real turn teaches.
"""

from enum import StrEnum

from memoir.models.hitl import Decision
from memoir.models.messages import IncomingMessage
from memoir.models.turn import PreferenceUpdate


class NotifyChoice(StrEnum):
    RESPOND = "respond"
    ACKNOWLEDGE = "acknowledge"  # Agent Inbox `accept`: "seen, thanks"
    IGNORE = "ignore"


def notify_choice(decision: Decision) -> NotifyChoice:
    """Which of respond / acknowledge / ignore a validated answer to a notify request is."""
    if decision.type == "accept" or decision.choices == [NotifyChoice.ACKNOWLEDGE.value]:
        return NotifyChoice.ACKNOWLEDGE
    if decision.type == "ignore" or decision.choices == [NotifyChoice.IGNORE.value]:
        return NotifyChoice.IGNORE
    return NotifyChoice.RESPOND


_TAUGHT = {
    NotifyChoice.ACKNOWLEDGE: "The user read this notification and acknowledged it (seen, "
    "thanks): notifying them was right for emails like it. It needs no reply and must not be "
    "ignored.",
    NotifyChoice.IGNORE: "The user ignored this notification: emails like it should not be "
    "shown to them.",
    NotifyChoice.RESPOND: "The user chose to respond to this notify email: it needs a reply.",
}


def respond_note(feedback: str | None) -> str:
    return f"User wants to reply to the email. Use this feedback to respond: {feedback or ''}"


def notify_feedback(
    choice: NotifyChoice, message: IncomingMessage, turn_id: str, feedback: str | None = None
) -> PreferenceUpdate:
    """The triage-preference update a notify answer causes (`notify.<choice>`)."""
    email = message.email.markdown() if message.email else message.text
    messages = [email, _TAUGHT[choice]]
    if choice is NotifyChoice.RESPOND:
        messages.append(respond_note(feedback))
    return PreferenceUpdate(
        user_id=message.user_id,
        namespace="triage_preferences",
        decision=f"notify.{choice.value}",
        messages=messages,
        turn_id=turn_id,
        email=message.email,
    )

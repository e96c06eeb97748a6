"""Scripted planner and triage outputs for the workflow tests and the recorded histories."""

from datetime import UTC, datetime, timedelta

from memoir.models import Classification, Plan, PlanStep, TriageDecision


def _in_an_hour() -> datetime:
    return datetime.now(UTC) + timedelta(hours=1)


def remind(
    text: str = "call mom", *, approval: bool = False, due_at: datetime | None = None
) -> Plan:
    return Plan(
        intent="create a reminder",
        confidence=0.95,
        needs_approval=approval,
        steps=[
            PlanStep(
                id="s1",
                capability="reminders.create",
                args={"text": text, "due_at": (due_at or _in_an_hour()).isoformat()},
                description=f"remind you to {text}",
            )
        ],
    )


def complete(query: str, *, approval: bool = False) -> Plan:
    return Plan(
        intent="complete a reminder",
        confidence=0.9,
        needs_approval=approval,
        steps=[
            PlanStep(
                id="s1",
                capability="reminders.complete",
                args={"query": query},
                description=f"complete the '{query}' reminder",
            )
        ],
    )


def send_email(to: str = "dan@example.com", body: str = "Hello") -> Plan:
    """One email.send step that needs approval; `to` may be an address or a contact's name."""
    return Plan(
        intent="send an email",
        confidence=0.9,
        needs_approval=True,
        steps=[
            PlanStep(
                id="s1",
                capability="email.send",
                args={"to": to, "subject": "Hi", "body": body},
                description=f"Email {to}",
            )
        ],
    )


def unclear() -> Plan:
    return Plan(intent="unclear", confidence=0.3, question="What should I do?")


def chat() -> Plan:
    return Plan(intent="small talk", intent_type="conversation", confidence=0.9)


def triage(classification: Classification) -> TriageDecision:
    return TriageDecision(reasoning=f"scripted: {classification}", classification=classification)

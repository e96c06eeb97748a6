"""The `contacts.lookup` capability: find a person's address in the user's contacts (Postgres).

Resolving `{"name": "Dan"}`: no contact → not_found; one → resolved with its `contact_id`;
several → candidates labelled "Name <email>", so the turn asks which one (seed 002 entity
resolution). Executing returns the contact(s), for later steps to use.
"""

from __future__ import annotations

from memoir.models import (
    Candidate,
    ExecuteRequest,
    ExecutionResult,
    ResolveRequest,
    StepResolution,
)
from memoir.stores.contacts import Contact, ContactStore
from memoir.tools.base import failure, not_found, success


def contact_candidates(contacts: list[Contact]) -> list[Candidate]:
    """One option per contact, labelled "Name <email>", whose args set its `contact_id`."""
    return [
        Candidate(id=c.contact_id, label=c.label, args={"contact_id": c.contact_id})
        for c in contacts
    ]


class ContactsTool:
    def __init__(self, store: ContactStore) -> None:
        self._store = store

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        step_id = request.step.id
        action = request.step.capability.split(".", 1)[1]
        if action != "lookup":
            return not_found(step_id, f"contacts has no action '{action}'.")
        args = request.step.args
        if args.get("contact_id"):
            return StepResolution(step_id=step_id, status="resolved", args=dict(args))
        name = str(args.get("name") or args.get("query") or "").strip()
        if not name:
            return not_found(step_id, "Whose contact details? I need a name.")
        matches = await self._store.find(request.user_id, name)
        if not matches:
            return not_found(step_id, f"I couldn't find '{name}' in your contacts.")
        if len(matches) == 1:
            return StepResolution(
                step_id=step_id, status="resolved", args={"contact_id": matches[0].contact_id}
            )
        return StepResolution(
            step_id=step_id,
            status="candidates",
            candidates=contact_candidates(matches),
        )

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        action = request.step.capability.split(".", 1)[1]
        if action != "lookup":
            return failure(request, f"contacts has no action '{action}'")
        contact_id = str(request.args.get("contact_id", ""))
        contact = await self._store.get(request.user_id, contact_id)
        if contact is None:
            return failure(request, f"Contact {contact_id} no longer exists.")
        summary = f"{contact.name}: {contact.email}" + (
            f", {contact.phone}" if contact.phone else ""
        )
        data = {"contact": contact.model_dump(mode="json"), "to": contact.label}
        return success(request, summary, data, ids={"contact_id": contact.contact_id})

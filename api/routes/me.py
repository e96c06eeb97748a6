"""The user themself: `GET /v1/me` (profile), `PUT /v1/me/capabilities` (connected
capabilities), `DELETE /v1/me` (erases everything of theirs, answers an anonymous receipt)."""

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api import gateway
from api.deps import Audit, ClientDep, CurrentUser, StoresDep
from api.errors import ERROR_RESPONSES, ApiError, ErrorDetail
from memoir.audit import AuditAction, AuditLog, ErasureReceipt
from memoir.models import UserProfile
from memoir.models.names import reminder_workflow_id
from memoir.models.plan import CAPABILITY_FAMILIES, unknown_capabilities
from temporal.codec import destroy_user_keys

router = APIRouter(prefix="/v1", tags=["me"], responses=ERROR_RESPONSES)


class CapabilitiesUpdate(BaseModel):
    """The whole set of connected capability families (replaces the current one)."""

    capabilities: list[str] = Field(
        description="Capability families to connect: " + ", ".join(CAPABILITY_FAMILIES) + "."
    )


@router.get("/me")
async def get_me(user: CurrentUser, audit: Audit) -> UserProfile:
    """This user's profile, with the capability families they have connected."""
    await audit.record(AuditAction.READ, "profile", user.user_id)
    return user


@router.put("/me/capabilities")
async def put_capabilities(
    body: CapabilitiesUpdate, user: CurrentUser, stores: StoresDep, audit: Audit
) -> UserProfile:
    """Replace the connected capabilities; an unknown name answers 422 listing the known ones.
    The next turn's capability check and planner see the new set."""
    names = [c.strip() for c in body.capabilities]
    unknown = unknown_capabilities(names)
    if unknown:
        known = ", ".join(CAPABILITY_FAMILIES)
        raise ApiError(
            422,
            "validation_error",
            f"Unknown capabilities: {', '.join(unknown)}. Known capabilities: {known}.",
            details=[
                ErrorDetail(
                    field=f"capabilities.{names.index(u)}",
                    reason=f"unknown capability {u!r}; known: {known}",
                    type="unknown_capability",
                )
                for u in unknown
            ],
        )
    profile = await stores.users.set_capabilities(user.user_id, names)
    await audit.record(AuditAction.CHANGE, "capabilities", count=len(profile.capabilities))
    return profile


@router.delete("/me")
async def erase_me(user: CurrentUser, stores: StoresDep, client: ClientDep) -> ErasureReceipt:
    """Erase this user: running turns, threads and reminder timers are terminated (best
    effort), then memories with their vectors, then the user and, by cascade, every row of
    theirs (tokens included: this token answers 401 afterwards), their audit log included.
    Answers, and keeps, an anonymous receipt: a random id, the time and counts per kind."""
    audit = AuditLog(stores.pool)
    erased = await audit.counts(user.user_id)
    reminders = await stores.reminders.list(user.user_id, status="pending")
    timers = [reminder_workflow_id(r.reminder_id) for r in reminders]
    erased["workflows_terminated"] = await gateway.terminate_user_workflows(
        client, user.user_id, also=timers
    )
    await stores.memories.delete_user(user.user_id)
    await stores.users.delete_user(user.user_id)
    erased["users"] = 1
    # Crypto-shredding: without their data keys, their Temporal histories decode for no one.
    erased["data_keys"] = await destroy_user_keys(client, stores.pool, user.user_id)
    return await audit.receipt(erased)

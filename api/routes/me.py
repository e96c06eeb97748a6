"""The user themself: `GET /v1/me` (profile), `PUT /v1/me/capabilities` (connected
capabilities), `DELETE /v1/me` (erases everything of theirs)."""

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, Field

from api import gateway
from api.deps import ClientDep, CurrentUser, StoresDep
from api.errors import ERROR_RESPONSES, ApiError, ErrorDetail
from memoir.models import UserProfile
from memoir.models.names import reminder_workflow_id
from memoir.models.plan import CAPABILITY_FAMILIES, unknown_capabilities

router = APIRouter(prefix="/v1", tags=["me"], responses=ERROR_RESPONSES)


class CapabilitiesUpdate(BaseModel):
    """The whole set of connected capability families (replaces the current one)."""

    capabilities: list[str] = Field(
        description="Capability families to connect: " + ", ".join(CAPABILITY_FAMILIES) + "."
    )


@router.get("/me")
async def get_me(user: CurrentUser) -> UserProfile:
    """This user's profile, with the capability families they have connected."""
    return user


@router.put("/me/capabilities")
async def put_capabilities(
    body: CapabilitiesUpdate, user: CurrentUser, stores: StoresDep
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
    return await stores.users.set_capabilities(user.user_id, names)


@router.delete("/me", status_code=status.HTTP_204_NO_CONTENT)
async def erase_me(user: CurrentUser, stores: StoresDep, client: ClientDep) -> Response:
    """Erase this user: running turns, threads and reminder timers are terminated (best
    effort), then memories with their vectors, then the user and, by cascade, every row of
    theirs (tokens included: this token answers 401 afterwards)."""
    reminders = await stores.reminders.list(user.user_id, status="pending")
    timers = [reminder_workflow_id(r.reminder_id) for r in reminders]
    await gateway.terminate_user_workflows(client, user.user_id, also=timers)
    await stores.memories.delete_user(user.user_id)
    await stores.users.delete_user(user.user_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

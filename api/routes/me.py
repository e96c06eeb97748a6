"""The user themself: `DELETE /v1/me` erases everything of theirs."""

from fastapi import APIRouter, Response, status

from api import gateway
from api.deps import ClientDep, CurrentUser, StoresDep
from api.errors import ERROR_RESPONSES
from memoir.models.names import reminder_workflow_id

router = APIRouter(prefix="/v1", tags=["me"], responses=ERROR_RESPONSES)


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

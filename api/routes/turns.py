"""Turns: what a turn is doing or did."""

from fastapi import APIRouter

from api import gateway
from api.deps import Audit, ClientDep, CurrentUser
from api.errors import ERROR_RESPONSES, not_found
from memoir.audit import AuditAction
from memoir.models import TurnStatus, TurnView

router = APIRouter(prefix="/v1", tags=["turns"], responses=ERROR_RESPONSES)


@router.get("/turns/{turn_id}")
async def get_turn(turn_id: str, user: CurrentUser, client: ClientDep, audit: Audit) -> TurnView:
    """A turn's status, stage, classification, pending request, reply and actions."""
    if not gateway.owns_turn(user.user_id, turn_id):
        raise not_found(f"No turn {turn_id}.")
    view = await gateway.turn_view(client, turn_id)
    if view is not None:
        await audit.record(AuditAction.READ, "turn", turn_id)
        return view
    thread_id = turn_id.split(":")[2]
    stage = await gateway.queued_stage(client, user.user_id, thread_id, turn_id)
    if stage is None:
        raise not_found(f"No turn {turn_id}.")
    await audit.record(AuditAction.READ, "turn", turn_id)
    return TurnView(turn_id=turn_id, status=TurnStatus.RUNNING, stage=stage)

"""Ingest: chat messages and emails go to their thread workflow by update-with-start."""

from datetime import UTC, datetime

from fastapi import APIRouter, status
from pydantic import ValidationError

from api import gateway
from api.deps import Audit, ClientDep, CurrentUser, SettingsDep
from api.emails import EmailIn, incoming_email
from api.errors import ERROR_RESPONSES, from_validation_error
from api.schemas import ChatMessageIn, EmailAccepted
from memoir.audit import AuditAction
from memoir.models import RouteResult, RouteStatus

router = APIRouter(prefix="/v1", tags=["ingest"], responses=ERROR_RESPONSES)


@router.post("/messages", status_code=status.HTTP_202_ACCEPTED)
async def post_message(
    body: ChatMessageIn,
    user: CurrentUser,
    client: ClientDep,
    settings: SettingsDep,
    audit: Audit,
) -> RouteResult:
    """Send a chat message to its thread; answers how the thread routed it."""
    try:
        message = body.incoming(user.user_id)
    except ValidationError as err:
        raise from_validation_error(err) from err
    routed = await gateway.submit_message(client, settings, message)
    await _audit_message(audit, body.message_id, routed)
    return routed


async def _audit_message(audit: Audit, message_id: str, routed: RouteResult) -> None:
    """A chat message is a submission, or the answer to the request its thread was waiting on."""
    if routed.status is RouteStatus.ROUTED_TO_PENDING:
        await audit.record(
            AuditAction.ANSWER,
            "hitl_request",
            routed.turn_id,
            via="chat",
            message_id=message_id,
            accepted=routed.reply is None,
        )
        return
    await audit.record(AuditAction.SUBMIT, "message", routed.turn_id, status=routed.status.value)


@router.post("/emails", status_code=status.HTTP_202_ACCEPTED)
async def post_email(
    email: EmailIn,
    user: CurrentUser,
    client: ClientDep,
    settings: SettingsDep,
    audit: Audit,
) -> EmailAccepted:
    """Send an email (Gmail-API or mock shape) to its thread; answers the turn it started."""
    try:
        message = incoming_email(user.user_id, email, received_at=datetime.now(UTC))
    except ValidationError as err:
        raise from_validation_error(err) from err
    routed = await gateway.submit_message(client, settings, message)
    await audit.record(AuditAction.SUBMIT, "email", routed.turn_id, status=routed.status.value)
    return EmailAccepted(turn_id=routed.turn_id, status=routed.status)

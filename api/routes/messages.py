"""Ingest: chat messages and emails go to their thread workflow by update-with-start."""

from datetime import UTC, datetime

from fastapi import APIRouter, status
from pydantic import ValidationError

from api import gateway
from api.deps import ClientDep, CurrentUser, SettingsDep
from api.emails import EmailIn, incoming_email
from api.errors import ERROR_RESPONSES, from_validation_error
from api.schemas import ChatMessageIn, EmailAccepted
from memoir.models import Channel, IncomingMessage, RouteResult

router = APIRouter(prefix="/v1", tags=["ingest"], responses=ERROR_RESPONSES)


@router.post("/messages", status_code=status.HTTP_202_ACCEPTED)
async def post_message(
    body: ChatMessageIn, user: CurrentUser, client: ClientDep, settings: SettingsDep
) -> RouteResult:
    """Send a chat message to its thread; answers how the thread routed it."""
    message = IncomingMessage(
        user_id=user.user_id,
        thread_id=body.thread_id,
        message_id=body.message_id,
        channel=Channel.CHAT,
        text=body.text,
        received_at=datetime.now(UTC),
    )
    return await gateway.submit_message(client, settings, message)


@router.post("/emails", status_code=status.HTTP_202_ACCEPTED)
async def post_email(
    email: EmailIn, user: CurrentUser, client: ClientDep, settings: SettingsDep
) -> EmailAccepted:
    """Send an email (Gmail-API or mock shape) to its thread; answers the turn it started."""
    try:
        message = incoming_email(user.user_id, email, received_at=datetime.now(UTC))
    except ValidationError as err:
        raise from_validation_error(err) from err
    routed = await gateway.submit_message(client, settings, message)
    return EmailAccepted(turn_id=routed.turn_id, status=routed.status)

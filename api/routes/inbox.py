"""The inbox: pending human-in-the-loop requests, as JSON and as a small HTML page."""

import base64
import hashlib
import re
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Body, status
from fastapi.responses import HTMLResponse

from api import gateway
from api.deps import Audit, ClientDep, CurrentUser
from api.errors import CONFLICT_RESPONSE, ERROR_RESPONSES, ApiError, not_found
from api.schemas import AgentInboxAnswer, AnswerAccepted
from memoir.audit import ACTION_OF_RESPONSE, AuditAction
from memoir.models import AnswerSource, HitlAnswer, HitlRequest
from memoir.models.answers import InvalidAnswer, interpret_answer

router = APIRouter(prefix="/v1", tags=["inbox"], responses=ERROR_RESPONSES)
page_router = APIRouter(include_in_schema=False)


@router.get("/inbox")
async def list_inbox(user: CurrentUser, client: ClientDep, audit: Audit) -> list[HitlRequest]:
    """The pending requests of this user, soonest expiry first."""
    pending = await gateway.pending_requests(client, user.user_id)
    await audit.record(AuditAction.READ, "inbox", count=len(pending))
    return pending


def _expired(request: HitlRequest) -> bool:
    expires_at = request.expires_at
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=UTC)
    return expires_at <= datetime.now(UTC)


@router.post("/inbox/{hitl_id}", status_code=status.HTTP_202_ACCEPTED, responses=CONFLICT_RESPONSE)
async def answer_request(
    hitl_id: str,
    response: Annotated[AgentInboxAnswer, Body()],
    user: CurrentUser,
    client: ClientDep,
    audit: Audit,
) -> AnswerAccepted:
    """Answer a pending request with an Agent Inbox `HumanResponse` (alone or as a list of one):
    404 unknown, 409 not pending or expired, 422 invalid answer."""
    turn_id = hitl_id.rsplit(":", 1)[0]
    if ":" not in hitl_id or not gateway.owns_turn(user.user_id, turn_id):
        raise not_found(f"No request {hitl_id}.")
    request = await gateway.current_request(client, turn_id)
    if request is None or request.hitl_id != hitl_id:
        message = f"Request {hitl_id} is not pending (answered or expired)."
        raise ApiError(409, "not_pending", message)
    if _expired(request):
        raise ApiError(409, "expired", f"Request {hitl_id} expired at {request.expires_at}.")
    answer = HitlAnswer(hitl_id=hitl_id, response=response, source=AnswerSource.INBOX)
    try:
        interpret_answer(request, answer)
    except InvalidAnswer as err:
        raise ApiError(422, "invalid_answer", str(err)) from err
    await gateway.send_answer(client, turn_id, answer)
    await audit.record(ACTION_OF_RESPONSE[response.type], "hitl_request", hitl_id)
    return AnswerAccepted(hitl_id=hitl_id)


@cache
def _page() -> str:
    return (resources.files("api") / "templates" / "inbox.html").read_text(encoding="utf-8")


def _inline_hashes(page: str, tag: str) -> str:
    """CSP source hashes ('sha256-...') of the page's inline `<tag>` blocks."""
    blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.DOTALL)
    digests = (base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in blocks)
    return " ".join(f"'sha256-{d}'" for d in digests)


@cache
def _page_headers() -> dict[str, str]:
    """A Content-Security-Policy that runs only the page's own script and style: should a
    request's text ever reach the DOM as HTML, its scripts, handlers and javascript: links stay
    dead."""
    page = _page()
    policy = (
        "default-src 'none'; "
        f"script-src {_inline_hashes(page, 'script')}; "
        f"style-src {_inline_hashes(page, 'style')}; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


@page_router.get("/inbox", response_class=HTMLResponse)
async def inbox_page() -> HTMLResponse:
    """The inbox page: paste a token, see pending requests, answer them."""
    return HTMLResponse(_page(), headers=_page_headers())

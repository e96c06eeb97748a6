"""The audit log: `GET /v1/audit` lists the caller's own entries, newest first."""

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import CurrentUser, StoresDep
from api.errors import ERROR_RESPONSES
from api.schemas_audit import AuditPage
from memoir.audit import AuditLog

router = APIRouter(prefix="/v1", tags=["audit"], responses=ERROR_RESPONSES)

Limit = Annotated[int, Query(ge=1, le=200, description="Most entries on the page.")]
Cursor = Annotated[
    int | None,
    Query(ge=1, le=2**63 - 1, description="The `next_cursor` of the previous page."),
]


@router.get("/audit")
async def list_audit(
    user: CurrentUser, stores: StoresDep, limit: Limit = 50, cursor: Cursor = None
) -> AuditPage:
    """Who read, changed, approved or rejected what of this user's, when and from where.
    Listing the log is not itself logged."""
    entries = await AuditLog(stores.pool).entries(user.user_id, limit=limit, before=cursor)
    next_cursor = entries[-1].audit_id if len(entries) == limit else None
    return AuditPage(items=entries, next_cursor=next_cursor)

"""Bodies of `GET /v1/audit` and of `DELETE /v1/me` (the erasure receipt)."""

from pydantic import BaseModel, Field

from memoir.audit import AuditEntry, ErasureReceipt


class AuditPage(BaseModel):
    """The caller's audit entries, newest first."""

    items: list[AuditEntry]
    next_cursor: int | None = Field(
        description="Pass as `cursor` for the next (older) page; null on the last page."
    )


__all__ = ["AuditEntry", "AuditPage", "ErasureReceipt"]

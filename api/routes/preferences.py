"""Preference profiles (seed 000): the current version, its history with diffs, and rollback."""

from fastapi import APIRouter

from api.deps import Audit, CurrentUser, StoresDep
from api.errors import ERROR_RESPONSES, not_found
from api.schemas_memory import PreferenceHistory, PreferenceOut, PreferenceVersionOut, RollbackIn
from memoir.audit import AuditAction
from memoir.models import PREFERENCE_NAMESPACES
from memoir.stores import PreferenceVersion, Stores
from memoir.stores.preferences import diff

router = APIRouter(prefix="/v1", tags=["preferences"], responses=ERROR_RESPONSES)


async def _current(stores: Stores, user_id: str, namespace: str) -> PreferenceVersion:
    """The current version (the default is written on first read); 404 for an unknown namespace."""
    if namespace not in PREFERENCE_NAMESPACES:
        valid = ", ".join(PREFERENCE_NAMESPACES)
        raise not_found(f"No preference namespace {namespace!r}; valid ones: {valid}.")
    return await stores.preferences.current(user_id, namespace)


@router.get("/preferences/{namespace}")
async def get_preferences(
    namespace: str, user: CurrentUser, stores: StoresDep, audit: Audit
) -> PreferenceOut:
    """The current profile: its text, version and the decision that wrote it."""
    current = await _current(stores, user.user_id, namespace)
    await audit.record(AuditAction.READ, "preferences", namespace, version=current.version)
    return PreferenceOut.of(current)


@router.get("/preferences/{namespace}/history")
async def preference_history(
    namespace: str, user: CurrentUser, stores: StoresDep, audit: Audit
) -> PreferenceHistory:
    """Every version, newest first, each with a unified diff against the one before it."""
    await _current(stores, user.user_id, namespace)
    versions = await stores.preferences.history(user.user_id, namespace)
    previous = [*versions[1:], None]
    await audit.record(AuditAction.READ, "preference_history", namespace, count=len(versions))
    return PreferenceHistory(
        namespace=namespace,
        versions=[
            PreferenceVersionOut(
                **PreferenceOut.of(version).model_dump(),
                diff=None if before is None else diff(before, version),
            )
            for version, before in zip(versions, previous, strict=True)
        ],
    )


@router.post("/preferences/{namespace}/rollback")
async def rollback_preferences(
    namespace: str, body: RollbackIn, user: CurrentUser, stores: StoresDep, audit: Audit
) -> PreferenceOut:
    """Make an older version current again, as a new version (`decision: rollback:{version}`)."""
    await _current(stores, user.user_id, namespace)
    try:
        restored = await stores.preferences.rollback(user.user_id, namespace, body.version)
    except LookupError as err:
        raise not_found(f"{namespace} has no version {body.version}.") from err
    await audit.record(
        AuditAction.ROLLBACK,
        "preferences",
        namespace,
        to_version=body.version,
        version=restored.version,
    )
    return PreferenceOut.of(restored)

"""FastAPI dependencies: settings, the Temporal client, the stores, the bearer-token user and
the caller's audit trail. All are `async def`: FastAPI runs a plain `def` dependency in a worker
thread, a thread hand-off per dependency per request."""

import math
import time
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from api.errors import ApiError
from memoir.audit import AuditAction, AuditLog, DetailValue, Via, token_id
from memoir.models import UserProfile
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.stores.users import hash_token

# The limiter forgets buckets that are full again once it holds this many.
MAX_BUCKETS = 10_000

_bearer = HTTPBearer(auto_error=False, description="A user's API token: `Bearer <token>`.")


async def get_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


async def get_client(request: Request) -> Client:
    """The Temporal client (503 until the lifespan has connected it)."""
    client: Client | None = request.app.state.client
    if client is None:
        raise ApiError(503, "not_ready", "The API is not connected to Temporal yet.")
    return client


async def get_stores(request: Request) -> Stores:
    """The stores (503 until the lifespan has opened the database)."""
    stores: Stores | None = request.app.state.stores
    if stores is None:
        raise ApiError(503, "not_ready", "The API has not opened its database yet.")
    return stores


SettingsDep = Annotated[Settings, Depends(get_settings)]
ClientDep = Annotated[Client, Depends(get_client)]
StoresDep = Annotated[Stores, Depends(get_stores)]


def _unauthorized(reason: str, error: str | None = None) -> ApiError:
    challenge = 'Bearer realm="memoir"' + (f', error="{error}"' if error else "")
    return ApiError(401, "unauthorized", reason, headers={"WWW-Authenticate": challenge})


@dataclass
class RateLimiter:
    """A token bucket per API token: `burst` requests at once, refilled at `per_minute`."""

    per_minute: int
    burst: int
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def retry_after(self, key: str, now: float | None = None) -> int | None:
        """Take one request from `key`'s bucket: None if allowed, else seconds until one is."""
        if self.per_minute <= 0:
            return None
        now = time.monotonic() if now is None else now
        rate = self.per_minute / 60.0
        capacity = float(max(self.burst, 1))
        level, then = self.buckets.get(key, (capacity, now))
        level = min(capacity, level + (now - then) * rate)
        if level >= 1.0:
            self.buckets[key] = (level - 1.0, now)
            self._prune(now, rate, capacity)
            return None
        self.buckets[key] = (level, now)
        return max(1, math.ceil((1.0 - level) / rate))

    def _prune(self, now: float, rate: float, capacity: float) -> None:
        """Forget the buckets that have refilled (they start full anyway) when there are many."""
        if len(self.buckets) <= MAX_BUCKETS:
            return
        for key, (level, then) in list(self.buckets.items()):
            if level + (now - then) * rate >= capacity:
                del self.buckets[key]


def rate_limiter(request: Request) -> RateLimiter:
    """The app's limiter (made on first use from its settings)."""
    state = request.app.state
    limiter: RateLimiter | None = getattr(state, "rate_limiter", None)
    if limiter is None:
        settings: Settings = state.settings
        limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)
        state.rate_limiter = limiter
    return limiter


def _throttle(request: Request, token: str) -> None:
    """429 with `Retry-After` when this token has used up its bucket."""
    wait = rate_limiter(request).retry_after(hash_token(token))
    if wait is not None:
        message = f"Too many requests with this token; retry in {wait} s."
        raise ApiError(429, "too_many_requests", message, headers={"Retry-After": str(wait)})


async def current_user(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    stores: StoresDep,
) -> UserProfile:
    """The user whose token is in `Authorization: Bearer <token>`; 401 with a reason otherwise,
    429 with `Retry-After` when the token is over its rate limit."""
    if credentials is None:
        if "authorization" not in request.headers:
            raise _unauthorized("Missing 'Authorization: Bearer <token>' header.")
        raise _unauthorized(
            "The Authorization header must be 'Bearer <token>'.", error="invalid_request"
        )
    _throttle(request, credentials.credentials)
    user = await stores.users.user_for_token(credentials.credentials)
    if user is None:
        raise _unauthorized("The bearer token is not valid.", error="invalid_token")
    return user


CurrentUser = Annotated[UserProfile, Depends(current_user)]


@dataclass(frozen=True, slots=True)
class AuditTrail:
    """The audit log bound to the caller: their user, their token and the route they called."""

    log: AuditLog
    user_id: str
    token_ref: str | None
    route: str | None

    async def record(
        self,
        action: AuditAction,
        resource_kind: str,
        resource_id: str | None = None,
        *,
        via: Via = "api",
        **details: DetailValue,
    ) -> None:
        """Append an entry by this caller."""
        await self.log.record(
            self.user_id,
            action,
            resource_kind,
            resource_id,
            token_ref=self.token_ref,
            via=via,
            route=self.route,
            details=details,
        )


def route_name(request: Request) -> str | None:
    """'METHOD /path/{param}': the matched route's template, not the concrete path."""
    route = request.scope.get("route")
    path = getattr(route, "path", None)
    return f"{request.method} {path}" if path else None


async def audit_trail(
    request: Request,
    user: CurrentUser,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    stores: StoresDep,
) -> AuditTrail:
    """The caller's audit trail (`current_user` has already checked the token)."""
    token_ref = token_id(credentials.credentials) if credentials is not None else None
    return AuditTrail(AuditLog(stores.pool), user.user_id, token_ref, route_name(request))


Audit = Annotated[AuditTrail, Depends(audit_trail)]

"""FastAPI dependencies: settings, the Temporal client, the stores and the bearer-token user."""

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from api.errors import ApiError
from memoir.models import UserProfile
from memoir.settings import Settings
from memoir.stores import Stores

_bearer = HTTPBearer(auto_error=False, description="A user's API token: `Bearer <token>`.")


def get_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


def get_client(request: Request) -> Client:
    """The Temporal client (503 until the lifespan has connected it)."""
    client: Client | None = request.app.state.client
    if client is None:
        raise ApiError(503, "not_ready", "The API is not connected to Temporal yet.")
    return client


def get_stores(request: Request) -> Stores:
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


async def current_user(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    stores: StoresDep,
) -> UserProfile:
    """The user whose token is in `Authorization: Bearer <token>`; 401 with a reason otherwise."""
    if credentials is None:
        if "authorization" not in request.headers:
            raise _unauthorized("Missing 'Authorization: Bearer <token>' header.")
        raise _unauthorized(
            "The Authorization header must be 'Bearer <token>'.", error="invalid_request"
        )
    user = await stores.users.user_for_token(credentials.credentials)
    if user is None:
        raise _unauthorized("The bearer token is not valid.", error="invalid_token")
    return user


CurrentUser = Annotated[UserProfile, Depends(current_user)]

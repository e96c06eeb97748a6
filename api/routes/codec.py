"""The codec server for the Temporal Web UI and CLI (Temporal's codec-server protocol):
`POST /codec/encode` and `POST /codec/decode` take and return `{"payloads": [...]}` (protobuf JSON:
base64 metadata values and data). A user decodes only their own payloads: another user's, and the
system's, come back still encoded; one whose key was destroyed (the user was erased) answers 410.

Auth: the API's bearer token, or the `memoir_codec` cookie that `POST /codec/login` sets for the
Web UI (its codec setting "Include cross-origin credentials"). CORS with credentials answers only
the Web UI's origins (`MEMOIR_CODEC_CORS_ORIGINS`).
"""

import base64
import binascii
import html
from typing import Annotated
from urllib.parse import parse_qs

from cryptography.exceptions import InvalidTag
from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send
from temporalio.api.common.v1 import Payload

from api.deps import ClientDep, StoresDep
from api.errors import ERROR_RESPONSES, ApiError
from memoir.audit import AuditAction, AuditLog
from memoir.crypto import KeyDestroyedError
from memoir.models import UserProfile
from memoir.settings import Settings
from temporal.codec import (
    EncryptionCodec,
    is_encrypted,
    open_payload,
    payload_key_id,
    payload_user,
)

PREFIX = "/codec"
COOKIE = "memoir_codec"
router = APIRouter(prefix=PREFIX, tags=["codec"], responses=ERROR_RESPONSES)
_bearer = HTTPBearer(auto_error=False, description="A user's API token: `Bearer <token>`.")


class JsonPayload(BaseModel):
    """A Temporal `Payload` in protobuf JSON: metadata values and data are base64."""

    metadata: dict[str, str] = Field(default_factory=dict)
    data: str = ""


class JsonPayloads(BaseModel):
    """Temporal's `Payloads` message in protobuf JSON."""

    payloads: list[JsonPayload]


def _b64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, "validation_error", f"{where} is not valid base64.") from None


def to_payload(item: JsonPayload, index: int) -> Payload:
    """A protobuf payload; 422 naming the field when a value is not base64."""
    metadata = {k: _b64(v, f"payloads.{index}.metadata.{k}") for k, v in item.metadata.items()}
    return Payload(metadata=metadata, data=_b64(item.data, f"payloads.{index}.data"))


def to_json(payload: Payload) -> JsonPayload:
    return JsonPayload(
        metadata={k: base64.b64encode(v).decode() for k, v in payload.metadata.items()},
        data=base64.b64encode(payload.data).decode(),
    )


async def _codec(client: ClientDep) -> EncryptionCodec:
    codec = client.data_converter.payload_codec
    if not isinstance(codec, EncryptionCodec):
        raise ApiError(503, "codec_not_configured", "This API's Temporal client does not encrypt.")
    return codec


CodecDep = Annotated[EncryptionCodec, Depends(_codec)]


async def codec_user(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    stores: StoresDep,
) -> UserProfile:
    """The user of the bearer token, else of the `memoir_codec` cookie; 401 otherwise."""
    token = credentials.credentials if credentials else request.cookies.get(COOKIE)
    if not token:
        raise ApiError(
            401,
            "unauthorized",
            "Send 'Authorization: Bearer <token>' or log in at /codec/login.",
            headers={"WWW-Authenticate": 'Bearer realm="memoir"'},
        )
    user = await stores.users.user_for_token(token)
    if user is None:
        raise ApiError(
            401,
            "unauthorized",
            "The token is not valid.",
            headers={"WWW-Authenticate": 'Bearer realm="memoir", error="invalid_token"'},
        )
    return user


CodecUser = Annotated[UserProfile, Depends(codec_user)]


@router.post("/encode")
async def encode(body: JsonPayloads, user: CodecUser, codec: CodecDep) -> JsonPayloads:
    """Encrypt the payloads under this user's data key."""
    payloads = [to_payload(p, i) for i, p in enumerate(body.payloads)]
    encoded = await codec.encode_for(user.user_id, payloads)
    return JsonPayloads(payloads=[to_json(p) for p in encoded])


@router.post("/decode", responses={410: {"description": "The payloads' key was destroyed."}})
async def decode(
    body: JsonPayloads, user: CodecUser, codec: CodecDep, stores: StoresDep
) -> JsonPayloads:
    """Decrypt this user's payloads; others' stay as they are (still encrypted)."""
    payloads = [to_payload(p, i) for i, p in enumerate(body.payloads)]
    decoded = [await _decode(codec, user, p) for p in payloads]
    opened = sum(1 for before, after in zip(payloads, decoded, strict=True) if after is not before)
    if opened:
        # a read of their history's contents (the Web UI decodes often: reads within a minute
        # are one entry)
        await AuditLog(stores.pool).record(
            user.user_id,
            AuditAction.READ,
            "history_payloads",
            route="POST /codec/decode",
            details={"payloads": opened},
        )
    return JsonPayloads(payloads=[to_json(p) for p in decoded])


async def _decode(codec: EncryptionCodec, user: UserProfile, payload: Payload) -> Payload:
    """The payload decrypted if it is this user's, else as it came."""
    if not is_encrypted(payload) or payload_user(payload) != user.user_id:
        return payload
    key_id = payload_key_id(payload)
    try:
        key = await codec.keyring.key(key_id)
    except KeyDestroyedError:
        raise ApiError(
            410, "key_destroyed", f"The key {key_id} was destroyed: this data was erased."
        ) from None
    if key.owner != user.user_id:
        return payload
    try:
        return open_payload(payload, key)
    except InvalidTag:
        raise ApiError(422, "invalid_payload", "The payload does not authenticate.") from None


# ----- the Web UI: a cookie to send with "Include cross-origin credentials" -----


def cors_origins(settings: Settings) -> list[str]:
    """`MEMOIR_CODEC_CORS_ORIGINS`, else the Web UI on this machine."""
    if settings.codec_cors_origins:
        return [o.strip().rstrip("/") for o in settings.codec_cors_origins.split(",") if o.strip()]
    port = settings.temporal_ui_port
    return [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]


_LOGIN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Memoir codec login</title>
</head><body><h1>Decode your payloads in the Temporal Web UI</h1>
<p>Paste your Memoir API token. The Web UI's codec server setting needs
"Include cross-origin credentials" on.</p>
<form method="post" action="{action}"><input type="hidden" name="next" value="{next}">
<label>Token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Log in</button></form></body></html>"""


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
async def login_page(request: Request, next: str = "") -> HTMLResponse:
    """A form that takes a token and sets the codec cookie."""
    page = _LOGIN_PAGE.format(action=html.escape(f"{PREFIX}/login"), next=html.escape(next))
    return HTMLResponse(page)


@router.post("/login", include_in_schema=False)
async def login(request: Request, stores: StoresDep) -> Response:
    """Check the form's token, set it as an HttpOnly cookie for /codec, go back to the UI."""
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    token = (form.get("token") or [""])[0].strip()
    if await stores.users.user_for_token(token) is None:
        raise ApiError(401, "unauthorized", "The token is not valid.")
    origins = cors_origins(request.app.state.settings)
    wanted = (form.get("next") or [""])[0]
    target = wanted if any(wanted.startswith(o + "/") for o in origins) else origins[0] + "/"
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="lax", path=PREFIX)
    return response


@router.post("/logout", status_code=204, include_in_schema=False)
async def logout() -> Response:
    """Forget the codec cookie."""
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path=PREFIX)
    return response


class CodecCORS:
    """CORS with credentials for /codec only, for the given origins; other paths untouched."""

    def __init__(self, app: ASGIApp, origins: list[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_credentials=True,
            allow_methods=["POST", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "X-Namespace"],
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(PREFIX + "/"):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)

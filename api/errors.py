"""One error shape for every 4xx and 5xx the API answers.

Every error body is::

    {"error": {"code": "validation_error",
               "message": "Invalid request: text: String should have at least 1 character",
               "details": [{"field": "text", "reason": "String should have at least 1 character",
                            "type": "string_too_short"}]}}

- ``code``: a stable, machine-readable string (``malformed_json``, ``validation_error``,
  ``unsupported_media_type``, ``unauthorized``, ``not_found``, ``method_not_allowed``,
  ``not_pending``, ``expired``, ``invalid_answer``, ``body_too_large``, ``rejected``,
  ``temporal_unavailable``, ``internal_error`` ...).
- ``message``: one sentence a person can read.
- ``details``: per-field problems (``field`` is dotted: ``text``, ``path.turn_id``, ``gmail.to``);
  empty when the error is not about fields.
"""

from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg import OperationalError
from psycopg_pool import PoolTimeout
from pydantic import BaseModel, Field, ValidationError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from temporalio.service import RPCError

MAX_BODY_BYTES = 1024 * 1024  # 1 MiB


class ErrorDetail(BaseModel):
    """One problem with one field of the request."""

    field: str | None = None
    reason: str
    type: str | None = None


class ErrorInfo(BaseModel):
    """What went wrong: a stable code, a readable message and per-field details."""

    code: str
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    """The body of every error response."""

    error: ErrorInfo


class ApiError(Exception):
    """An error a route raises on purpose; rendered as `ErrorResponse` with its status."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: list[ErrorDetail] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers


def not_found(message: str) -> ApiError:
    """A 404 with code `not_found`."""
    return ApiError(status.HTTP_404_NOT_FOUND, "not_found", message)


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: list[ErrorDetail] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """Render an error in the one shape."""
    body = ErrorResponse(error=ErrorInfo(code=code, message=message, details=details or []))
    return JSONResponse(body.model_dump(mode="json"), status_code=status_code, headers=headers)


def field_name(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """A pydantic error location as a dotted field name; body fields lose the `body.` prefix."""
    parts = [str(part) for part in loc]
    if parts[:1] == ["body"] and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts)


def details_of(errors: Any) -> list[ErrorDetail]:
    """Pydantic / FastAPI error dicts as `ErrorDetail`s (the input values are never echoed)."""
    return [
        ErrorDetail(field=field_name(e["loc"]), reason=e["msg"], type=e["type"]) for e in errors
    ]


def validation_failed(details: list[ErrorDetail]) -> ApiError:
    """A 422 listing each field and why it was refused."""
    summary = "; ".join(f"{d.field}: {d.reason}" if d.field else d.reason for d in details[:5])
    more = f" (and {len(details) - 5} more)" if len(details) > 5 else ""
    return ApiError(422, "validation_error", f"Invalid request: {summary}{more}", details)


def from_validation_error(exc: ValidationError) -> ApiError:
    """A model built by a route from request data did not validate: 422 with its fields."""
    return validation_failed(details_of(exc.errors(include_input=False)))


_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
}

# For `responses=` on routers, so the OpenAPI schema documents the error shape.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse, "description": description}
    for code, description in {
        400: "Malformed JSON.",
        401: "Missing or invalid bearer token.",
        404: "Not found (or belongs to another user).",
        413: "Body larger than 1 MiB.",
        415: "Body is not JSON.",
        422: "Validation failed; `details` lists each field and reason.",
        429: "Too many requests with this token; `Retry-After` says in how many seconds to retry.",
    }.items()
}
ERROR_RESPONSES[429]["headers"] = {
    "Retry-After": {
        "description": "Seconds until a request is allowed.",
        "schema": {"type": "integer"},
    }
}
# For a route that can conflict with the state of its resource (e.g. an answered request).
CONFLICT_RESPONSE: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorResponse, "description": "Not pending any more (answered or expired)."}
}


def _too_large() -> JSONResponse:
    message = f"The request body is larger than {MAX_BODY_BYTES} bytes (1 MiB)."
    return error_response(413, "body_too_large", message)


class BodyLimitMiddleware:
    """413 for a body over `MAX_BODY_BYTES`: at once by Content-Length, else as the bytes arrive."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse or count the body of an HTTP request; pass everything else through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            await _too_large()(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                # Raised inside the body read: FastAPI re-raises it to `_on_http_error`.
                raise StarletteHTTPException(413)
            return message

        await self.app(scope, counting_receive, send)


async def _on_api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status_code, exc.code, exc.message, exc.details, exc.headers)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    for error in errors:
        if error["type"] == "json_invalid":
            reason = error.get("ctx", {}).get("error", "invalid JSON")
            position = error["loc"][1] if len(error["loc"]) > 1 else "?"
            message = f"Malformed JSON body: {reason} (at character {position})."
            detail = ErrorDetail(field="body", reason=reason, type="json_invalid")
            return error_response(400, "malformed_json", message, [detail])
        if tuple(error["loc"]) == ("body",) and isinstance(error.get("input"), bytes):
            message = "The body must be JSON, sent with 'Content-Type: application/json'."
            return error_response(415, "unsupported_media_type", message)
    api_error = validation_failed(details_of(errors))
    return await _on_api_error(request, api_error)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _CODES.get(exc.status_code, "error" if exc.status_code >= 500 else "bad_request")
    if exc.status_code == 404:
        message = f"No route for {request.method} {request.url.path}."
    elif exc.status_code == 413:
        return _too_large()
    else:
        message = str(exc.detail)
    headers = dict(exc.headers) if exc.headers else None
    return error_response(exc.status_code, code, message, headers=headers)


async def _on_temporal_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RPCError)
    message = f"Temporal did not answer as expected ({exc.status.name}): {exc.message}"
    return error_response(503, "temporal_unavailable", message)


async def _on_database_error(request: Request, exc: Exception) -> JSONResponse:
    """The database is down or out of connections: 503 naming the error's kind, not a 500
    (the connection details stay in the server log and `/healthz`)."""
    message = f"The database is unavailable ({type(exc).__name__}); retry later."
    return error_response(503, "database_unavailable", message)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    return error_response(500, "internal_error", "Internal error; see the server log.")


def install_error_handlers(app: FastAPI) -> None:
    """Make every error, expected or not, answer in the `ErrorResponse` shape; limit body size."""
    app.add_middleware(BodyLimitMiddleware)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(RPCError, _on_temporal_error)
    app.add_exception_handler(OperationalError, _on_database_error)
    app.add_exception_handler(PoolTimeout, _on_database_error)
    app.add_exception_handler(Exception, _on_unexpected)

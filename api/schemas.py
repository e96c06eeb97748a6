"""Request and response bodies of the HTTP API that are not shared models."""

import re
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from memoir.models import Channel, HumanResponse, IncomingMessage, RouteStatus
from memoir.models.messages import ID_PATTERN, MAX_TEXT_CHARS

_ID = re.compile(ID_PATTERN)


def check_id(value: str) -> str:
    """Refuse ids that cannot live inside a workflow id (`thread:{user}:{thread}`)."""
    if not _ID.fullmatch(value):  # `match` would let a trailing newline through `$`
        raise PydanticCustomError("id_invalid", "must not contain ':', '/' or whitespace")
    return value


def not_blank(value: str | None) -> str | None:
    """Refuse text that is only whitespace."""
    if value is not None and not value.strip():
        raise PydanticCustomError("blank", "must not be blank")
    return value


ThreadId = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(check_id)]
MessageId = Annotated[str, Field(min_length=1, max_length=300), AfterValidator(check_id)]


class ChatMessageIn(BaseModel):
    """`POST /v1/messages`: one chat message on a thread."""

    model_config = ConfigDict(extra="forbid")

    thread_id: ThreadId
    message_id: MessageId
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise PydanticCustomError("blank", "must not be blank")
        return text

    def incoming(self, user_id: str) -> IncomingMessage:
        """The message as the thread takes it, received now."""
        return IncomingMessage(
            user_id=user_id,
            thread_id=self.thread_id,
            message_id=self.message_id,
            channel=Channel.CHAT,
            text=self.text,
            received_at=datetime.now(UTC),
        )


def one_response(value: object) -> object:
    """Agent Inbox's `sendHumanResponse` posts a list of one `HumanResponse`: take its item."""
    if isinstance(value, list):
        if len(value) != 1:
            raise PydanticCustomError("one_response", "a list must hold exactly one response")
        return value[0]
    return value


# What Agent Inbox posts: one `HumanResponse`, or a list of one.
AgentInboxAnswer = Annotated[
    HumanResponse,
    BeforeValidator(one_response),
    Field(description="An Agent Inbox HumanResponse, alone or as a list of one."),
]


class EmailAccepted(BaseModel):
    """`POST /v1/emails` answer: the turn the email started (or joined) and how it was routed."""

    turn_id: str | None
    status: RouteStatus


class AnswerAccepted(BaseModel):
    """`POST /v1/inbox/{hitl_id}` answer: the signal was sent to the waiting turn."""

    hitl_id: str
    status: Literal["accepted"] = "accepted"


class HealthCheck(BaseModel):
    """One dependency's health: whether it answered in time, and why not."""

    ok: bool
    error: str | None = None


class Health(BaseModel):
    """`GET /healthz` answer: 200 when every check passes, 503 naming the one that failed."""

    status: Literal["ok", "unhealthy"]
    checks: dict[str, HealthCheck] = Field(
        description="'database' (a SELECT 1 through the app's pool) and 'temporal' (its health "
        "service), each within a short timeout."
    )

"""Incoming emails: the Gmail-API and mock shapes of seed 000, normalised to `EmailMessage`."""

import hashlib
import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag

from api.schemas import check_id
from memoir.models import Channel, EmailMessage, IncomingMessage
from memoir.models.messages import MAX_TEXT_CHARS

# "email-" + the id must still fit the 200 characters of a thread id.
EmailId = Annotated[str, Field(min_length=1, max_length=194), AfterValidator(check_id)]

_GMAIL_ONLY = frozenset({"from", "body", "threadId"})
_MOCK_ONLY = frozenset({"author", "email_thread"})
_UNSAFE = re.compile(r"[\s:/]+")


class GmailEmail(BaseModel):
    """Gmail-API shape: `{id, threadId?, from, to, subject, body}`."""

    model_config = ConfigDict(extra="forbid")

    id: EmailId
    thread_id: str | None = Field(default=None, alias="threadId", min_length=1, max_length=194)
    sender: str = Field(alias="from")
    to: str
    subject: str
    body: str = Field(max_length=MAX_TEXT_CHARS)


class MockEmail(BaseModel):
    """Mock / Studio shape: `{author, to, subject, email_thread, id?}`."""

    model_config = ConfigDict(extra="forbid")

    author: str
    to: str
    subject: str
    email_thread: str = Field(max_length=MAX_TEXT_CHARS)
    id: EmailId | None = None


def _email_shape(value: Any) -> str | None:
    """`gmail` or `mock` by the fields only one shape has; None when neither or both."""
    if isinstance(value, GmailEmail | MockEmail):
        return "gmail" if isinstance(value, GmailEmail) else "mock"
    if not isinstance(value, dict):
        return None
    gmail, mock = bool(_GMAIL_ONLY & value.keys()), bool(_MOCK_ONLY & value.keys())
    if gmail == mock:
        return None
    return "gmail" if gmail else "mock"


EmailIn = Annotated[
    Annotated[GmailEmail, Tag("gmail")] | Annotated[MockEmail, Tag("mock")],
    Discriminator(
        _email_shape,
        custom_error_type="email_shape",
        custom_error_message=(
            "expected exactly one email shape: Gmail {id, threadId?, from, to, subject, body} "
            "or mock {author, to, subject, email_thread, id?}"
        ),
    ),
]


def mock_email_id(email: MockEmail) -> str:
    """A stable id for a mock email without one: `mock-` + sha256(author, subject, body)[:16]."""
    key = "\n".join((email.author, email.subject, email.email_thread))
    return "mock-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def normalise_email(email: GmailEmail | MockEmail) -> EmailMessage:
    """Either shape as the `EmailMessage` triage works on (seed 000 `parse_gmail`)."""
    if isinstance(email, GmailEmail):
        return EmailMessage(
            email_id=email.id,
            author=email.sender,
            to=email.to,
            subject=email.subject,
            body=email.body,
        )
    return EmailMessage(
        email_id=email.id or mock_email_id(email),
        author=email.author,
        to=email.to,
        subject=email.subject,
        body=email.email_thread,
    )


def email_thread_id(email: GmailEmail | MockEmail, email_id: str) -> str:
    """`email-` + the Gmail thread id (or the email id), with ':', '/' and spaces replaced."""
    key = email.thread_id if isinstance(email, GmailEmail) and email.thread_id else email_id
    return "email-" + _UNSAFE.sub("-", key)


def incoming_email(
    user_id: str, email: GmailEmail | MockEmail, received_at: datetime | None = None
) -> IncomingMessage:
    """The message the thread workflow routes; raises `ValidationError` if it does not fit."""
    message = normalise_email(email)
    return IncomingMessage(
        user_id=user_id,
        thread_id=email_thread_id(email, message.email_id),
        message_id=message.email_id,
        channel=Channel.EMAIL,
        text=message.markdown(),
        email=message,
        received_at=received_at,
    )

"""Messages coming in: chat messages, emails, and what the thread workflow answers."""

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# Ids end up inside workflow ids (`thread:{user}:{thread}`), so they may not hold ':' or spaces.
ID_PATTERN = r"^[^\s:/]+$"
MAX_TEXT_CHARS = 20_000


class Channel(StrEnum):
    CHAT = "chat"
    EMAIL = "email"


class EmailMessage(BaseModel):
    """An email in the normalised shape triage works on (seed 000 `parse_gmail`)."""

    model_config = ConfigDict(extra="forbid")

    email_id: str
    author: str
    to: str
    subject: str
    body: str

    def markdown(self) -> str:
        """The email as Agent Inbox markdown (seed 000 `format_gmail_markdown`)."""
        return (
            f"**Subject**: {self.subject}\n**From**: {self.author}\n**To**: {self.to}\n\n"
            f"{self.body}\n\n---"
        )


class IncomingMessage(BaseModel):
    """One message for a thread: the unit the thread workflow routes."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(pattern=ID_PATTERN, max_length=200)
    thread_id: str = Field(pattern=ID_PATTERN, max_length=200)
    message_id: str = Field(pattern=ID_PATTERN, max_length=300)
    channel: Channel = Channel.CHAT
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    email: EmailMessage | None = None
    received_at: datetime | None = None
    # Who said it, when the message carries a name of its own (an imported conversation's
    # participant); None: the email's sender, else the user. Kept on the message record.
    speaker_name: str | None = Field(None, min_length=1, max_length=200)


class RouteStatus(StrEnum):
    STARTED = "started"
    ROUTED_TO_PENDING = "routed_to_pending"
    DUPLICATE = "duplicate"
    STALE_REPLY = "stale_reply"


class RouteResult(BaseModel):
    """What the thread workflow decided for a message (returned by the `submit` update)."""

    turn_id: str | None
    status: RouteStatus
    reply: str | None = None


class ThreadInput(BaseModel):
    user_id: str
    thread_id: str
    channel: Channel = Channel.CHAT
    hitl_ttl_seconds: int = 300
    heartbeat_seconds: float = 15.0
    idle_hours: float = 12.0
    max_replans: int = 3
    turns_per_run: int = Field(500, gt=0, description="Continue-as-new after this many turns.")
    # Carried across continue-as-new.
    seen: dict[str, str] = Field(default_factory=dict)
    queue: list[IncomingMessage] = Field(default_factory=list)


class ThreadState(BaseModel):
    """What the `state` query of a thread workflow returns."""

    running_turn_id: str | None
    pending_hitl_id: str | None
    queued_turn_ids: list[str]
    seen_count: int

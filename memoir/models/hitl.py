"""Human in the loop: a superset of the Agent Inbox `HumanInterrupt` and its `HumanResponse`."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class HitlKind(StrEnum):
    NOTIFY = "notify"
    APPROVAL = "approval"
    CLARIFICATION = "clarification"
    INTENT_UNCLEAR = "intent_unclear"
    MISSING_FIELDS = "missing_fields"
    DISAMBIGUATION = "disambiguation"


class ExpectedInput(StrEnum):
    YES_NO = "yes_no"
    SINGLE_CHOICE = "single_choice"
    MULTI_CHOICE = "multi_choice"
    FREE_TEXT = "free_text"
    HUMAN_RESPONSE = "human_response"


class ActionRequest(BaseModel):
    action: str
    args: dict[str, Any] = Field(default_factory=dict)


class HitlConfig(BaseModel):
    allow_ignore: bool = True
    allow_respond: bool = True
    allow_edit: bool = False
    allow_accept: bool = False


class HitlOption(BaseModel):
    id: str
    label: str


class HitlRequest(BaseModel):
    hitl_id: str
    turn_id: str
    thread_id: str
    user_id: str
    kind: HitlKind
    action_request: ActionRequest
    config: HitlConfig
    description: str
    question: str
    expected_input: ExpectedInput
    options: list[HitlOption] = Field(default_factory=list)
    created_at: datetime
    expires_at: datetime
    error: str | None = None
    attempts: int = 0


class HumanResponse(BaseModel):
    """Agent Inbox answer: accept, edit (args: ActionRequest), ignore, response (args: text)."""

    type: Literal["accept", "edit", "ignore", "response"]
    args: None | str | ActionRequest = None


class AnswerSource(StrEnum):
    CHAT = "chat"
    INBOX = "inbox"


class HitlAnswer(BaseModel):
    hitl_id: str
    response: HumanResponse
    source: AnswerSource = AnswerSource.INBOX
    message_id: str | None = None


class Decision(BaseModel):
    """A validated answer, in the terms the turn acts on."""

    type: Literal["accept", "edit", "ignore", "response", "choice", "text"]
    text: str | None = None
    choices: list[str] = Field(default_factory=list)
    edited: ActionRequest | None = None


class HitlOutcome(BaseModel):
    hitl_id: str
    kind: HitlKind
    status: Literal["answered", "expired"]
    decision: Decision | None = None

"""Email triage (seed 000 `triage_router`): ignore, notify or respond, with reasoning."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.emails import recipients
from memoir.llm.offline_triage import TriageEmail, group_addressed, pattern, triage_offline
from memoir.llm.prompts import DEFAULT_BACKGROUND, TRIAGE_SYSTEM_PROMPT, TRIAGE_USER_PROMPT
from memoir.llm.providers import ask
from memoir.models import EmailMessage, TriageDecision

__all__ = ["TriageQuery", "reader_address", "triage_email", "triage_messages"]


class TriageQuery(BaseModel):
    """Everything the triage prompt shows: the email, the user's triage preferences (general
    rules and learned lessons) and the background."""

    author: str
    to: str
    subject: str
    body: str
    instructions: str = Field(description="The user's triage_preferences text.")
    background: str = DEFAULT_BACKGROUND
    reader: str = Field(default="", description="The user's own email address, when known.")

    @classmethod
    def of(
        cls,
        email: EmailMessage,
        instructions: str,
        background: str = DEFAULT_BACKGROUND,
        reader: str = "",
    ) -> TriageQuery:
        """The request for `email` under the user's triage preferences."""
        fields = email.model_dump(include={"author", "to", "subject", "body"})
        return cls(**fields, instructions=instructions, background=background, reader=reader)


def reader_address(email: EmailMessage) -> str | None:
    """The user's own address, as an email addressed to them alone shows it: its one
    recipient, when that is no group or role mailbox (all-staff@, team@, info@)."""
    listed = recipients(email.to)
    if len(listed) != 1 or group_addressed(
        TriageEmail(email.author, email.to, email.subject, email.body)
    ):
        return None
    return None if pattern("role_local_parts").search(listed[0].local) else listed[0].address


def triage_messages(query: TriageQuery) -> list[BaseMessage]:
    """The system and user messages of seed 000's router, rendered."""
    reader = f"\nThe user's own email address: {query.reader}." if query.reader else ""
    system = TRIAGE_SYSTEM_PROMPT.format(
        background=query.background + reader, triage_instructions=query.instructions
    )
    user = TRIAGE_USER_PROMPT.format(
        author=query.author, to=query.to, subject=query.subject, email_thread=query.body
    )
    return [SystemMessage(content=system), HumanMessage(content=user)]


async def triage_email(
    llm: BaseChatModel,
    email: EmailMessage,
    triage_instructions: str,
    *,
    background: str = DEFAULT_BACKGROUND,
    reader: str = "",
) -> TriageDecision:
    """Classify `email` following the user's triage preferences (`triage_instructions`);
    `reader`: the user's own address, which tells whether they are only copied."""
    query = TriageQuery.of(email, triage_instructions, background, reader)
    return await ask(llm, TriageDecision, query, render=triage_messages, offline=triage_offline)

"""Email triage (seed 000 `triage_router`): ignore, notify or respond, with reasoning."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.llm.offline_triage import triage_offline
from memoir.llm.prompts import DEFAULT_BACKGROUND, TRIAGE_SYSTEM_PROMPT, TRIAGE_USER_PROMPT
from memoir.llm.providers import ask
from memoir.models import EmailMessage, TriageDecision

__all__ = ["TriageQuery", "triage_email", "triage_messages"]


class TriageQuery(BaseModel):
    """Everything the triage prompt shows: the email, the user's triage preferences (general
    rules and learned lessons) and the background."""

    author: str
    to: str
    subject: str
    body: str
    instructions: str = Field(description="The user's triage_preferences text.")
    background: str = DEFAULT_BACKGROUND

    @classmethod
    def of(
        cls, email: EmailMessage, instructions: str, background: str = DEFAULT_BACKGROUND
    ) -> TriageQuery:
        """The request for `email` under the user's triage preferences."""
        fields = email.model_dump(include={"author", "to", "subject", "body"})
        return cls(**fields, instructions=instructions, background=background)


def triage_messages(query: TriageQuery) -> list[BaseMessage]:
    """The system and user messages of seed 000's router, rendered."""
    system = TRIAGE_SYSTEM_PROMPT.format(
        background=query.background, triage_instructions=query.instructions
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
) -> TriageDecision:
    """Classify `email` following the user's triage preferences (`triage_instructions`)."""
    query = TriageQuery.of(email, triage_instructions, background)
    return await ask(llm, TriageDecision, query, render=triage_messages, offline=triage_offline)

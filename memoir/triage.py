"""Email triage (seed 000 `triage_router`): ignore, notify or respond, with reasoning."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memoir.llm import structured
from memoir.llm.prompts import DEFAULT_BACKGROUND, TRIAGE_SYSTEM_PROMPT, TRIAGE_USER_PROMPT
from memoir.models import EmailMessage, TriageDecision

__all__ = ["triage_email", "triage_messages"]


def triage_messages(
    email: EmailMessage, triage_instructions: str, background: str = DEFAULT_BACKGROUND
) -> list[BaseMessage]:
    """The system and user messages of seed 000's router, rendered."""
    system = TRIAGE_SYSTEM_PROMPT.format(
        background=background, triage_instructions=triage_instructions
    )
    user = TRIAGE_USER_PROMPT.format(
        author=email.author, to=email.to, subject=email.subject, email_thread=email.body
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
    runnable = structured(llm, TriageDecision)
    return await runnable.ainvoke(triage_messages(email, triage_instructions, background))

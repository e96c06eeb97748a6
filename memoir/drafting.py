"""Drafting notes and handoff reports from the session (seed 004: Note Drafting, Handoff Report
Generation): the templates, the typed request, the structured answer and the rendered prompt.

The model sees only the thread's session history and a template of sections; it copies what
the session states into the sections and leaves the others empty. `memoir.tools.drafts` asks
through `memoir.llm.providers.ask` (offline: `memoir.llm.offline_writer`) and renders the
result, marked "DRAFT for review".
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.llm.prompts import DRAFT_SYSTEM_PROMPT, DRAFT_USER_PROMPT
from memoir.text import message_text, one_line

DraftKind = Literal["notes", "handoff"]
NONE_STATED = "None stated in this session."
DRAFT_MARKER = "DRAFT for review"


@cache
def draft_table() -> dict[str, Any]:
    """`memoir/data/draft_sections.yaml`: each kind's sections, hints and filing cues."""
    text = (resources.files("memoir") / "data" / "draft_sections.yaml").read_text("utf-8")
    table: dict[str, Any] = yaml.safe_load(text)
    return table


# Section name -> what belongs there (shown to the model), in the draft's order.
TEMPLATES: dict[DraftKind, dict[str, str]] = {
    kind: {name: draft_table()["templates"][kind][name]["hint"] for name in names}
    for kind, names in draft_table()["order"].items()
}


class DraftSection(BaseModel):
    name: str = Field(description="One section name of the template, exactly as given.")
    sentences: list[str] = Field(
        default_factory=list,
        description="Sentences stated in the session that belong here; empty if none.",
    )


class DraftSections(BaseModel):
    """The draft's content, section by section, taken only from the session."""

    sections: list[DraftSection] = Field(default_factory=list)


class Said(BaseModel):
    """One message of the session."""

    role: Literal["user", "assistant"]
    text: str


class DraftRequest(BaseModel):
    """What the drafter sees: the kind of draft, its topic and the session."""

    kind: DraftKind
    topic: str
    session: list[Said] = Field(default_factory=list)


def draft_request(kind: DraftKind, topic: str, history: list[BaseMessage]) -> DraftRequest:
    """The request over the session `history` (tool messages left out)."""
    session: list[Said] = []
    for message in history:
        text = one_line(message_text(message), 2000)
        if text and isinstance(message, HumanMessage):
            session.append(Said(role="user", text=text))
        elif text and isinstance(message, AIMessage):
            session.append(Said(role="assistant", text=text))
    return DraftRequest(kind=kind, topic=topic, session=session)


def draft_messages(request: DraftRequest) -> list[BaseMessage]:
    """The rendered drafting prompt."""
    what = "a note (SOAP-style)" if request.kind == "notes" else "a handoff report"
    sections = "\n".join(f"- {name}: {hint}" for name, hint in TEMPLATES[request.kind].items())
    session = "\n".join(f"- {s.role}: {s.text}" for s in request.session) or "(empty)"
    system = DRAFT_SYSTEM_PROMPT.format(what=what, sections=sections, topic=request.topic)
    return [
        SystemMessage(content=system),
        HumanMessage(content=DRAFT_USER_PROMPT.format(session=session)),
    ]

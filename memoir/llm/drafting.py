"""Drafting notes and handoff reports from the session (seed 004: Note Drafting, Handoff Report
Generation): the typed request, the prompt, the structured answer, and the offline drafter.

The model sees only the thread's session history and a template of sections; it copies what
the session states into the sections and leaves the others empty. The offline drafter files
each sentence of the user's own messages under one section by the cues of
`memoir/data/draft_sections.yaml` and never writes anything else; `memoir.tools.drafts` renders
the result, marked "DRAFT for review".
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.embeddings import Embedder
from memoir.llm._text import message_text
from memoir.llm.prompts import one_line

DraftKind = Literal["notes", "handoff"]
NONE_STATED = "None stated in this session."
DRAFT_MARKER = "DRAFT for review"


@cache
def _table() -> dict[str, Any]:
    text = (resources.files("memoir") / "data" / "draft_sections.yaml").read_text("utf-8")
    table: dict[str, Any] = yaml.safe_load(text)
    return table


# Section name -> what belongs there (shown to the model), in the draft's order.
TEMPLATES: dict[DraftKind, dict[str, str]] = {
    kind: {name: _table()["templates"][kind][name]["hint"] for name in _table()["order"][kind]}
    for kind in ("notes", "handoff")
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


DRAFT_SYSTEM_PROMPT = """You draft {what} for review from a conversation session.

# Rules
- Use ONLY information explicitly stated in the Session below. Do not invent, infer, or add
  anything that is not there; no outside knowledge, no assumptions, no records.
- Put each stated fact under the one section of the template where it belongs; keep the
  wording of the session (light trimming only).
- A section with nothing stated in the session stays empty (an empty list of sentences).
- Ignore the request to write the draft itself, greetings and questions.

## Sections
{sections}

## Topic
{topic}"""

DRAFT_USER_PROMPT = """## Session
{session}"""


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


def user_sentences(request: DraftRequest) -> list[str]:
    """The statements of the user's own messages: requests, small talk and questions left out."""
    skip = _table()["skip"]
    out: list[str] = []
    for said in request.session:
        if said.role != "user":
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", said.text.strip()):
            sentence = sentence.strip()
            if (
                len(sentence.split()) < 2
                or sentence.endswith("?")
                or re.search(skip["request"], sentence, re.I)
                or re.match(skip["small_talk"], sentence, re.I)
            ):
                continue
            out.append(sentence if sentence[-1] in ".!" else sentence + ".")
    return out


def _section_for(sentence: str, kind: DraftKind) -> str:
    """The first section, in template order, whose cue the sentence matches; else the default."""
    sections: dict[str, dict[str, Any]] = _table()["templates"][kind]
    for name, section in sections.items():
        if section.get("cue") and re.search(section["cue"], sentence, re.I):
            return name
    return next(name for name, section in sections.items() if section.get("default"))


def draft_offline(request: DraftRequest, embedder: Embedder | None = None) -> DraftSections:
    """Each user sentence under its section; every section of the template is given."""
    filed: dict[str, list[str]] = {name: [] for name in TEMPLATES[request.kind]}
    for sentence in user_sentences(request):
        filed[_section_for(sentence, request.kind)].append(sentence)
    return DraftSections(
        sections=[DraftSection(name=name, sentences=sentences) for name, sentences in filed.items()]
    )

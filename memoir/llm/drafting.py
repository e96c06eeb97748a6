"""Drafting notes and handoff reports from the session (seed 004: Note Drafting, Handoff Report
Generation): the fixed templates, the prompt, the structured answer, and the offline skill.

The model sees only the thread's session history and a template of sections; it copies what
the session states into the sections and leaves the others empty. The offline skill files each
sentence of the user's own messages under one section by keywords and never writes anything
else; `memoir.tools.drafts` renders the result, marked "DRAFT for review".
"""

from __future__ import annotations

import re
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoir.llm._text import human_texts, message_text, system_text
from memoir.llm.offline import register_offline_skill
from memoir.llm.prompts import one_line

DraftKind = Literal["notes", "handoff"]

# Section name -> what belongs there (shown to the model).
TEMPLATES: dict[DraftKind, dict[str, str]] = {
    "notes": {
        "Subjective": "what was reported or said (complaints, concerns, history)",
        "Objective": "observations and measurements (vitals, numbers, findings)",
        "Assessment": "judgements stated in the session (stable, improving, likely …)",
        "Plan": "next steps, follow-ups and decisions",
    },
    "handoff": {
        "Key Events": "what happened during the session",
        "Pending Tasks": "what still has to be done, by whom and when",
        "Critical Alerts": "allergies, risks, urgent or abnormal items",
    },
}
NONE_STATED = "None stated in this session."
DRAFT_MARKER = "DRAFT for review"


class DraftSection(BaseModel):
    name: str = Field(description="One section name of the template, exactly as given.")
    sentences: list[str] = Field(
        default_factory=list,
        description="Sentences stated in the session that belong here; empty if none.",
    )


class DraftSections(BaseModel):
    """The draft's content, section by section, taken only from the session."""

    sections: list[DraftSection] = Field(default_factory=list)


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


def session_lines(history: list[BaseMessage]) -> list[str]:
    """The session as '- user: …' / '- assistant: …' lines (tool messages left out)."""
    lines: list[str] = []
    for message in history:
        text = one_line(message_text(message), 2000)
        if not text:
            continue
        if isinstance(message, HumanMessage):
            lines.append(f"- user: {text}")
        elif isinstance(message, AIMessage):
            lines.append(f"- assistant: {text}")
    return lines


def draft_messages(kind: DraftKind, topic: str, history: list[BaseMessage]) -> list[BaseMessage]:
    """The rendered drafting prompt for `kind` over the session `history`."""
    what = "a note (SOAP-style)" if kind == "notes" else "a handoff report"
    sections = "\n".join(f"- {name}: {hint}" for name, hint in TEMPLATES[kind].items())
    session = "\n".join(session_lines(history)) or "(empty)"
    return [
        SystemMessage(
            content=DRAFT_SYSTEM_PROMPT.format(what=what, sections=sections, topic=topic)
        ),
        HumanMessage(content=DRAFT_USER_PROMPT.format(session=session)),
    ]


# ----- offline skill -----------------------------------------------------------------------

_I = re.IGNORECASE
_REQUEST = re.compile(
    r"\b(?:draft|write|prepare|make|take|generate|create)\b.{0,40}\b(?:notes?|hand\s*-?\s*off|"
    r"report|summary)\b|\bhand\s*-?\s*off\b|\bsummari[sz]e\b",
    _I,
)
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok(?:ay)?|great|cool|bye|good (?:morning|evening))\b", _I
)
_RULES: dict[str, re.Pattern[str]] = {
    # notes
    "Plan": re.compile(
        r"\b(?:plan\w*|will|next|follow[- ]?up|re-?check|continue|schedul\w*|tomorrow|"
        r"need(?:s)? to|should|going to|to do|order\w*|refer\w*)\b",
        _I,
    ),
    "Objective": re.compile(
        r"\b(?:bp|blood pressure|temp(?:erature)?|pulse|heart rate|hr|spo2|o2|sat(?:uration)?s?|"
        r"respirat\w*|weight|glucose|measured|observed|vitals?|labs?)\b|"
        r"\d+\s*(?:/\s*\d+|mg|ml|mmhg|bpm|°|%|kg)",
        _I,
    ),
    "Assessment": re.compile(
        r"\b(?:assess\w*|appears?|seems?|likely|stable|improv\w*|worsen\w*|diagnos\w*|"
        r"consistent with|suspect\w*|impression)\b",
        _I,
    ),
    # handoff
    "Critical Alerts": re.compile(
        r"\b(?:allerg\w*|critical|urgent|alert|fall risk|warning|danger\w*|severe|emergency|"
        r"dnr|sepsis|bleed\w*|abnormal|immediately|asap)\b|!",
        _I,
    ),
    "Pending Tasks": re.compile(
        r"\b(?:pending|awaiting|waiting|to ?do|outstanding|due|remind\w*|will|next|"
        r"follow[- ]?up|re-?check|tomorrow|need(?:s)? to|should|still has to|has to|must)\b",
        _I,
    ),
}
_DEFAULT_SECTION = {"notes": "Subjective", "handoff": "Key Events"}
_ORDER = {
    "notes": ["Plan", "Objective", "Assessment"],
    "handoff": ["Critical Alerts", "Pending Tasks"],
}


def _section_names(system: str) -> list[str]:
    m = re.search(r"^## Sections\n(.*?)(?:\n\n|\n## |\Z)", system, re.S | re.M)
    block = m.group(1) if m else ""
    return [
        line[2:].split(":", 1)[0].strip() for line in block.splitlines() if line.startswith("- ")
    ]


def user_sentences(session: str) -> list[str]:
    """The statements of the user's own messages in a rendered session, request lines dropped."""
    out: list[str] = []
    for line in session.splitlines():
        if not line.startswith("- user: "):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line.removeprefix("- user: ").strip()):
            sentence = sentence.strip()
            if (
                len(sentence.split()) < 2
                or sentence.endswith("?")
                or _REQUEST.search(sentence)
                or _SMALL_TALK.match(sentence)
            ):
                continue
            out.append(sentence if sentence[-1] in ".!" else sentence + ".")
    return out


def draft_offline(messages: list[BaseMessage]) -> DraftSections:
    """Each user sentence under the first section whose keywords it has, else the default."""
    system = system_text(messages)
    names = _section_names(system)
    kind: DraftKind = "handoff" if "Key Events" in names else "notes"
    filed: dict[str, list[str]] = {name: [] for name in names}
    for sentence in user_sentences("\n".join(human_texts(messages))):
        target = next(
            (n for n in _ORDER[kind] if n in filed and _RULES[n].search(sentence)),
            _DEFAULT_SECTION[kind],
        )
        filed.setdefault(target, []).append(sentence)
    return DraftSections(
        sections=[DraftSection(name=name, sentences=sentences) for name, sentences in filed.items()]
    )


register_offline_skill("DraftSections", lambda messages, _model: draft_offline(messages))

"""The `notes.draft` and `handoff.draft` capabilities: drafts from the session history only.

The draft is built from the thread's session history (`load_session_history`) and nothing
else, by the chat model over a fixed template (SOAP-like sections for notes; Key Events /
Pending Tasks / Critical Alerts for a handoff). It is marked "DRAFT for review"; an empty
section reads "None stated in this session.". Whatever the model writes, a sentence whose
words are not in the session is dropped (a draft never carries a fact the session lacks).
"""

from __future__ import annotations

import re
from typing import cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from memoir.drafting import (
    DRAFT_MARKER,
    NONE_STATED,
    TEMPLATES,
    DraftKind,
    DraftSections,
    draft_messages,
    draft_request,
)
from memoir.llm.offline_writer import draft_offline
from memoir.llm.providers import ask
from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution
from memoir.stores.interactions import InteractionStore
from memoir.text import message_text
from memoir.tools.base import failure

HISTORY_LIMIT = 50
# Share of a sentence's words that must appear in the session for it to stay in the draft.
GROUNDED_SHARE = 0.8

_TITLES: dict[DraftKind, str] = {"notes": "Note", "handoff": "Handoff report"}
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 or w.isdigit()}


def grounded(sentence: str, session_words: set[str]) -> bool:
    """Whether (nearly) every word of `sentence` was said in the session."""
    words = _words(sentence)
    if not words:
        return False
    return len(words & session_words) / len(words) >= GROUNDED_SHARE


def render_draft(kind: DraftKind, topic: str, sections: dict[str, list[str]]) -> list[str]:
    """The draft's lines: the marked heading, then one 'Section: …' line per template section."""
    lines = [f"{DRAFT_MARKER} — {_TITLES[kind]}: {topic}"]
    for name in TEMPLATES[kind]:
        lines.append(f"{name}: {' '.join(sections.get(name, [])) or NONE_STATED}")
    return lines


class DraftTool:
    """Serves both families: `notes.draft` and `handoff.draft`."""

    def __init__(
        self, interactions: InteractionStore, llm: BaseChatModel, history_limit: int = HISTORY_LIMIT
    ) -> None:
        self._interactions = interactions
        self._llm = llm
        self._history_limit = history_limit

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        topic = str(request.step.args.get("topic") or "this conversation").strip()
        return StepResolution(step_id=request.step.id, status="resolved", args={"topic": topic})

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        family, _, action = request.step.capability.partition(".")
        if family not in TEMPLATES or action != "draft":
            return failure(request, f"{family} has no action '{action}'")
        kind = cast(DraftKind, family)
        topic = str(request.args.get("topic") or "this conversation").strip()
        history = await self._interactions.load_session_history(
            request.user_id, request.thread_id, self._history_limit
        )
        sections = await self.sections(kind, topic, history)
        lines = render_draft(kind, topic, sections)
        return ExecutionResult(
            step_id=request.step.id,
            capability=request.step.capability,
            success=True,
            summary="\n".join(lines),
            data={
                "kind": kind,
                "draft": "\n".join(lines),
                "heading": lines[0],
                "lines": lines[1:],
                "sections": sections,
            },
        )

    async def sections(
        self, kind: DraftKind, topic: str, history: list[BaseMessage]
    ) -> dict[str, list[str]]:
        """The model's sections for the template, each sentence checked against the session."""
        request = draft_request(kind, topic, history)
        parsed = await ask(
            self._llm, DraftSections, request, render=draft_messages, offline=draft_offline
        )
        session_words = _words(" ".join(message_text(m) for m in history))
        out: dict[str, list[str]] = {name: [] for name in TEMPLATES[kind]}
        for section in parsed.sections:
            if section.name not in out:
                continue
            for sentence in section.sentences:
                text = sentence.strip()
                if text and grounded(text, session_words) and text not in out[section.name]:
                    out[section.name].append(text)
        return out

"""Offline writers over typed requests. The reply writer (seed 002, `WriterRequest`) words the
turn's steps, already sentences, with `memoir/data/writer_replies.yaml`. The drafter (seed 004
notes and handoffs, `DraftRequest`) files the user's own sentences under the sections of
`memoir/data/draft_sections.yaml`, and nothing else is ever written."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage

from memoir.embeddings import Embedder
from memoir.llm.offline_facts import extract_facts
from memoir.llm.offline_preferences import read_response_style
from memoir.llm.tables import table
from memoir.text import message_text, sentence

if TYPE_CHECKING:
    from memoir.drafting import DraftKind, DraftRequest, DraftSections
    from memoir.responder import ResultLine, WriterRequest

__all__ = ["conversation_reply", "draft_offline", "reply_to_messages", "write_reply_offline"]


_WORDS: dict[str, Any] = table("writer_replies")


def _one(result: ResultLine) -> str:
    if result.capability == "knowledge.search" and result.items:
        # Grounded and attributed: each passage as "According to {document}: {text}".
        return "\n\n".join(result.items)
    text = result.text.rstrip(".:")
    if result.items:
        return f"{text}:\n" + "\n".join(f"- {i}" for i in result.items)
    if not result.ok:
        return _WORDS["sorry"].format(text=text)
    if result.capability in _WORDS["changing"]:
        return _WORDS["done"].format(text=text)
    return sentence(text)


def _bullet(result: ResultLine, mark: bool) -> str:
    prefix = ("Done: " if result.ok else "Failed: ") if mark else ""
    line = f"- {prefix}{result.text.rstrip('.')}"
    return line + "".join(f"\n  - {i}" for i in result.items)


def _several(results: list[ResultLine]) -> str:
    """A head saying how many steps worked, then a bullet each (marked when only some did)."""
    ok, total = sum(1 for r in results if r.ok), len(results)
    head = "all_done" if ok == total else "partly" if ok else "none_worked"
    lines = [_WORDS[head].format(ok=ok, total=total)]
    return "\n".join(lines + [_bullet(r, head == "partly") for r in results])


_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WHEN_WHO = re.compile(r"^\[(?P<day>\d{4}-\d{2}-\d{2})(?:,\s*(?P<who>[^\]]+))?\]\s*")


def _spoken(bullet: str) -> str:
    """A memory bullet as said to the user: no "[sources: …]" tail, a message's "[date, who]"
    head as "on {date}, {who} said: ", a fact's "[date]" dropped."""
    text = re.sub(r"\s*\[sources?:[^\]]*\]\s*$", "", bullet.lstrip("- "))
    return _WHEN_WHO.sub(lambda h: f"on {h['day']}, {h['who']} said: " if h["who"] else "", text)


def _hello(name: str, tone: str | None) -> str:
    greetings: dict[str, str] = _WORDS["hello"]
    wanted = [t for t in re.split(r"\s+and\s+", tone or "") if t in greetings]
    return greetings[wanted[0] if wanted else "default"].format(name=f" {name}" if name else "")


def conversation_reply(
    text: str, name: str = "", memory: list[str] | None = None, tone: str | None = None
) -> str:
    """A short, polite answer to a message that needed no tool (the first matching entry)."""
    low = text.lower().strip()
    for entry in _WORDS["conversation"]:
        if re.search(entry["pattern"], low, re.I):
            return str(entry["reply"]).format(hello=_hello(name, tone))
    if not low.endswith("?") and extract_facts(text):
        return str(_WORDS["fact"])
    words = set(re.findall(r"[a-z']{4,}", low))
    for bullet in memory or []:
        if words & set(re.findall(r"[a-z']{4,}", bullet.lower())):
            return str(_WORDS["remembered"]).format(memory=sentence(_spoken(bullet)))
    return str(_WORDS["fallback"])


def _without_steps(request: WriterRequest, tone: str | None) -> str:
    """A turn that ran nothing: the email left alone or notified, a conversation, or nothing."""
    kind = request.classification.value if request.classification else ""
    email: dict[str, str] = _WORDS["email"]
    if kind in email:
        return email[kind].format(subject=request.email_subject, author=request.email_author)
    if request.intent_type in ("conversation", "meta") or not (request.intent or kind):
        return conversation_reply(request.request, request.name, request.memory, tone)
    return str(_WORDS["nothing"])


def write_reply_offline(request: WriterRequest, embedder: Embedder | None = None) -> str:
    """The turn's message from the request's note, results and intent."""
    tone = read_response_style(request.response_preferences).tone
    parts = [sentence(request.note)] if request.note.strip() else []
    if len(request.results) == 1:
        parts.append(_one(request.results[0]))
    elif request.results:
        parts.append(_several(request.results))
    elif not parts:
        parts.append(_without_steps(request, tone))
    return "\n\n".join(p for p in parts if p)


def reply_to_messages(messages: list[BaseMessage]) -> str:
    """A plain chat call (no typed request): a conversation answer to its last human message."""
    humans = [message_text(m) for m in messages if isinstance(m, HumanMessage)]
    return conversation_reply(humans[-1] if humans else "")


def user_sentences(request: DraftRequest) -> list[str]:
    """The statements of the user's own messages: one-word lines, questions, and what the
    table's `skip` patterns match (requests to draft, small talk) left out."""
    skip = table("draft_sections")["skip"]
    said = (s.strip() for m in request.session if m.role == "user" for s in _SENTENCE.split(m.text))
    return [
        s if s[-1] in ".!" else s + "."
        for s in said
        if len(s.split()) >= 2
        and not s.endswith("?")
        and not any(re.search(p, s, re.I) for p in skip)
    ]


def _section_for(text: str, kind: DraftKind) -> str:
    """The first section, in filing order, whose cue the sentence matches; else the default."""
    sections: dict[str, dict[str, Any]] = table("draft_sections")["templates"][kind]
    for name, section in sections.items():
        if section.get("cue") and re.search(section["cue"], text, re.I):
            return name
    return next(name for name, section in sections.items() if section.get("default"))


def draft_offline(request: DraftRequest, embedder: Embedder | None = None) -> DraftSections:
    """Each user sentence under its section; every section of the template is given."""
    from memoir.drafting import TEMPLATES, DraftSection, DraftSections  # it imports memoir.llm

    filed: dict[str, list[str]] = {name: [] for name in TEMPLATES[request.kind]}
    for said in user_sentences(request):
        filed[_section_for(said, request.kind)].append(said)
    return DraftSections(
        sections=[DraftSection(name=name, sentences=sentences) for name, sentences in filed.items()]
    )

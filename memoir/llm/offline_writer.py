"""Offline response writer: seed 002's ResponseWriterNode over the formatted results.

Reads `REPLY_SYSTEM_PROMPT` / `REPLY_USER_PROMPT`. The formatter (memoir.responder) has already
turned every step into a sentence with dates in the user's timezone; this writer only words the
message: "Done — …" for one change, bullets for several or for lists, failures said plainly,
the Note first, conversation answered politely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from memoir.llm._text import human_texts, sentence, system_text
from memoir.llm.offline_facts import extract_facts
from memoir.llm.prompts import REPLY_SECTIONS, split_sections

CHANGING = {
    "reminders.create",
    "reminders.complete",
    "reminders.delete",
    "email.send",
    "calendar.schedule",
    "calendar.update",
    "calendar.cancel",
}


@dataclass
class ResultLine:
    ok: bool
    capability: str
    text: str
    items: list[str] = field(default_factory=list)


def parse_results(block: str) -> list[ResultLine]:
    """The `## Results` lines: "- ok | capability | sentence", sub-items indented."""
    results: list[ResultLine] = []
    for line in block.splitlines():
        m = re.match(r"^- (ok|failed) \| ([^|]+?) \| (.*)$", line)
        if m:
            results.append(ResultLine(m.group(1) == "ok", m.group(2).strip(), m.group(3).strip()))
        elif re.match(r"^\s+- ", line) and results:
            results[-1].items.append(line.strip()[2:])
    return results


def _one(result: ResultLine) -> str:
    if result.capability == "knowledge.search" and result.items:
        # Grounded and attributed: each passage as "According to {document}: {text}".
        return "\n\n".join(result.items)
    text = result.text.rstrip(".:")
    if result.items:
        return f"{text}:\n" + "\n".join(f"- {i}" for i in result.items)
    if not result.ok:
        return f"Sorry — {text}."
    if result.capability in CHANGING:
        return f"Done — {text}."
    return sentence(text)


def _bullet(result: ResultLine, mark: bool) -> str:
    prefix = ("Done: " if result.ok else "Failed: ") if mark else ""
    line = f"- {prefix}{result.text.rstrip('.')}"
    return line + "".join(f"\n  - {i}" for i in result.items)


def _subject(request: str) -> str:
    m = re.search(r"^\*\*Subject\*\*:[ \t]*(.*)$", request, re.M)
    return m.group(1).strip() if m else ""


def _author(request: str) -> str:
    m = re.search(r"^\*\*From\*\*:[ \t]*(.*)$", request, re.M)
    return m.group(1).strip() if m else ""


def _without_citation(bullet: str) -> str:
    """A memory bullet without its '[sources: …]' tail, for saying it to the user."""
    return re.sub(r"\s*\[sources?:[^\]]*\]\s*$", "", bullet)


_WHEN_WHO = re.compile(r"^\[(?P<day>\d{4}-\d{2}-\d{2})(?:,\s*(?P<who>[^\]]+))?\]\s*")


def _spoken(bullet: str) -> str:
    """A memory bullet as said to the user: no citation; a message's "[date, who]" head as
    "on {date}, {who} said: …", a fact's "[date]" head dropped."""
    text = _without_citation(bullet.lstrip("- "))
    head = _WHEN_WHO.match(text)
    if head is None:
        return text
    said = text[head.end() :]
    if head.group("who"):
        return f"on {head.group('day')}, {head.group('who')} said: {said}"
    return said


def conversation_reply(text: str, name: str = "", memory: list[str] | None = None) -> str:
    """A short, polite answer to a message that needed no tool."""
    low = text.lower().strip()
    hello = f"Hi {name}!" if name else "Hi!"
    if re.search(r"\bwhat can you do\b|^help\W*$|\bwho are you\b|\bwhat are you\b", low):
        return (
            "I'm Memoir, your assistant. I can set, list and complete reminders, send emails "
            "(after you approve them), manage your calendar and search your documents."
        )
    if re.search(r"\b(?:thanks|thank you|thx|cheers|appreciate)\b", low):
        return "You're welcome!"
    if re.match(r"^(?:bye|goodbye|see you|see ya|good night|later|ciao)\b", low):
        return "Bye — talk soon!"
    if re.search(r"\bhow are you\b|\bhow'?s it going\b", low):
        return f"{hello} I'm doing well, thanks for asking. How can I help?"
    if re.match(
        r"^(?:hi|hello|hey|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening))", low
    ):
        return f"{hello} How can I help you today?"
    if re.match(r"^(?:no|nope|no thanks)\b", low):
        return "Okay, I won't do anything then."
    if re.match(
        r"^(?:ok(?:ay)?|cool|great|nice|awesome|got it|sounds good|perfect|alright)\b", low
    ):
        return "Great!"
    if not low.endswith("?") and extract_facts(text):
        return "Got it — I'll remember that."
    words = {w for w in re.findall(r"[a-z']{4,}", low)}
    for bullet in memory or []:
        if words & set(re.findall(r"[a-z']{4,}", bullet.lower())):
            return f"From what I remember: {sentence(_spoken(bullet))}"
    return (
        "I'm not sure I can help with that directly, but I can take care of reminders, emails "
        "and your calendar."
    )


def write_reply_offline(messages: list[BaseMessage]) -> str:
    """The reply for a rendered reply prompt; a conversation answer for anything else."""
    system = system_text(messages)
    humans = human_texts(messages)
    text = system + "\n\n" + "\n\n".join(humans)
    sec = split_sections(text, REPLY_SECTIONS)
    name_match = re.search(r"^Name:\s*(.+)$", sec.get("Profile", ""), re.M)
    name = name_match.group(1).strip() if name_match else ""
    memory = [line[2:] for line in sec.get("Memory", "").splitlines() if line.startswith("- ")]
    if "Results" not in sec:
        return conversation_reply(humans[-1] if humans else "", name, memory)

    parts: list[str] = []
    note = sec.get("Note", "").strip()
    if note:
        parts.append(sentence(note))
    results = parse_results(sec.get("Results", ""))
    intent = sec.get("Intent", "")
    request = sec.get("Request", "")
    if len(results) == 1:
        parts.append(_one(results[0]))
    elif results:
        failed = [r for r in results if not r.ok]
        if not failed:
            parts.append("Done:\n" + "\n".join(_bullet(r, mark=False) for r in results))
        elif len(failed) == len(results):
            parts.append(
                "Sorry — none of it worked:\n" + "\n".join(_bullet(r, mark=False) for r in results)
            )
        else:
            parts.append(
                f"I did part of it ({len(results) - len(failed)} of {len(results)} steps):\n"
                + "\n".join(_bullet(r, mark=True) for r in results)
            )
    elif not note:
        classification = re.search(r"^Classification:\s*(\w+)", intent, re.M)
        kind = classification.group(1) if classification else ""
        subject, author = _subject(request), _author(request)
        if kind == "ignore":
            parts.append(f"I left the email “{subject}” alone: it doesn't need your attention.")
        elif kind == "notify":
            parts.append(f"Heads-up: you got an email from {author} — “{subject}”.")
        elif re.search(r"\((?:conversation|meta)\)", intent) or not intent:
            parts.append(conversation_reply(request, name, memory))
        else:
            parts.append("I didn't do anything this time.")
    return "\n\n".join(p for p in parts if p)

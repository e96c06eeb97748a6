"""Who said a message: a transcript line "Maya: …" names its speaker.

A message relayed from a conversation (an imported chat, the recall eval's "{speaker}: {text}")
starts with the speaker's name and a colon. `split_speaker` returns that name and the rest, so
first-person facts are about Maya, not about the user; a message without one is the user's own.
Labels that also end in a colon ("Note:", "Update:", "Re:", "PS:") are not names. A message
that carries its speaker (`IncomingMessage.speaker_name`) is that person's, prefix or not.
"""

from __future__ import annotations

import re

from memoir.models import IncomingMessage

__all__ = ["message_speaker", "split_speaker"]

_PREFIX = re.compile(r"^\s*(?P<name>[A-Z][\w'’.-]{0,30}(?:\s+[A-Z][\w'’.-]{0,30}){0,2})\s*:\s+")
_LABELS = {
    "note",
    "notes",
    "update",
    "re",
    "fw",
    "fwd",
    "ps",
    "pps",
    "nb",
    "fyi",
    "btw",
    "edit",
    "correction",
    "news",
    "reminder",
    "todo",
    "question",
    "answer",
    "important",
    "subject",
    "summary",
    "context",
    "warning",
    "tip",
    "also",
    "ok",
    "okay",
    "so",
    "well",
    "hi",
    "hey",
    "hello",
    "dear",
    "user",
    "assistant",
    "me",
    "i",
}


def split_speaker(text: str) -> tuple[str | None, str]:
    """("Maya", "I lost my job") for "Maya: I lost my job"; (None, text) when no one is named."""
    m = _PREFIX.match(text)
    if not m:
        return None, text.strip()
    name = m.group("name").strip()
    if name.split()[0].lower().rstrip(".") in _LABELS:
        return None, text.strip()
    return name, text[m.end() :].strip()


def message_speaker(message: IncomingMessage) -> tuple[str | None, str]:
    """(who said it, what they said) of a message: its `speaker_name` when it carries one (the
    "Name: " prefix of that name dropped from the text), else the text's own prefix."""
    named = getattr(message, "speaker_name", None)  # set on relayed conversations' messages
    speaker, text = split_speaker(message.text)
    if isinstance(named, str) and named.strip():
        return named.strip(), text if speaker == named.strip() else message.text.strip()
    return speaker, text

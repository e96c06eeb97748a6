"""Small text helpers shared by the offline skills."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from email.utils import parseaddr
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage


def message_text(message: BaseMessage) -> str:
    """The text of a message, whether its content is a string or a list of blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    texts = [block if isinstance(block, str) else block.get("text") for block in content]
    return "\n".join(text for text in texts if isinstance(text, str))


def human_texts(messages: list[BaseMessage]) -> list[str]:
    """The text of every human message, in order."""
    return [message_text(m) for m in messages if isinstance(m, HumanMessage)]


def email_address(author: str) -> str:
    """The lower-cased address of "Name <addr>" (or the whole string when there is none)."""
    _name, addr = parseaddr(author)
    return (addr or author).strip().lower()


def first_name(author: str) -> str:
    """ "Dan Smith <dan@x.com>" → "Dan"; "dan.smith@x.com" → "Dan"."""
    name, addr = parseaddr(author)
    if name.strip():
        return name.strip().split()[0].strip("\"'")
    local = (addr or author).split("@")[0]
    word = re.split(r"[._+-]", local)[0]
    return word.capitalize() if word else "there"


_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|fw|fwd|aw|tr)\s*:\s*|\[[^\]]*\]\s*)+", re.I)


def normalize_subject(subject: str) -> str:
    """Subject without "Re:", "Fwd:" and "[tag]" prefixes."""
    return _SUBJECT_PREFIX.sub("", subject).strip()


def loads_object(text: str) -> dict[str, Any]:
    """A JSON object, or {} when `text` is not one."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def sentence(text: str) -> str:
    """`text` capitalized and ending with punctuation."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if not text or text[-1] in ".!?…" else text + "."


def swap_words(text: str, swaps: Mapping[str, str]) -> str:
    """`text` with each whole word that is a key of `swaps` (any case) replaced by its value."""
    words = "|".join(map(re.escape, sorted(swaps, key=len, reverse=True)))
    return re.sub(rf"\b(?:{words})\b", lambda m: swaps[m[0].lower()], text, flags=re.I)


_SECOND = {"my": "your", "me": "you", "i": "you", "myself": "yourself", "mine": "yours"}
_SECOND |= {"i'm": "you're", "i've": "you've", "i'll": "you'll"}
_FIRST = {"you": "me", "your": "my", "yourself": "myself", "yours": "mine"}


def second_person(text: str) -> str:
    """ "call my mom" → "call your mom": the user's words, said back to them."""
    return swap_words(text, _SECOND)


def to_first_person(text: str) -> str:
    """ "remind you to call your mom" → "remind me to call my mom" (a proposal, as a request)."""
    return swap_words(text, _FIRST)

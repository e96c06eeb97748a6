"""Plain-text helpers: one line of a text, a sentence's shape, first and second person, a JSON
object in a reply, the text of a chat message.

Used by prompts and memory contexts (one line each), the reply writer and episodic memory (the
user's words said back to them), preference updates (a model's JSON answer), and the offline
provider.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


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


def message_text(message: BaseMessage) -> str:
    """The text of a chat message, whether its content is a string or a list of blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    texts = [block if isinstance(block, str) else block.get("text") for block in content]
    return "\n".join(text for text in texts if isinstance(text, str))

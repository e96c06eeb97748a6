"""Email header helpers: the address and first name of an author, a subject without prefixes.

Used by triage lessons (scopes by sender and subject), the planner's replies, and the offline
provider's triage rules.
"""

from __future__ import annotations

import re
from email.utils import parseaddr


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

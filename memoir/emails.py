"""Email header helpers: the address and first name of an author, a subject without prefixes.

Used by triage lessons (scopes by sender and subject), the planner's replies, and the offline
provider's triage rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from email.utils import getaddresses, parseaddr
from typing import NamedTuple


def email_address(author: str) -> str:
    """The lower-cased address of "Name <addr>" (or the whole string when there is none); an
    unquoted comma in the name ("Moore, Angela <a@x>") does not hide the address."""
    bracketed = re.search(r"<([^<>@\s]+@[^<>\s]+)>", author)
    _name, addr = ("", bracketed.group(1)) if bracketed else parseaddr(author)
    return (addr or author).strip().lower()


def first_name(author: str) -> str:
    """ "Dan Smith <dan@x.com>" → "Dan"; "dan.smith@x.com" → "Dan"."""
    name, addr = parseaddr(author)
    if name.strip():
        return name.strip().split()[0].strip("\"'")
    local = (addr or author).split("@")[0]
    word = re.split(r"[._+-]", local)[0]
    return word.capitalize() if word else "there"


class Recipient(NamedTuple):
    name: str
    address: str
    copied: bool  # listed after a "cc:" marker

    @property
    def local(self) -> str:
        """Its address's local part (`ana.diaz` of ana.diaz@x.example)."""
        return self.address.partition("@")[0]

    @property
    def names(self) -> set[str]:
        """The capitalised words naming it: of its display name, else of its address (ana.diaz@
        → Ana, Diaz); titles ("Dr.", "Mrs") aside."""
        shown = self.name or re.sub(r"[._+-]", " ", self.local).title()
        found = re.findall(r"[A-Z][\w'-]{2,}", shown)
        return {w for w in found if not re.fullmatch(r"(?i)mrs|miss|prof", w)}


def names_any(names: Iterable[str], text: str) -> bool:
    """`text` says one of `names` (whole words; names are literal text, never patterns)."""
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I) for name in names)


def recipients(to: str) -> list[Recipient]:
    """The recipients of a To header; those after a "cc:" marker ("Ann <a@x>, cc: Bo <b@x>")
    are copies (the Gmail shape has no Cc field, so a Cc list often rides along in To)."""
    found, copied = [], False
    for part in re.split(r"[,;]", to):
        marker = re.match(r"\s*cc\s*:", part, re.I)
        copied = copied or marker is not None
        for name, address in getaddresses([part[marker.end() :] if marker else part]):
            if "@" in address:
                found.append(Recipient(name.strip(), address.lower(), copied))
    return found


# Second-level labels under a country's domain (brightlane.co.uk, northfield.ac.uk).
_SECOND_LEVEL = {"co", "ac", "org", "gov", "com", "net", "edu", "ltd", "plc", "nhs", "sch", "or"}


def domain_name(domain: str) -> str:
    """The organisation's name in a domain: `brightlane` of mail.brightlane.co.uk."""
    labels = domain.split(".")
    suffix = 3 if len(labels) > 2 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL else 2
    return labels[-suffix] if len(labels) >= suffix else labels[0]


def same_organisation(domain: str, own: str) -> bool:
    """`domain` is `own`, or the same name under another country's suffix: a regional office
    (harbourfreight.com.my of harbourfreight.com.sg, acme.de of acme.com)."""
    countries = [len(d.rpartition(".")[2]) == 2 for d in (domain, own)]
    return domain == own or (any(countries) and domain_name(domain) == domain_name(own))


def lookalike(domain: str, own: str) -> bool:
    """`domain` imitates `own`: its name, misspelt or padded, in another domain
    (kestrel-universlty-helpdesk.example for kestrel-university.example), never `own` or under
    it."""
    if "." not in own or "." not in domain or domain.endswith(f".{own}"):
        return False
    if domain.split(".")[-2:] == own.split(".")[-2:] or same_organisation(domain, own):
        return False
    name, theirs = domain_name(own), domain_name(domain)
    spans = (
        theirs[i : i + n] for n in range(len(name) - 1, len(name) + 2) for i in range(len(theirs))
    )
    return len(name) >= 5 and any(SequenceMatcher(None, name, s).ratio() >= 0.85 for s in spans)


_QUOTED = re.compile(
    r"^(?:>|-{2,} ?(?:original|forwarded) message|on .{0,120}wrote:$|from: .+\n(?:sent|date): )",
    re.I | re.M,
)


def own_words(body: str) -> str:
    """The body without the quoted history of a reply or forward (`> …`, "-----Original
    Message-----", an Outlook "From: … Sent: …" block, "On … wrote:")."""
    return _QUOTED.split(body, maxsplit=1)[0]


_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|fw|fwd|aw|tr)\s*:\s*|\[[^\]]*\]\s*)+", re.I)


def normalize_subject(subject: str) -> str:
    """Subject without "Re:", "Fwd:" and "[tag]" prefixes."""
    return _SUBJECT_PREFIX.sub("", subject).strip()

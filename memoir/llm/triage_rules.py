"""The exact side of offline triage, read from `memoir/data/triage_examples.yaml`: who sent an
email, whom it greets, what it asks of the reader, and the exact rules (scams, replies to
invitations, "no action needed"). The nearest examples are `memoir.llm.offline_triage`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from memoir.llm import tables
from memoir.llm._text import email_address
from memoir.models import Classification


@dataclass
class TriageEmail:
    author: str
    to: str
    subject: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.subject}\n{self.body}"


def table() -> dict[str, Any]:
    """The triage table (`memoir/data/triage_examples.yaml`)."""
    return tables.table("triage_examples")


@cache
def words(patterns: str | tuple[str, ...], *, at_start: bool = False) -> re.Pattern[str]:
    """One regex for a regex or several, matched as whole words (or at the start)."""
    joined = "|".join(f"(?:{p})" for p in ((patterns,) if isinstance(patterns, str) else patterns))
    start = "^" if at_start else r"(?<!\w)"
    return re.compile(rf"{start}(?:{joined})(?!\w)", re.I)


def pattern(name: str, *, at_start: bool = False) -> re.Pattern[str]:
    """The compiled `senders` entry `name` (or a top-level entry); a `|`-joined list of local
    parts matches between the separators of an address's local part (`billing+eu`)."""
    entry = table()["senders"].get(name, table().get(name))
    if name.endswith("local_parts"):
        return re.compile(rf"(?:^|[._+-])(?:{''.join(entry.split())})(?:$|[._+-])", re.I)
    if name == "group_recipients":
        return re.compile(rf"(?:^|[<\s,;])(?:{''.join(entry.split())})@", re.I)
    return words(entry if isinstance(entry, str) else tuple(entry), at_start=at_start)


def exact_rule(email: TriageEmail) -> tuple[Classification, str] | None:
    """The action and the name of the first exact rule of the table that matches `email`."""
    for rule in table()["rules"]:
        subject = "subject" in rule and words(rule["subject"], at_start=True).search(email.subject)
        if subject or ("patterns" in rule and words(tuple(rule["patterns"])).search(email.text)):
            return Classification(rule["action"]), rule["name"]
    return None


def _first_line(body: str) -> str:
    return next((line.strip() for line in body.splitlines() if line.strip()), "")


def bulk_mail(email: TriageEmail) -> bool:
    """A bulk-mail footer (unsubscribe, view in browser …)."""
    return pattern("bulk_footer").search(email.body) is not None


def group_addressed(email: TriageEmail) -> bool:
    """Sent to a group (all@, team@, a list) or greeting one ("Hi all", "Dear parents")."""
    greets_group = pattern("group_greeting", at_start=True).match(_first_line(email.body))
    return bool(pattern("group_recipients").search(email.to) or greets_group)


def from_organisation(email: TriageEmail) -> str | None:
    """Why the sender is an organisation (bulk mail, or a role address that greets nobody by
    name), or None for a person."""
    if bulk_mail(email):
        return "bulk mail (an unsubscribe footer)"
    address = email_address(email.author)
    first = _first_line(email.body)
    greets = bool(pattern("personal_greeting", at_start=True).match(first))
    greets = greets and not pattern("group_greeting", at_start=True).match(first)
    if pattern("role_local_parts").search(address.partition("@")[0]) and not greets:
        return f"a role address ({address})"
    return None


def org_domain(address: str) -> str:
    """The organisation's domain of an address: mail-system labels dropped
    (news.shop.example → shop.example), at least two labels kept."""
    labels = email_address(address).rpartition("@")[2].split(".")
    while len(labels) > 2 and labels[0] in table()["senders"]["mail_labels"]:
        labels = labels[1:]
    return ".".join(labels)


def public_domain(domain: str) -> bool:
    """A public mail provider's domain (gmail.com …): many unrelated people share it."""
    public = table()["senders"]["public_mail_domains"]
    return domain in public or ".".join(domain.split(".")[-2:]) in public


def own_domain(domain: str, email: TriageEmail) -> bool:
    """The domain of one of the recipients (the user's own organisation)."""
    return domain in {org_domain(a) for a in re.split(r"[,;]", email.to) if "@" in a}


def asks(email: TriageEmail) -> list[str]:
    """What the email asks of the reader, in words: requests, questions, deadlines, problems;
    boilerplate questions ("Questions?") aside."""
    found = [a["label"] for a in table()["asks"] if words(tuple(a["patterns"])).search(email.text)]
    boilerplate = pattern("boilerplate_question", at_start=True)
    sentences = (
        s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", f"{email.body}\n{email.subject}")
    )
    questions = [s for s in sentences if s.endswith("?") and not boilerplate.match(s)]
    return found + [f'a direct question ("{q[:80]}")' for q in questions[:1]]

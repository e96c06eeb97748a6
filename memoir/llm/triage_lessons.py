"""Targeted triage lessons: what a decision on one email teaches, and for which emails.

A lesson is one line of the triage preferences, under the heading of its action, in words a
person can read and edit:

    Ignore (no reply, no notification):
    - Ignore: emails from newsletters@shop.example (you ignored "Spring sale")
    Notify (worth knowing, no reply needed):
    - Notify: emails from anyone at bank.example (you acknowledged "Your statement is ready")
    Respond (needs a reply or an action):
    - Respond: emails from noreply@git.example with subjects like "Review requested on *"

The text is the source of truth: triage reads the lines back (`parse_lessons`) and follows the
most specific lesson whose scope covers the email (`deciding_lesson`); an email outside every
scope is left to the general rules. Scopes, from the broadest: a topic (`about "…"`, written by
a person), a domain (`from anyone at d`), a subject pattern from any sender, a sender address,
a subject pattern within a domain, a subject pattern within an address.

Which scope a decision teaches (`plan_lesson`): the sender's address for a person you respond
to, or an outside business sender you ignore (outreach, a vendor); for a colleague or a personal
contact you ignore or acknowledge, the subject pattern within their address (they write about
many things: the next email from them may well be urgent); the domain for an automated or bulk
sender (noreply@, alerts@, a list with an unsubscribe footer), unless the domain is shared (a
public mail provider, or the recipient's own organisation); and when an existing lesson already
decides this email the other way (the sender is too broad for one lesson), the next narrower
scope: domain → address → subject pattern within the address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from memoir.llm._text import email_address, normalize_subject
from memoir.llm.prompts import normalize_decision
from memoir.models import Classification, PreferenceUpdate

# Decision name → (the action it teaches, how the note says it).
LESSON_DECISIONS: dict[str, tuple[Classification, str]] = {
    "notify.acknowledge": (Classification.NOTIFY, "you acknowledged"),
    "notify.notify": (Classification.NOTIFY, "you acknowledged"),
    "notify.ignore": (Classification.IGNORE, "you ignored"),
    "notify.respond": (Classification.RESPOND, "you chose to respond to"),
    "email.ignore": (Classification.IGNORE, "you ignored the reply drafted for"),
    "calendar.ignore": (Classification.IGNORE, "you ignored the invitation drafted for"),
    "question.ignore": (Classification.IGNORE, "you ignored the question about"),
}

AUTOMATED_LOCAL = re.compile(
    r"(?:^|[._+-])(?:no-?reply|do-?not-?reply|donotreply|notifications?|notify|alerts?|"
    r"mailer(?:-daemon)?|bounces?|news|newsletters?|digest|marketing|promo(?:tions)?|offers|"
    r"deals|updates|receipts?|billing|invoices?|statements?|tracking|shipment|"
    r"calendar-notification|automated|robot|info|hello|team|events|request)(?:$|[._+-])",
    re.I,
)
BULK_FOOTER = re.compile(
    r"\bunsubscribe\b|\bstop receiving\b|\bmanage (?:your )?preferences\b", re.I
)
# Leading labels of a sender's host that name a mail system, not the organisation.
MAIL_LABELS = frozenset(
    {"mail", "email", "e", "em", "m", "mg", "news", "newsletter", "newsletters", "info",
     "notifications", "notify", "alerts", "bounce", "bounces", "mailer", "reply", "send", "comms",
     "marketing"}
)  # fmt: skip
PUBLIC_MAIL_DOMAINS = frozenset(
    {"gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com",
     "yahoo.com", "ymail.com", "icloud.com", "me.com", "mac.com", "aol.com", "proton.me",
     "protonmail.com", "pm.me", "gmx.com", "gmx.de", "gmx.net", "web.de", "mail.com",
     "yandex.com", "yandex.ru", "mail.ru", "fastmail.com", "zoho.com", "hey.com", "qq.com",
     "163.com"}
)  # fmt: skip


class EmailLike(Protocol):
    @property
    def author(self) -> str: ...
    @property
    def to(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def body(self) -> str: ...


class ScopeKind(StrEnum):
    TOPIC = "topic"
    DOMAIN = "domain"
    SUBJECT = "subject"
    SENDER = "sender"


_RANK = {ScopeKind.TOPIC: 1, ScopeKind.DOMAIN: 2, ScopeKind.SUBJECT: 3, ScopeKind.SENDER: 4}


@dataclass(frozen=True)
class Scope:
    """Which emails a lesson is about. `within` (subject patterns only): an address or domain
    the sender must match."""

    kind: ScopeKind
    value: str
    within: str | None = None

    def phrase(self) -> str:
        """The scope in words: `from anyone at bank.example`."""
        if self.kind is ScopeKind.SENDER:
            return f"from {self.value}"
        if self.kind is ScopeKind.DOMAIN:
            return f"from anyone at {self.value}"
        if self.kind is ScopeKind.TOPIC:
            return f'about "{self.value}"'
        subject = f'with subjects like "{self.value}"'
        if self.within is None:
            return subject
        sender = self.within if "@" in self.within else f"anyone at {self.within}"
        return f"from {sender} {subject}"

    def specificity(self) -> tuple[int, int]:
        """Higher is narrower: the rank of the kind (a subject within a sender above all),
        then the length of the value (a longer domain is narrower)."""
        rank = _RANK[self.kind]
        if self.kind is ScopeKind.SUBJECT and self.within is not None:
            rank = 5 if "@" not in self.within else 6
        return rank, len(self.value)

    def covers(self, email: EmailLike) -> bool:
        sender = email_address(email.author)
        if self.kind is ScopeKind.SENDER:
            return sender == self.value
        if self.kind is ScopeKind.DOMAIN:
            return _in_domain(sender, self.value)
        if self.kind is ScopeKind.TOPIC:
            return _about(f"{email.subject}\n{email.body}", self.value)
        if self.within is not None and not _sender_matches(sender, self.within):
            return False
        return _subject_matches(email.subject, self.value)


@dataclass(frozen=True)
class Lesson:
    action: Classification
    scope: Scope
    note: str = ""

    @property
    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"- {self.action.value.capitalize()}: emails {self.scope.phrase()}{note}"


# ----- matching --------------------------------------------------------------------------------


def _in_domain(sender: str, domain: str) -> bool:
    host = sender.rpartition("@")[2]
    return bool(host) and (host == domain or host.endswith("." + domain))


def _sender_matches(sender: str, within: str) -> bool:
    return sender == within if "@" in within else _in_domain(sender, within)


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _subject_matches(subject: str, pattern: str) -> bool:
    parts = [re.escape(part) for part in _squash(pattern).split("*")]
    regex = re.compile(".*".join(parts), re.S)
    return any(regex.fullmatch(_squash(s)) for s in {subject, normalize_subject(subject)})


def _about(text: str, topic: str) -> bool:
    words = re.findall(r"[\w'-]+", topic.lower())
    return bool(words) and all(re.search(rf"\b{re.escape(w)}s?\b", text, re.I) for w in words)


def covering(lessons: list[Lesson], email: EmailLike) -> list[Lesson]:
    """The lessons whose scope covers `email`, in text order."""
    return [lesson for lesson in lessons if lesson.scope.covers(email)]


def deciding_lesson(lessons: list[Lesson], email: EmailLike) -> Lesson | None:
    """The most specific lesson covering `email` (the later line wins a tie); None if none."""
    best: Lesson | None = None
    for lesson in covering(lessons, email):
        if best is None or lesson.scope.specificity() >= best.scope.specificity():
            best = lesson
    return best


# ----- reading the text back -------------------------------------------------------------------

_LINE = re.compile(
    r"^\s*[-*]\s*(?P<action>ignore|notify|respond)\s*:\s*emails?\s+(?P<rest>.+?)\s*$", re.I
)
_FROM = re.compile(
    r'^from\s+(?:anyone\s+at\s+|any\s+address\s+at\s+)?@?(?P<who>[^\s"(),]+)'
    r'(?:\s+with\s+subjects?\s+like\s+"(?P<subject>[^"]*)")?',
    re.I,
)
_SUBJECT = re.compile(r'^with\s+subjects?\s+like\s+"(?P<subject>[^"]*)"', re.I)
_TOPIC = re.compile(r'^about\s+(?:"(?P<quoted>[^"]+)"|(?P<words>[^(]+?))\s*(?:\(|$)', re.I)
# The older learned line: `- Ignore: emails like "subject" from Name <addr>` (read as its sender).
_LEGACY = re.compile(r'^like\s+"(?P<subject>.*)"\s+from\s+(?P<author>.+?)\s*$', re.I)
_NOTE = re.compile(r"\((?P<note>[^()]*)\)\s*$")


def _scope_of(rest: str) -> Scope | None:
    legacy = _LEGACY.match(rest)
    if legacy:
        author = legacy.group("author")
        if "@" in author:
            return Scope(ScopeKind.SENDER, email_address(author))
        return Scope(ScopeKind.SUBJECT, legacy.group("subject"))
    found = _FROM.match(rest)
    if found:
        who = found.group("who").lower().lstrip("*.")
        if found.group("subject") is not None:
            return Scope(ScopeKind.SUBJECT, found.group("subject"), within=who)
        return Scope(ScopeKind.SENDER if "@" in who else ScopeKind.DOMAIN, who)
    found = _SUBJECT.match(rest)
    if found:
        return Scope(ScopeKind.SUBJECT, found.group("subject"))
    found = _TOPIC.match(rest)
    if found:
        topic = (found.group("quoted") or found.group("words") or "").strip()
        return Scope(ScopeKind.TOPIC, topic) if topic else None
    return None


def parse_lesson(line: str) -> Lesson | None:
    """The lesson a line states, or None when the line is no lesson."""
    found = _LINE.match(line)
    if not found:
        return None
    rest = found.group("rest")
    scope = _scope_of(rest)
    if scope is None:
        return None
    note = _NOTE.search(rest)
    action = Classification(found.group("action").lower())
    return Lesson(action, scope, note.group("note").strip() if note else "")


def parse_lessons(text: str) -> list[Lesson]:
    """Every lesson of a triage preference text, in order."""
    return [lesson for line in text.splitlines() if (lesson := parse_lesson(line))]


# ----- choosing a scope ------------------------------------------------------------------------


def automated_sender(email: EmailLike) -> bool:
    """A machine or bulk sender: a role local part (noreply@, alerts@ …) or a bulk footer."""
    local = email_address(email.author).partition("@")[0]
    return bool(AUTOMATED_LOCAL.search(local) or BULK_FOOTER.search(email.body))


def sender_domain(address: str) -> str:
    """The organisation's domain of an address: mail-system labels dropped
    (news.shop.example → shop.example), at least two labels kept."""
    labels = address.rpartition("@")[2].split(".")
    while len(labels) > 2 and labels[0] in MAIL_LABELS:
        labels = labels[1:]
    return ".".join(labels)


def _shared_domain(domain: str, email: EmailLike) -> bool:
    """A domain one lesson should not speak for: a public provider or the recipients' own."""
    recipients = [email_address(a) for a in re.split(r"[,;]", email.to) if "@" in a]
    own = {sender_domain(a) for a in recipients}
    tail = ".".join(domain.split(".")[-2:])
    return domain in PUBLIC_MAIL_DOMAINS or tail in PUBLIC_MAIL_DOMAINS or domain in own


def subject_pattern(subject: str) -> str:
    """The subject with what varies from one email to the next (numbers, ids, dates) as `*`."""
    words = normalize_subject(subject).replace('"', "'").split()
    pattern: list[str] = []
    for word in words:
        token = "*" if re.search(r"\d", word) else word
        if not (token == "*" and pattern and pattern[-1] == "*"):
            pattern.append(token)
    text = " ".join(pattern)
    return text if text.strip("* ") else normalize_subject(subject).replace('"', "'")


def _whole_sender(email: EmailLike, action: Classification, automated: bool) -> bool:
    """Whether one decision may speak for everything this sender sends. An automated sender's
    mail is of one kind; so is an outside business sender's (outreach, a vendor) when ignored.
    A colleague or a personal contact (same organisation, public mail provider) writes about
    many things: ignoring or acknowledging one of their emails says nothing about the next one,
    which may be urgent. Responding is safe for any person (a reply is a draft to approve)."""
    if automated or action is Classification.RESPOND:
        return True
    domain = sender_domain(email_address(email.author))
    return action is Classification.IGNORE and not _shared_domain(domain, email)


def scope_ladder(email: EmailLike, action: Classification) -> list[Scope]:
    """The scopes to try, broadest first: the domain (automated senders, unshared domains),
    the sender address (when one decision may speak for the whole sender: `_whole_sender`),
    a subject pattern within the address."""
    address = email_address(email.author)
    ladder: list[Scope] = []
    automated = automated_sender(email)
    domain = sender_domain(address)
    if "@" in address and automated and not _shared_domain(domain, email):
        ladder.append(Scope(ScopeKind.DOMAIN, domain))
    if "@" in address and _whole_sender(email, action, automated):
        ladder.append(Scope(ScopeKind.SENDER, address))
    ladder.append(Scope(ScopeKind.SUBJECT, subject_pattern(email.subject), within=address or None))
    return ladder


def _note(verb: str, subject: str) -> str:
    shown = " ".join(subject.replace('"', "'").replace("(", "[").replace(")", "]").split())
    return f'{verb} "{shown[:80]}"'


def plan_lesson(
    email: EmailLike, action: Classification, lessons: list[Lesson], verb: str = "you chose"
) -> Lesson | None:
    """The lesson a decision on `email` teaches, or None when the lessons already decide it so.

    The broadest scope of `scope_ladder` that is narrower than the lesson now deciding the email
    the other way; at the narrowest, the same scope (the new lesson then replaces the old line).
    """
    decider = deciding_lesson(lessons, email)
    if decider is not None and decider.action is action:
        return None
    note = _note(verb, email.subject)
    ladder = scope_ladder(email, action)
    for scope in ladder:
        if decider is None or scope.specificity() > decider.scope.specificity():
            return Lesson(action, scope, note)
    assert decider is not None  # narrower than every rung: correct that line in place
    return Lesson(action, decider.scope, note)


def lesson_for_decision(decision: str, email: EmailLike, preferences: str) -> Lesson | None:
    """The lesson a triage decision (`notify.acknowledge`, `email.send.ignore` …) on `email`
    adds to `preferences`; None for other decisions or when nothing needs to change."""
    taught = LESSON_DECISIONS.get(normalize_decision(decision))
    if taught is None:
        return None
    action, verb = taught
    return plan_lesson(email, action, parse_lessons(preferences), verb)


def lesson_for_update(update: PreferenceUpdate, preferences: str) -> Lesson | None:
    """The lesson of a triage-preference update that carries its email, else None."""
    if update.namespace != "triage_preferences" or update.email is None:
        return None
    return lesson_for_decision(update.decision, update.email, preferences)


# ----- writing it down -------------------------------------------------------------------------


def _heading_index(lines: list[str], action: Classification) -> int | None:
    """The line of the heading for `action`: a non-bullet line starting with the action's name."""
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("-", "*")):
            continue
        first = re.match(r"[A-Za-z]+", stripped)
        if first and first.group(0).lower() == action.value:
            return index
    return None


def _end_of_section(lines: list[str], heading: int) -> int:
    """The index after the last line of the section under `heading`."""
    end = heading + 1
    while (
        end < len(lines)
        and lines[end].strip()
        and (lines[end].lstrip().startswith(("-", "*")) or lines[end][:1].isspace())
    ):
        end += 1
    return end


def add_lesson(text: str, lesson: Lesson) -> tuple[str, str]:
    """`text` with `lesson` under its action's heading, and what changed, in words.

    A line with the same scope is replaced (the person changed their mind about exactly these
    emails); the same lesson already there changes nothing; with no heading for the action, one
    is added at the end."""
    lines = text.rstrip("\n").splitlines()
    what = f"added `{lesson.line}`"
    for index, line in enumerate(lines):
        old = parse_lesson(line)
        if old is None or old.scope != lesson.scope:
            continue
        if old.action is lesson.action:
            return text, f"`{line.strip()}` is already there: no change"
        del lines[index]
        what = f"replaced `{line.strip()}` with `{lesson.line}`"
        break
    heading = _heading_index(lines, lesson.action)
    if heading is None:
        title = f"{lesson.action.value.capitalize()} (learned from your decisions):"
        lines = [*lines, "", title, lesson.line] if lines else [title, lesson.line]
    else:
        lines.insert(_end_of_section(lines, heading), lesson.line)
    return "\n".join(lines) + "\n", what


def has_lesson(text: str, lesson: Lesson) -> bool:
    """Whether `text` states `lesson` (same action and scope, whatever its note)."""
    return any(
        (old.action, old.scope) == (lesson.action, lesson.scope) for old in parse_lessons(text)
    )

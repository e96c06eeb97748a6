"""Targeted triage lessons: what a decision on one email teaches, and for which emails.

A lesson is a line of the triage preferences under the heading of its action, which a person can
read and edit: `- Ignore: emails from news@shop.example (you ignored "…")`, `- Notify: emails
from anyone at bank.example`, `- Respond: emails from a@b.example with subjects like "Review *"`,
`- Ignore: emails about "school trips"`. Triage follows the most specific lesson whose scope
covers the email; an email outside every scope is left to the general rules. A decision teaches
the broadest scope that speaks only for emails like it (`scope_ladder`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memoir.emails import email_address, normalize_subject
from memoir.llm import offline_triage as rules
from memoir.llm.offline_triage import TriageEmail
from memoir.models import Classification, EmailMessage
from memoir.models.turn import normalize_decision

EmailLike = EmailMessage | TriageEmail
# Decision name → (the action it teaches, how the note says it).
LESSON_DECISIONS: dict[str, tuple[Classification, str]] = {
    name: (Classification(action), verb)
    for name, (action, verb) in rules.table()["decisions"].items()
}


class ScopeKind(StrEnum):
    TOPIC = "topic"
    DOMAIN = "domain"
    SUBJECT = "subject"
    SENDER = "sender"


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _in(sender: str, within: str) -> bool:
    """`sender` is the address `within`, or an address at the domain `within` (or under it)."""
    host = sender.rpartition("@")[2]
    return sender == within if "@" in within else host == within or host.endswith("." + within)


def _who(who: str) -> str:
    return who if "@" in who else f"anyone at {who}"


@dataclass(frozen=True)
class Scope:
    """Which emails a lesson is about; `within`: the sender of a subject pattern."""

    kind: ScopeKind
    value: str
    within: str | None = None

    def phrase(self) -> str:
        """The scope in words: `from anyone at bank.example`."""
        if self.kind is ScopeKind.TOPIC:
            return f'about "{self.value}"'
        if self.kind is not ScopeKind.SUBJECT:
            return f"from {_who(self.value)}"
        sender = f"from {_who(self.within)} " if self.within else ""
        return f'{sender}with subjects like "{self.value}"'

    def specificity(self) -> tuple[int, int]:
        """Higher is narrower: the kind (a subject within a sender above all), then length."""
        extra = 0 if self.within is None else 2 + ("@" in self.within)
        return list(ScopeKind).index(self.kind) + extra, len(self.value)

    def covers(self, email: EmailLike) -> bool:
        sender = email_address(email.author)
        if self.kind in (ScopeKind.SENDER, ScopeKind.DOMAIN):
            return _in(sender, self.value)
        if self.kind is ScopeKind.TOPIC:
            text, words = f"{email.subject}\n{email.body}", re.findall(r"[\w'-]+", self.value)
            return bool(words) and all(re.search(rf"\b{w}s?\b", text, re.I) for w in words)
        if self.within is not None and not _in(sender, self.within):
            return False
        regex = re.compile(".*".join(re.escape(p) for p in _squash(self.value).split("*")), re.S)
        subjects = {email.subject, normalize_subject(email.subject)}
        return any(regex.fullmatch(_squash(s)) for s in subjects)


@dataclass(frozen=True)
class Lesson:
    action: Classification
    scope: Scope
    note: str = ""

    @property
    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"- {self.action.value.capitalize()}: emails {self.scope.phrase()}{note}"


def covering(lessons: list[Lesson], email: EmailLike) -> list[Lesson]:
    """The lessons whose scope covers `email`, in text order."""
    return [lesson for lesson in lessons if lesson.scope.covers(email)]


def deciding_lesson(lessons: list[Lesson], email: EmailLike) -> Lesson | None:
    """The most specific lesson covering `email` (the later line wins a tie); None if none."""
    found = reversed(covering(lessons, email))
    return max(found, key=lambda lesson: lesson.scope.specificity(), default=None)


_LINE = re.compile(r"^\s*[-*]\s*(ignore|notify|respond)\s*:\s*emails?\s+(.+?)\s*$", re.I)
_FROM = re.compile(r'^from\s+(?:any(?:one| address)\s+at\s+)?@?([^\s"(),]+)', re.I)
_SUBJECT = re.compile(r'\bwith\s+subjects?\s+like\s+"([^"]*)"', re.I)
_TOPIC = re.compile(r'^about\s+(?:"([^"]+)"|([^(]+?))\s*(?:\(|$)', re.I)
# The older learned line: `- Ignore: emails like "subject" from Name <addr>` (read as its sender).
_LEGACY = re.compile(r'^like\s+"(.*)"\s+from\s+(.+?)\s*$', re.I)
_NOTE = re.compile(r"\(([^()]*)\)\s*$")


def _scope_of(rest: str) -> Scope | None:
    if legacy := _LEGACY.match(rest):
        if "@" in legacy.group(2):
            return Scope(ScopeKind.SENDER, email_address(legacy.group(2)))
        return Scope(ScopeKind.SUBJECT, legacy.group(1))
    subject, sender, topic = _SUBJECT.search(rest), _FROM.match(rest), _TOPIC.match(rest)
    who = sender.group(1).lower().lstrip("*.") if sender else None
    if subject and (sender or rest.lower().startswith("with")):
        return Scope(ScopeKind.SUBJECT, subject.group(1), within=who)
    if who:
        return Scope(ScopeKind.SENDER if "@" in who else ScopeKind.DOMAIN, who)
    words = (topic.group(1) or topic.group(2) or "").strip() if topic else ""
    return Scope(ScopeKind.TOPIC, words) if words else None


def parse_lesson(line: str) -> Lesson | None:
    """The lesson a line states, or None when the line is no lesson."""
    found = _LINE.match(line)
    scope = _scope_of(found.group(2)) if found else None
    if found is None or scope is None:
        return None
    note = _NOTE.search(found.group(2))
    return Lesson(Classification(found.group(1).lower()), scope, note.group(1) if note else "")


def parse_lessons(text: str) -> list[Lesson]:
    """Every lesson of a triage preference text, in order."""
    return [lesson for line in text.splitlines() if (lesson := parse_lesson(line))]


def subject_pattern(subject: str) -> str:
    """The subject with what varies from one email to the next (numbers, ids, dates) as `*`."""
    words = normalize_subject(subject).replace('"', "'").split()
    found = re.sub(r"\*(?: \*)+", "*", " ".join("*" if re.search(r"\d", w) else w for w in words))
    return found if found.strip("* ") else normalize_subject(subject).replace('"', "'")


def scope_ladder(email: EmailLike, action: Classification) -> list[Scope]:
    """The scopes to try, broadest first: the address (when one decision may speak for the
    sender), the subject within the address; an acknowledgement only the last. Never the whole
    domain: a company's alerts and its promotions share one (alerts@bank, offers@bank)."""
    address = email_address(email.author)
    mail = TriageEmail(email.author, email.to, email.subject, email.body)
    domain = rules.org_domain(address)
    shared = rules.public_domain(domain) or rules.from_inside(mail)
    local = address.partition("@")[0]
    automated = bool(rules.pattern("automated_local_parts").search(local)) or rules.bulk_mail(mail)
    # Acknowledging says notifying was right for mail like this one, not for all of a sender's:
    # a company's alerts and its promotions often share an address. A colleague or a personal
    # contact writes about many things: ignoring one email says nothing about the next.
    # Responding is safe for anyone (a draft to approve).
    broad = action is not Classification.NOTIFY
    whole = automated or action is Classification.RESPOND
    ladder: list[Scope] = []
    if "@" in address and broad and (whole or (action is Classification.IGNORE and not shared)):
        ladder.append(Scope(ScopeKind.SENDER, address))
    return [*ladder, Scope(ScopeKind.SUBJECT, subject_pattern(email.subject), address or None)]


def plan_lesson(
    email: EmailLike, action: Classification, lessons: list[Lesson], verb: str = "you chose"
) -> Lesson | None:
    """The lesson a decision on `email` teaches, or None when the lessons already decide it so:
    the broadest scope narrower than the lesson deciding it the other way, else that scope."""
    decider = deciding_lesson(lessons, email)
    if decider is not None and decider.action is action:
        return None
    shown = " ".join(email.subject.replace('"', "'").replace("(", "[").replace(")", "]").split())
    note = f'{verb} "{shown[:80]}"'
    for scope in scope_ladder(email, action):
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
    return plan_lesson(email, taught[0], parse_lessons(preferences), taught[1])


def _bullet(line: str) -> bool:
    return line.lstrip().startswith(("-", "*")) or line[:1].isspace()


def _section(lines: list[str], action: Classification) -> tuple[int, int] | None:
    """(heading, end) of the section of `action`: the first non-bullet line whose first word is
    the action's name, and its bullets up to a blank line or the next heading."""
    for start, line in enumerate(lines):
        if not _bullet(line) and line.split(" ", 1)[0].strip(":").lower() == action.value:
            end = start + 1
            while end < len(lines) and lines[end].strip() and _bullet(lines[end]):
                end += 1
            return start, end
    return None


def add_lesson(text: str, lesson: Lesson) -> tuple[str, str]:
    """`text` with `lesson` at the end of its action's section, and what changed, in words.

    A line with the same scope is replaced (the person changed their mind about exactly these
    emails), or moved when it stands under another heading; with no section for the action, one
    is added at the end."""
    lines = text.rstrip("\n").splitlines()
    what = f"added `{lesson.line}`"
    for index, line in enumerate(lines):
        old = parse_lesson(line)
        if old is None or old.scope != lesson.scope:
            continue
        if old.action is lesson.action and has_lesson(text, lesson):
            return text, f"`{line.strip()}` is already there: no change"
        del lines[index]
        what = f"replaced `{line.strip()}` with `{lesson.line}`"
        break
    section = _section(lines, lesson.action)
    if section is None:
        title = f"{lesson.action.value.capitalize()} (learned from your decisions):"
        lines = [*lines, "", title, lesson.line] if lines else [title, lesson.line]
    else:
        lines.insert(section[1], lesson.line)
    return "\n".join(lines) + "\n", what


def has_lesson(text: str, lesson: Lesson) -> bool:
    """Whether the section of `lesson`'s action states it (same scope, whatever its note)."""
    lines = text.splitlines()
    start, end = _section(lines, lesson.action) or (0, 0)
    stated = (parse_lesson(line) for line in lines[start + 1 : end])
    return any(old and (old.action, old.scope) == (lesson.action, lesson.scope) for old in stated)

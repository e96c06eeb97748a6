"""Offline triage from the typed request (`memoir.triage.TriageQuery`), never a rendered prompt.

The exact side, read from `memoir/data/triage_examples.yaml`: the sender, whom it greets, what it
asks, the exact rules (an impostor domain, scams, replies to invitations, "no action needed").
`classify`: a rule; for an organisation's mail, its nearest example emails (MiniLM) among notify
and ignore, notify when in doubt (respond when it asks for a reply in so many words, unless
marketing); for a person's, ignore when the reader is only copied or it is a reply-all's chatter,
respond when they ask the reader something, unless an outside business's mail reads like
unsolicited mail; else the nearest examples (no marketing from inside). Then the most specific
covering lesson (`memoir.lessons`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from memoir.emails import email_address, lookalike, own_words, recipients
from memoir.embeddings import Embedder
from memoir.llm import tables
from memoir.models import Classification, TriageDecision

if TYPE_CHECKING:
    from memoir.triage import TriageQuery

IGNORE, NOTIFY, RESPOND = Classification.IGNORE, Classification.NOTIFY, Classification.RESPOND


@dataclass
class TriageEmail:
    author: str
    to: str
    subject: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.subject}\n{self.body}"

    @property
    def is_reply(self) -> bool:
        return self.subject.lower().startswith("re:")

    @property
    def own_text(self) -> str:
        """The writer's own words: the body without quoted history, after the subject unless it
        is a reply's (both asked of others)."""
        return f"{'' if self.is_reply else self.subject}\n{own_words(self.body)}"


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
        return re.compile(rf"(?:^|[<\s,;])(?:[\w.+]*[._+-])?(?:{''.join(entry.split())})@", re.I)
    return words(entry if isinstance(entry, str) else tuple(entry), at_start=at_start)


def exact_rule(email: TriageEmail) -> tuple[Classification, str] | None:
    """The action and the name of the first exact rule of the table that matches `email`."""
    if impostor := impostor_domain(email):
        return IGNORE, f"a sender whose domain imitates {impostor}"
    for rule in (r for r in table()["rules"] if not (r.get("personal") and bulk_mail(email))):
        subject = "subject" in rule and words(rule["subject"], at_start=True).search(email.subject)
        if subject or ("patterns" in rule and words(tuple(rule["patterns"])).search(email.text)):
            return Classification(rule["action"]), rule["name"]
    return None


def impostor_domain(email: TriageEmail) -> str | None:
    """What the sender's domain imitates: the reader's own (kestrel-universlty.example), or a
    service, by a name strung with service words (docusign-secure-mail.net)."""
    domain = org_domain(email.author)
    if any(lookalike(domain, own) for own in recipient_domains(email)):
        return "the reader's own"
    name = domain.split(".")[-2] if "." in domain else domain
    combo = "".join(table()["senders"]["combo_domain_words"].split())
    strung = "-" in name and re.search(rf"(?:^|-)(?:{combo})s?(?:-|$)", name)
    return "a service (a name strung with service words)" if strung else None


def _greets(email: TriageEmail, whom: str) -> bool:
    """Its first line greets `whom`: "group" ("Hi all,") or "personal" ("Dear Dr. Lee,", "Sam,")."""
    first = next((line.strip() for line in email.body.splitlines() if line.strip()), "")
    if pattern(f"{whom}_greeting", at_start=True).match(first):
        return True
    reader = email.to.split()[0] if email.to.strip() else ""  # the first recipient's first name
    return whom == "personal" and bool(reader) and first.startswith(f"{reader},")


def bulk_mail(email: TriageEmail) -> bool:
    """A bulk-mail footer (unsubscribe, view in browser …)."""
    return pattern("bulk_footer").search(email.body) is not None


def group_addressed(email: TriageEmail) -> bool:
    """Sent to a group (all@, team@, a list) or greeting one ("Hi all", "Dear parents")."""
    names = [pattern("group_names").search(r.name) for r in recipients(email.to)]
    return bool(pattern("group_recipients").search(email.to) or any(names)) or _greets(
        email, "group"
    )


def _names_any(names: list[str], text: str) -> bool:
    """`text` says one of `names` (whole words; names are literal text, never patterns)."""
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I) for name in names)


def copied_only(email: TriageEmail) -> bool:
    """The reader is only copied: the mail says so ("cc'd for visibility"), or it speaks to its
    first recipient by name ("Hi Kris,", "Thanks Tom") and names none of the others (quoted
    history aside)."""
    if pattern("copy_note").search(email.body):
        return True
    listed = recipients(email.to)
    if len(listed) < 2:
        return False
    group = pattern("group_greeting", at_start=True)
    names = [w for w in re.findall(r"[A-Z][\w'-]{2,}", listed[0].name) if not group.match(w)]
    opening = next((line for line in email.body.splitlines() if line.strip()), "")
    others = [r.name.split()[0] for r in listed[1:] if r.name]
    return _names_any(names, opening) and not _names_any(others, own_words(email.body))


def group_chatter(email: TriageEmail) -> bool:
    """A short reply to a group ("Re: …" to a list, a few words of its own: "+1", "thanks!",
    "please take me off this list"): thread chatter."""
    short = len(own_words(email.body).split()) <= table()["chatter_words"]
    return short and email.is_reply and group_addressed(email)


def from_organisation(email: TriageEmail) -> str | None:
    """Why the sender is an organisation (bulk mail, a no-reply address, or a role address that
    greets nobody by name), or None for a person."""
    if bulk_mail(email):
        return "bulk mail (an unsubscribe footer)"
    address = email_address(email.author)
    local = address.partition("@")[0]
    greets = _greets(email, "personal") and not _greets(email, "group")
    machine = pattern("machine_local_parts").search(local) or pattern("machine_note").search(
        email.body
    )
    person = greets and not machine  # never a no-reply
    if pattern("role_local_parts").search(local) and not person:
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


def recipient_domains(email: TriageEmail) -> set[str]:
    """The organisation domains of the recipients (the user's own organisation among them)."""
    return {org_domain(r.address) for r in recipients(email.to)}


def asks(email: TriageEmail) -> list[str]:
    """What the email asks of the reader, in words: requests, questions, deadlines, problems;
    boilerplate questions ("Questions?") aside."""
    text = email.own_text
    found = [a["label"] for a in table()["asks"] if words(tuple(a["patterns"])).search(text)]
    boilerplate = pattern("boilerplate_question", at_start=True)
    split = re.split(r"(?<=[.!?])\s+|\n+", text)
    questions = [s for s in map(str.strip, split) if s.endswith("?") and not boilerplate.match(s)]
    return found + [f'a direct question ("{q[:80]}")' for q in questions[:1]]


class Example(NamedTuple):
    category: str
    action: Classification
    rule: str
    text: str
    origin: str  # "outside": marketing or spam, no reply even to a question; "colleague": internal


@cache
def examples() -> list[Example]:
    """Every labelled example email of the table."""
    return [
        Example(n, Classification(c["action"]), c["rule"], text, c.get("origin", ""))
        for n, c in table()["categories"].items()
        for text in c["examples"]
    ]


@cache
def _index() -> tables.Examples:
    return tables.Examples(e.text for e in examples())


@dataclass(frozen=True)
class Vote:
    """Each category's score (the mean similarity of its nearest examples), its nearest one."""

    scores: dict[str, float]
    nearest: dict[str, Example]

    def best(self, keep: Callable[[Example], bool] = lambda e: True) -> Example:
        """The nearest example of the best-scoring category whose examples `keep` accepts."""
        found = [c for c, example in self.nearest.items() if keep(example)]
        return self.nearest[max(found, key=self.scores.__getitem__)]

    def why(self, e: Example) -> str:
        score = self.scores[e.category]
        return f'the nearest examples are {e.category} ({e.rule}; {score:.2f}), closest "{e.text}"'


def nearest(email: TriageEmail, embedder: Embedder) -> Vote:
    """The categories of the examples nearest to `email`, scored by cosine similarity."""
    vote = table()["vote"]
    text = re.sub(vote["left_out"], "it", f"{email.subject}: {email.body}")
    text = " ".join(text.split())[:600]
    similarities = _index().similarities([text], embedder)[0]
    ranked: dict[str, list[int]] = {}
    for index in np.argsort(-similarities):
        ranked.setdefault(examples()[index].category, []).append(int(index))
    top = int(vote["neighbours"])
    scores = {c: float(np.mean(similarities[found[:top]])) for c, found in ranked.items()}
    return Vote(scores, {c: examples()[found[0]] for c, found in ranked.items()})


def classify(email: TriageEmail, embedder: Embedder) -> tuple[Classification, str]:
    """The general decision and its reason, in words."""
    if rule := exact_rule(email):
        return rule[0], f"the exact rule for {rule[1]} fired"
    vote, domain, bulk = nearest(email, embedder), org_domain(email.author), bulk_mail(email)
    inside = domain in recipient_domains(email)  # inside: no marketing; bulk: no colleague's FYI
    unlikely = {"outside"} if inside else {"colleague"} if bulk else set()
    quiet = vote.best(lambda e: e.action is not RESPOND and e.origin not in unlikely)
    if quiet.action is IGNORE and not bulk:  # see `vote.doubt` in the table
        told = vote.best(lambda e: e.action is NOTIFY and e.origin not in unlikely)
        close = vote.scores[told.category] >= vote.scores[quiet.category] - table()["vote"]["doubt"]
        quiet = told if close else quiet
    if organisation := from_organisation(email):
        if pattern("explicit_reply").search(email.text) and quiet.origin != "outside":
            return RESPOND, f"it is {organisation} that asks for a reply in so many words"
        return quiet.action, f"it is {organisation}, no reply needed; {vote.why(quiet)}"
    if copied_only(email):
        return IGNORE, "the reader is only copied on a thread that asks them nothing directly"
    if group_chatter(email):
        return IGNORE, "a person's short reply to a group: thread chatter"
    if not (wanted := ", ".join(asks(email))):
        return quiet.action, f"a person asks nothing of the reader; {vote.why(quiet)}"
    if group_addressed(email):
        if pattern("explicit_reply").search(email.own_text):
            return RESPOND, f"it asks its group to reply in so many words ({wanted})"
        top = vote.best(lambda e: e.origin not in unlikely)
        return top.action, f"it is sent to a group; {vote.why(top)}"
    if pattern("customer_question").search(email.text):
        return RESPOND, f"a customer asks about what the reader offers: {wanted}"
    if not inside and pattern("pitch_ask").search(email.text):
        return IGNORE, f"an outside sender asks ({wanted}) for a call, as a pitch does"
    top, asked = vote.best(), vote.best(lambda e: e.action is RESPOND)
    margin, floor = table()["vote"]["margin"], table()["vote"]["floor"]
    clear = vote.scores[top.category] > max(vote.scores[asked.category] + margin, floor)
    if not (inside or public_domain(domain)) and top.origin == "outside" and clear:
        return IGNORE, f"an outside business asks ({wanted}), but {vote.why(top)}"
    return RESPOND, f"a person wrote it and asks: {wanted}"


def triage_offline(query: TriageQuery, embedder: Embedder) -> TriageDecision:
    """Classify the email of `query`, explaining which rule, example or lesson decided."""
    from memoir.lessons import deciding_lesson, parse_lessons  # it imports this module

    email = TriageEmail(query.author, query.to, query.subject, query.body)
    general, reason = classify(email, embedder)
    lessons = parse_lessons(query.instructions)
    lesson = deciding_lesson(lessons, email)
    verdict = f"No learned lesson covers this email ({len(lessons)} checked): the rules decide."
    final = general if lesson is None else lesson.action
    if lesson is not None:
        how = "agrees" if final is general else f"overrides them ({lesson.scope.kind.value} scope)"
        verdict = f"Lesson `{lesson.line}` covers this email and {how}: {final.value}."
    steps = f'1. Email from {email.author or "an unknown sender"} about "{email.subject}".'
    steps += f"\n2. General rules: {general.value}, because {reason}.\n3. {verdict}"
    steps += f"\nClassification: {final.value}."
    return TriageDecision(reasoning=steps, classification=final)

"""Offline triage from the typed request (`memoir.triage.TriageQuery`), never a rendered prompt.

The exact side, read from `memoir/data/triage_examples.yaml`: the sender, whom it greets, what it
asks, the exact rules (an impostor domain, scams, replies to invitations, "no action needed").
`classify`: a rule; ignore when the reader is only copied or it is a reply-all's chatter; respond
to a customer's question, ignore a pitch's call; for a group, its nearest example emails (MiniLM).
The rest (an organisation's mail, a person's that asks something or nothing) is learned: a
ridge regression per branch over the labelled emails (`model` in the table), notify when in
doubt. Then the most specific covering lesson (`memoir.lessons`)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from memoir import emails, fitting
from memoir.emails import email_address, lookalike, names_any, own_words, recipients
from memoir.embeddings import Embedder, get_local_embedder
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
    reader: str = ""  # the user's own address, when known (`memoir.triage.reader_address`)

    @property
    def text(self) -> str:
        return f"{self.subject}\n{self.body}"

    @property
    def is_reply(self) -> bool:
        """Its subject starts with "Re:" (or AW:, SV:, Antw:, Odp: in other languages)."""
        return re.match(r"(?:re|aw|sv|antw|odp)\s*:", self.subject, re.I) is not None

    @property
    def own_text(self) -> str:
        """The writer's own words: the body without quoted history, after a non-reply subject."""
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
    if name.endswith("domain_words"):  # a whole part of a domain name, plural or not
        return re.compile(rf"(?:{''.join(entry.split())})s?$", re.I)
    return words(entry if isinstance(entry, str) else tuple(entry), at_start=at_start)


def exact_rule(email: TriageEmail) -> tuple[Classification, str] | None:
    """The action and the name of the first exact rule of the table that matches `email`."""
    if impostor := impostor_domain(email):
        return IGNORE, f"a sender whose domain imitates {impostor}"
    said = f"{email.subject}\n{own_words(email.body)}"  # quoted history is others' words
    for rule in (r for r in table()["rules"] if not (r.get("personal") and bulk_mail(email))):
        subject = "subject" in rule and words(rule["subject"], at_start=True).search(email.subject)
        if subject or ("patterns" in rule and words(tuple(rule["patterns"])).search(said)):
            return Classification(rule["action"]), rule["name"]
    return None


def impostor_domain(email: TriageEmail) -> str | None:
    """What the sender's domain imitates: the reader's own (kestrel-universlty.example), or a
    service, by a name strung with a lure word or two service words (docusign-secure-mail.net,
    nimbuscloud-accounts-support.com), or a brand spelt with a digit (paypa1-billing.com)."""
    domain = org_domain(email.author)
    if any(lookalike(domain, own) for own in recipient_domains(email)):
        return "the reader's own"
    parts = (domain.split(".")[-2] if "." in domain else domain).split("-")
    lure, service = (pattern(f"{kind}_domain_words") for kind in ("combo", "service"))
    words = [p for p in parts if lure.match(p) or service.match(p)]
    digit = any(re.search(r"[a-z][0-9][a-z]|[a-z]{3}[01]$", p) for p in parts)
    strung = len(parts) > 1 and (any(map(lure.match, parts)) or len(words) > 1 or words and digit)
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
    named = any(pattern("group_names").search(r.name) for r in recipients(email.to))
    return named or bool(pattern("group_recipients").search(email.to)) or _greets(email, "group")


def copied_only(email: TriageEmail) -> bool:
    """The reader is only copied: the mail says so ("cc'd for visibility"), or its first line
    speaks to others by name ("Hi Kris,") and its own words never name the reader (the reader
    unknown: the first recipient is the one spoken to, any other person may be the reader)."""
    if pattern("copy_note").search(email.body):
        return True
    listed = recipients(email.to)
    if len(listed) < 2:
        return False
    role, group = pattern("role_local_parts"), pattern("group_greeting", at_start=True)
    reader = [r for r in listed if r.address == email.reader]
    spoken = [r for r in listed if r not in reader] if reader else listed[:1]
    rest = [r for r in listed if r not in spoken]
    # A name they share greets them all ("Dear Mr and Mrs Raman"), a group word ("All Staff")
    # none; a role or team mailbox (Timetabling <timetabling@…>) is named in passing.
    mailboxes = [r for r in rest if role.search(r.local) or r.name.lower() == r.local]
    persons = [r for r in rest if r in reader or r not in mailboxes]
    spoken_names, rest_names, reader_names = (
        {w for r in rs for w in r.names if not group.match(w)} for rs in (spoken, rest, persons)
    )
    opening = next((line for line in email.body.splitlines() if line.strip()), "")
    spoken_to = names_any(spoken_names - rest_names, opening)
    return spoken_to and not names_any(reader_names - spoken_names, own_words(email.body))


def group_chatter(email: TriageEmail) -> bool:
    """A reply to a group in a few words of its own ("+1", "thanks!", "remove me"): chatter."""
    short = len(own_words(email.body).split()) <= table()["chatter_words"]
    return short and email.is_reply and group_addressed(email)


def from_organisation(email: TriageEmail) -> str | None:
    """Why the sender is an organisation (bulk mail, an automated or a role address), or None."""
    if bulk_mail(email):
        return "bulk mail (an unsubscribe footer)"
    address = email_address(email.author)
    local = address.partition("@")[0]
    greets = _greets(email, "personal") and not _greets(email, "group")
    templated = any(pattern(f"{k}_local_parts").search(local) for k in ("machine", "transactional"))
    # A no-reply, orders@ or receipts@ greets the reader by name from a template; support@ may
    # be a person writing. Whoever says their mail is automated is no person (orderstatus@).
    machine = pattern("machine_note").search(own_words(email.body))
    if machine or (pattern("role_local_parts").search(local) and not (greets and not templated)):
        return f"{'an automated sender' if machine else 'a role address'} ({address})"
    return None


def org_domain(address: str) -> str:
    """An address's organisation domain: mail labels dropped (news.shop.example → shop.example)."""
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


def from_inside(email: TriageEmail) -> bool:
    """The sender is of a recipient's organisation (its office in any country)."""
    sender = org_domain(email.author)
    return any(emails.same_organisation(sender, d) for d in recipient_domains(email))


def asks(email: TriageEmail) -> list[str]:
    """What the email asks of the reader, in words (boilerplate such as "Questions?" aside)."""
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


@cache
def examples() -> list[Example]:
    """Every example email of the table's categories."""
    kinds = table()["categories"].items()
    return [
        Example(n, Classification(c["action"]), c["rule"], t)
        for n, c in kinds
        for t in c["examples"]
    ]


@cache
def _index() -> tables.Examples:
    return tables.Examples(e.text for e in examples())


def model_text(email: TriageEmail) -> str:
    """What the model and the examples read: subject and body, quoted titles left out."""
    text = re.sub(table()["model"]["left_out"], "it", f"{email.subject}: {email.body}")
    return " ".join(text.split())[:600]


def nearest_example(vector: np.ndarray, embedder: Embedder, action: Classification) -> str:
    """The table's example of `action` nearest to the email embedded as `vector`, in words."""
    similarities = _index().vectors(embedder) @ vector
    same = (i for i, e in enumerate(examples()) if e.action is action)
    e = examples()[index := max(same, key=similarities.__getitem__)]
    return f'its nearest example is {e.category} ({e.rule}; {similarities[index]:.2f}): "{e.text}"'


def branch(email: TriageEmail) -> str:
    """Which part of the rules decides `email`; `model.branches` are learned from examples."""
    inside, reply, said = from_inside(email), pattern("explicit_reply"), email.own_text
    steps: list[tuple[str, Callable[[], object]]] = [
        ("rule", lambda: exact_rule(email)),
        (
            "organisation_asks",
            lambda: from_organisation(email) and not bulk_mail(email) and reply.search(said),
        ),
        ("organisation", lambda: from_organisation(email)),
        ("copied", lambda: copied_only(email)),
        ("chatter", lambda: group_chatter(email)),
        ("no_ask", lambda: not asks(email)),
        ("group_asks", lambda: group_addressed(email) and reply.search(said)),
        ("customer", lambda: pattern("customer_question").search(email.text)),
        ("pitch", lambda: not inside and pattern("pitch_ask").search(email.text)),
    ]
    return next((name for name, holds in steps if holds()), "ask")


def classify(email: TriageEmail, embedder: Embedder) -> tuple[Classification, str]:
    """The general decision and its reason, in words."""
    where, wanted, organisation = branch(email), ", ".join(asks(email)), from_organisation(email)
    if where == "rule" and (rule := exact_rule(email)):
        return rule[0], f"the exact rule for {rule[1]} fired"
    fixed = {
        "organisation_asks": (RESPOND, f"it is {organisation}, asking outright for a reply"),
        "copied": (IGNORE, "the reader is only copied on a thread that asks them nothing directly"),
        "chatter": (IGNORE, "a person's short reply to a group: thread chatter"),
        "group_asks": (RESPOND, f"it asks its group to reply in so many words ({wanted})"),
        "customer": (RESPOND, f"a customer asks about what the reader offers: {wanted}"),
        "pitch": (IGNORE, f"an outside sender asks ({wanted}) for a call, as a pitch does"),
    }
    if where in fixed:
        return fixed[where]
    who = {
        "organisation": f"it is {organisation}",
        "no_ask": "a person wrote it and asks nothing of the reader",
        "ask": f"a person wrote it and asks: {wanted}",
    }[where]
    vector = np.asarray(embedder.embed([model_text(email)])[0], dtype=np.float32)
    scores = fitting.predict(model(embedder)[where], np.append(vector, signals(email)))
    action = decide(scores)
    said = ", ".join(f"{c.value} {s:.2f}" for c, s in zip(CLASSES, scores, strict=True))
    like = nearest_example(vector, embedder, action)
    return action, f"{who}; the model of such mail scores {said}; {like}"


CLASSES = (RESPOND, NOTIFY, IGNORE)
SENDER_KINDS = ("marketing", "transactional")  # `senders.{kind}_local_parts`


def signals(email: TriageEmail) -> list[float]:
    """What the model knows besides the words: a colleague, an outsider on a public mail domain,
    bulk mail, a reply, sent to a group, a marketing or transactional role address."""
    domain, local = org_domain(email.author), email_address(email.author).partition("@")[0]
    inside = from_inside(email)
    kinds = [pattern(f"{kind}_local_parts").search(local) for kind in SENDER_KINDS]
    found = [inside, public_domain(domain) and not inside, bulk_mail(email), email.is_reply]
    found.append(group_addressed(email))
    return [float(bool(signal)) for signal in found + kinds]


@cache
def training() -> list[tuple[TriageEmail, Classification]]:
    """The labelled emails the model learns from (`model.training`), variants included."""
    from memoir.triage_eval import labelled_items  # it imports this module

    items = labelled_items(DATA / name for name in table()["model"]["training"])
    return [
        (TriageEmail(i.email.author, i.email.to, i.email.subject, i.email.body), i.label)
        for i in items
    ]


Row = tuple[str, list[float], Classification]  # an email's branch, signals and label


def fit(rows: list[Row], vectors: np.ndarray, embedder: Embedder) -> dict[str, np.ndarray]:
    """Each learned branch's weights: a ridge regression from an email's embedding (`vectors`,
    one per row) and `signals` to its label, over the branch's rows (and the table's examples,
    without signals, for the branches of `model.examples_in`)."""
    settings = table()["model"]
    targets = np.array([[float(e.action is c) for c in CLASSES] for e in examples()])
    blank = np.zeros((len(targets), len(signals(TriageEmail("", "", "", "")))), np.float32)
    shared, weights = np.hstack([_index().vectors(embedder), blank]), {}
    for name in settings["branches"]:
        mine = [i for i, row in enumerate(rows) if row[0] == name]
        cut = 0 if name in settings["examples_in"] else len(targets)
        x = np.vstack([np.hstack([vectors[mine], [rows[i][1] for i in mine]]), shared[cut:]])
        y = np.vstack([[[float(rows[i][2] is c) for c in CLASSES] for i in mine], targets[cut:]])
        weights[name] = fitting.ridge(x, y, settings["ridge"])
    return weights


_fitted: dict[int, tuple[Embedder, dict[str, np.ndarray]]] = {}
_fitting = threading.Lock()  # one fit per embedder, however many triage threads wait for it
DATA = Path(__file__).parents[1] / "data"
SHIPPED = DATA / "triage_model.npz"  # the fit for the bundled MiniLM: `make triage-model`


def model_fingerprint() -> str:
    """What the model is fitted from: the table, the labelled files and the code that reads
    them (a change to any makes the shipped fit stale)."""
    sources = [DATA / "triage_examples.yaml", Path(__file__), DATA.parent / "emails.py"]
    sources += [DATA / name for name in table()["model"]["training"]]
    return fitting.fingerprint(*(path.read_bytes() for path in sources))


def fitted(embedder: Embedder) -> dict[str, np.ndarray]:
    """The weights fitted on `training()` by `embedder` (~10 s for the bundled MiniLM)."""
    texts = tables.Examples(model_text(email) for email, _label in training())
    rows = [(branch(email), signals(email), label) for email, label in training()]
    return fit(rows, texts.vectors(embedder), embedder)


def model(embedder: Embedder) -> dict[str, np.ndarray]:
    """The weights for `embedder`: the shipped fit for the bundled MiniLM, else fitted once."""
    with _fitting:
        known = _fitted.get(id(embedder))
        if known is not None and known[0] is embedder:
            return known[1]
        bundled = getattr(embedder, "model_path", None) == get_local_embedder().model_path
        weights = fitting.saved(SHIPPED, model_fingerprint()) if bundled else None
        _fitted[id(embedder)] = (embedder, weights or fitted(embedder))
        return _fitted[id(embedder)][1]


def save_model() -> None:
    """Fit the model with the bundled MiniLM and ship it (`make triage-model`)."""
    fitting.save(SHIPPED, model_fingerprint(), fitted(get_local_embedder()))


def decide(scores: np.ndarray, margins: dict[str, float] | None = None) -> Classification:
    """The best of `CLASSES`; notify when notify is within `doubt` of it, or the best two are
    within `unsure` (`unsure_respond` if respond is best) of `margins` (default `model`)."""
    settings, (best, second) = margins or table()["model"], np.sort(scores)[::-1][:2]
    top = CLASSES[int(np.argmax(scores))]
    unsure = settings["unsure_respond" if top is RESPOND else "unsure"]
    return NOTIFY if scores[1] >= best - settings["doubt"] or best - second < unsure else top


def triage_offline(query: TriageQuery, embedder: Embedder) -> TriageDecision:
    """Classify the email of `query`, explaining which rule, example or lesson decided."""
    from memoir.lessons import deciding_lesson, parse_lessons  # it imports this module

    email = TriageEmail(query.author, query.to, query.subject, query.body, query.reader.lower())
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

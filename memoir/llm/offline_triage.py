"""Offline triage skill: seed 000's router as explainable rules plus learned preference lines.

Reads the rendered `TRIAGE_SYSTEM_PROMPT` / `TRIAGE_USER_PROMPT`. General rules first
(newsletters and promotions → ignore; FYI, receipts, deploy and status notifications → notify;
direct questions, requests and meeting requests → respond), then the learned lines of the
`< Rules >` block (`- Ignore: emails like "…" from …`) override them for a similar email: the
same sender, or a subject whose embedding cosine is at least the threshold.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from memoir.embeddings import Embedder, cosine
from memoir.llm._text import email_address, human_texts, normalize_subject, system_text
from memoir.llm.prompts import LEARNED_TRIAGE_RE
from memoir.models import Classification, TriageDecision

SIMILARITY_THRESHOLD = 0.75


@dataclass(frozen=True)
class TriageEmail:
    author: str
    to: str
    subject: str
    body: str


@dataclass(frozen=True)
class LearnedRule:
    line: str
    action: Classification
    subject: str
    author: str


def parse_triage_prompt(messages: list[BaseMessage]) -> tuple[str, TriageEmail]:
    """(the `< Rules >` text, the email) from the rendered triage prompts."""
    system = system_text(messages)
    rules_match = re.search(r"< Rules >\n(.*?)\n</ Rules >", system, re.S)
    rules = rules_match.group(1) if rules_match else ""
    user = "\n\n".join(human_texts(messages))
    start = user.find("Please determine how to handle")
    if start >= 0:
        user = user[start:]

    def field(name: str) -> str:
        m = re.search(rf"^{name}:[ \t]*(.*)$", user, re.M)
        return m.group(1).strip() if m else ""

    subject_line = re.search(r"^Subject:[ \t]*.*$", user, re.M)
    body = user[subject_line.end() :].strip() if subject_line else user
    return rules, TriageEmail(field("From"), field("To"), field("Subject"), body)


def learned_rules(rules: str) -> list[LearnedRule]:
    """The `- Ignore|Notify|Respond: emails like "…" from …` lines, in order."""
    return [
        LearnedRule(
            line=m.group(0).strip(),
            action=Classification(m.group("action").lower()),
            subject=m.group("subject"),
            author=m.group("author"),
        )
        for m in LEARNED_TRIAGE_RE.finditer(rules)
    ]


Marker = tuple[re.Pattern[str], str]


def _markers(*pairs: tuple[str, str]) -> list[Marker]:
    return [(re.compile(p, re.I), label) for p, label in pairs]


IGNORE_MARKERS = _markers(
    (r"\bnewsletters?\b|\bdigest\b", "a newsletter"),
    (r"\bpromo(?:tion|tional|tions)?\b|\bpromo code\b|\bcoupon\b|\bdiscount code\b", "a promotion"),
    (r"\bmarketing\b", "marketing"),
    (
        r"\b\d{1,2}\s?% off\b|\bon sale\b|\bflash sale\b|\bsale ends\b|\bspecial offer\b|"
        r"\bexclusive offer\b|\blimited[- ]time\b|\bfree shipping\b|\bblack friday\b|\bdeals\b",
        "a sales pitch",
    ),
    (
        r"\bspam\b|\byou(?:'ve| have) won\b|\blottery\b|\bclaim your (?:prize|reward)\b|"
        r"\bverify your account\b|\bwire transfer\b|\bact now\b",
        "spam",
    ),
)
NO_ACTION_MARKERS = _markers(
    (
        r"\bno (?:action|response|reply) (?:is )?(?:needed|required)\b|"
        r"\bno need to (?:reply|respond)\b|\bnothing (?:needed|to do) (?:from|on) your\b",
        "says no action is needed",
    ),
)
NOTIFY_MARKERS = _markers(
    (r"\bfyi\b|\bfor your information\b|\bjust so you know\b|\bheads[- ]up\b", "an FYI"),
    (
        r"\breceipt\b|\border confirmation\b|\byour order\b|\bpayment (?:received|confirmation|"
        r"successful)\b|\binvoice\b|\bhas shipped\b|\bsubscription (?:renewed|confirmed)\b",
        "a receipt",
    ),
    (
        r"\bdeploy(?:ment|ed)?\b[^.\n]*\b(?:finished|succeeded|successful|completed|complete|done|"
        r"failed)\b|\bbuild (?:passed|succeeded|failed|finished)\b|\bpipeline (?:passed|"
        r"succeeded|failed)\b",
        "a deploy or build notification",
    ),
    (
        r"\bshared (?:a |the )?(?:document|doc|file|folder|spreadsheet|presentation)\b|"
        r"\bhas shared\b|\bshared with you\b|\binvited you to (?:view|edit)\b",
        "a shared document",
    ),
    (
        r"\bstatus update\b|\bweekly update\b|\bprogress update\b|\bweekly report\b|"
        r"\brelease notes\b|\bchangelog\b|\bhas been merged\b|\bis now live\b",
        "a status update",
    ),
    (r"\bnotification\b|\bautomated message\b|\balert\b", "a notification"),
    (r"\bout of (?:the )?office\b|\bout sick\b|\bon vacation\b|\bon leave\b", "an absence notice"),
    (r"\bannouncement\b|\bannouncing\b", "an announcement"),
)
RESPOND_MARKERS = _markers(
    (r"\b(?:can|could|would|will) you\b", "a direct request"),
    (
        r"\bplease (?:let me know|confirm|review|send|advise|reply|respond|share|take a look|"
        r"check|approve)\b|\blet me know\b",
        "a request for an answer",
    ),
    (
        r"\bare you (?:available|free|around)\b|\bdo you have time\b|\bwhat time works\b|"
        r"\bworks? for you\b|\bmeeting request\b|\bschedule a (?:meeting|call)\b|"
        r"\bset up a (?:meeting|call)\b|\blet'?s (?:meet|catch up|sync)\b|"
        r"\bbook a (?:call|meeting)\b",
        "a meeting request",
    ),
    (
        r"\bwhat do you think\b|\byour (?:input|opinion|feedback|approval|sign-?off)\b|"
        r"\bneed your\b",
        "asks for the user's input",
    ),
    (r"\burgent\b|\basap\b|\bblocker\b|\bis down\b|\boutage\b", "an urgent issue"),
)
AUTOMATED_SENDER = re.compile(
    r"(?:^|[<\s._-])(?:no-?reply|do-?not-?reply|donotreply|mailer-daemon|notifications?|alerts?|"
    r"bounces?)@",
    re.I,
)
BULK_SENDER = re.compile(
    r"(?:^|[<\s._-])(?:news|newsletters?|marketing|promo(?:tions)?|offers|deals)@", re.I
)
BOILERPLATE_QUESTION = re.compile(
    r"^(?:any |have |got )?(?:questions|need help|problems viewing this email|not you|"
    r"trouble viewing(?: this email)?)\?$",
    re.I,
)


def _found(markers: list[Marker], text: str) -> list[str]:
    return [label for pattern, label in markers if pattern.search(text)]


def direct_questions(body: str) -> list[str]:
    """Sentences of `body` that ask the reader something (boilerplate like "Questions?" aside)."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", body)
    return [
        s.strip()
        for s in sentences
        if s.strip().endswith("?") and not BOILERPLATE_QUESTION.match(s.strip())
    ]


def classify_by_rules(email: TriageEmail) -> tuple[Classification, str]:
    """The general rules: a classification and the reason, in words."""
    text = f"{email.subject}\n{email.body}"
    ignore = _found(IGNORE_MARKERS, text)
    if BULK_SENDER.search(email.author):
        ignore.append("a bulk sender address")
    if ignore:
        return Classification.IGNORE, f"it looks like {', '.join(ignore)}"
    no_action = _found(NO_ACTION_MARKERS, text)
    if no_action:
        return Classification.NOTIFY, "it " + ", ".join(no_action) + " but may be worth knowing"
    notify = _found(NOTIFY_MARKERS, text)
    asks = _found(RESPOND_MARKERS, text)
    questions = direct_questions(email.body) + (
        [email.subject] if email.subject.strip().endswith("?") else []
    )
    if questions:
        asks.append(f'a direct question ("{questions[0][:80]}")')
    if AUTOMATED_SENDER.search(email.author):
        urgent = _found(RESPOND_MARKERS[-1:], text)
        if notify or urgent:
            notify = notify + urgent
            return Classification.NOTIFY, (
                f"it is an automated message ({', '.join(notify)}) worth knowing about, "
                "and nobody is waiting for a reply"
            )
        return Classification.IGNORE, "it comes from an automated no-reply sender and asks nothing"
    if asks:
        return Classification.RESPOND, f"it contains {', '.join(dict.fromkeys(asks))}"
    if notify:
        return Classification.NOTIFY, f"it is {', '.join(notify)} with no question for the user"
    if re.search(r"\bunsubscribe\b", text, re.I):
        return Classification.IGNORE, "it is bulk mail (it has an unsubscribe link)"
    return Classification.NOTIFY, (
        "no rule matched strongly: there is no direct question or request, so it is worth "
        "a notification rather than a reply"
    )


def best_learned_rule(
    email: TriageEmail,
    rules: list[LearnedRule],
    embedder: Callable[[], Embedder],
    threshold: float = SIMILARITY_THRESHOLD,
) -> tuple[LearnedRule, str] | None:
    """The learned line that fits `email` best, with why; None when none is similar enough."""
    if not rules:
        return None
    sender = email_address(email.author)
    subjects = [normalize_subject(email.subject)] + [normalize_subject(r.subject) for r in rules]
    vectors = embedder().embed(subjects)
    best: tuple[float, LearnedRule, str] | None = None
    for rule, vector in zip(rules, vectors[1:], strict=True):
        similarity = cosine(vectors[0], vector)
        same_sender = bool(sender) and email_address(rule.author) == sender
        similar = similarity >= threshold
        if not (same_sender or similar):
            continue
        score = (2.0 if same_sender and similar else 1.0 if same_sender else 0.0) + similarity
        why = []
        if same_sender:
            why.append(f"same sender {sender}")
        why.append(
            f"subject similarity {similarity:.2f}"
            + (f" ≥ {threshold:.2f}" if similar else f" < {threshold:.2f}")
        )
        if best is None or score > best[0]:
            best = (score, rule, "; ".join(why))
    return (best[1], best[2]) if best else None


def triage_offline(
    messages: list[BaseMessage],
    embedder: Callable[[], Embedder],
    threshold: float = SIMILARITY_THRESHOLD,
) -> TriageDecision:
    """Classify the email in `messages`, explaining which rule or learned preference fired."""
    rules_text, email = parse_triage_prompt(messages)
    classification, reason = classify_by_rules(email)
    steps = [
        f'1. Email from {email.author or "an unknown sender"} about "{email.subject}".',
        f"2. General rules: {classification.value}, because {reason}.",
    ]
    match = best_learned_rule(email, learned_rules(rules_text), embedder, threshold)
    if match is not None:
        rule, why = match
        if rule.action == classification:
            steps.append(f"3. Learned preference `{rule.line}` agrees ({why}).")
        else:
            steps.append(
                f"3. Learned preference `{rule.line}` applies ({why}) and overrides the general "
                f"rules: {rule.action.value}."
            )
        classification = rule.action
    else:
        steps.append("3. No learned preference matches this sender or subject.")
    steps.append(f"Classification: {classification.value}.")
    return TriageDecision(reasoning="\n".join(steps), classification=classification)

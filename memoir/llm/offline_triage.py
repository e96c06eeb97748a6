"""Offline triage from the typed request (`memoir.triage.TriageQuery`), never a rendered prompt.

`classify`: an exact rule of the table (`memoir.llm.triage_rules`); for an organisation's mail,
its nearest example emails (MiniLM) among notify and ignore (respond only when it asks for a
reply in so many words); for a person's, respond when they ask the reader something, unless an
outside business's mail reads like unsolicited mail; else the nearest examples. Then the most
specific learned lesson whose scope covers the email decides (`memoir.llm.triage_lessons`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from memoir.embeddings import Embedder
from memoir.llm import triage_rules as rules
from memoir.llm.tables import Examples
from memoir.llm.triage_lessons import deciding_lesson, parse_lessons
from memoir.llm.triage_rules import TriageEmail
from memoir.models import Classification, TriageDecision

if TYPE_CHECKING:
    from memoir.triage import TriageQuery

IGNORE, RESPOND = Classification.IGNORE, Classification.RESPOND


class Example(NamedTuple):
    category: str
    action: Classification
    rule: str
    text: str
    unsolicited: bool  # marketing or spam: needs no reply even when it asks something


@cache
def examples() -> list[Example]:
    """Every labelled example email of the table."""
    found = [(n, c, text) for n, c in rules.table()["categories"].items() for text in c["examples"]]
    return [
        Example(n, Classification(c["action"]), c["rule"], text, bool(c.get("unsolicited")))
        for n, c, text in found
    ]


@cache
def _index() -> Examples:
    return Examples(e.text for e in examples())


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
    vote = rules.table()["vote"]
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
    if rule := rules.exact_rule(email):
        return rule[0], f"the exact rule for {rule[1]} fired"
    vote = nearest(email, embedder)
    quiet = vote.best(lambda e: e.action is not RESPOND)
    if organisation := rules.from_organisation(email):
        if rules.pattern("explicit_reply").search(email.text):
            return RESPOND, f"it is {organisation} that asks for a reply in so many words"
        return quiet.action, f"it is {organisation}, no reply needed; {vote.why(quiet)}"
    wanted = ", ".join(rules.asks(email))
    if not wanted:
        return quiet.action, f"a person asks nothing of the reader; {vote.why(quiet)}"
    if rules.group_addressed(email):
        return (top := vote.best()).action, f"it is sent to a group; {vote.why(top)}"
    top, domain = vote.best(), rules.org_domain(email.author)
    outside = not (rules.own_domain(domain, email) or rules.public_domain(domain))
    if outside and top.unsolicited:
        return IGNORE, f"an outside business asks ({wanted}), but {vote.why(top)}"
    return RESPOND, f"a person wrote it and asks: {wanted}"


def triage_offline(query: TriageQuery, embedder: Embedder) -> TriageDecision:
    """Classify the email of `query`, explaining which rule, example or lesson decided."""
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

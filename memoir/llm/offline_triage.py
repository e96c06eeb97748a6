"""Offline triage: seed 000's router as an example table, exact rules and targeted lessons.

Reads the typed request (`memoir.triage.TriageQuery`), never a rendered prompt. `classify`
takes, in order: an exact rule of the table (`memoir.llm.triage_rules`); for an organisation's
mail, its nearest example emails (MiniLM) among notify and ignore, respond only when it asks for
a reply in so many words; for a person's, respond when they ask the reader something, unless an
outside business's email reads like unsolicited mail; else the nearest examples. Then the most
specific learned lesson whose scope covers the email decides (`memoir.llm.triage_lessons`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from memoir.embeddings import Embedder
from memoir.llm.triage_lessons import deciding_lesson, parse_lessons
from memoir.llm.triage_rules import (
    TriageEmail,
    asks,
    exact_rule,
    explicit_reply,
    from_organisation,
    group_addressed,
    org_domain,
    own_domain,
    public_domain,
    table,
)
from memoir.models import Classification, TriageDecision

if TYPE_CHECKING:
    from memoir.triage import TriageQuery

IGNORE, NOTIFY, RESPOND = Classification.IGNORE, Classification.NOTIFY, Classification.RESPOND
QUIET = (NOTIFY, IGNORE)  # what needs no reply


@dataclass(frozen=True)
class Example:
    category: str
    action: Classification
    rule: str
    text: str


@cache
def examples() -> list[Example]:
    """Every labelled example email of the table."""
    categories = table()["categories"].items()
    return [
        Example(n, Classification(c["action"]), c["rule"], t)
        for n, c in categories
        for t in c["examples"]
    ]


_VECTORS: dict[int, tuple[Embedder, np.ndarray]] = {}


def _vectors(embedder: Embedder) -> np.ndarray:
    """The examples' embeddings by `embedder`, computed once per embedder."""
    cached = _VECTORS.get(id(embedder))
    if cached is None or cached[0] is not embedder:
        vectors = np.asarray(embedder.embed([e.text for e in examples()]), dtype=np.float32)
        cached = _VECTORS[id(embedder)] = (embedder, vectors)
    return cached[1]


@dataclass(frozen=True)
class Vote:
    """Each category's score (the mean similarity of its nearest examples), its nearest one."""

    scores: dict[str, float]
    nearest: dict[str, Example]

    def winner(self, among: tuple[Classification, ...] = tuple(Classification)) -> Example:
        """The nearest example of the best category whose action is one of `among`."""
        best = max((c for c in self.scores if self.nearest[c].action in among), key=self.scores.get)
        return self.nearest[best]

    def why(self, among: tuple[Classification, ...] = tuple(Classification)) -> str:
        e, score = self.winner(among), self.scores[self.winner(among).category]
        return f'the nearest examples are {e.category} ({e.rule}; {score:.2f}), closest "{e.text}"'


def nearest(email: TriageEmail, embedder: Embedder) -> Vote:
    """The categories of the examples nearest to `email`, scored by cosine similarity."""
    text = " ".join(f"{email.subject}: {email.body}".split())[:600]
    similarities = _vectors(embedder) @ np.asarray(embedder.embed([text])[0], dtype=np.float32)
    ranked: dict[str, list[int]] = {}
    for index in np.argsort(-similarities):
        ranked.setdefault(examples()[index].category, []).append(int(index))
    top = int(table()["vote"]["neighbours"])
    scores = {c: float(np.mean(similarities[found[:top]])) for c, found in ranked.items()}
    return Vote(scores, {c: examples()[found[0]] for c, found in ranked.items()})


def classify(email: TriageEmail, embedder: Embedder) -> tuple[Classification, str]:
    """The general decision and its reason, in words."""
    if rule := exact_rule(email):
        return rule.action, f"the exact rule for {rule.name} fired"
    vote = nearest(email, embedder)
    if organisation := from_organisation(email):
        if explicit_reply(email):
            return RESPOND, f"it is {organisation} that asks for a reply in so many words"
        return vote.winner(
            QUIET
        ).action, f"it is {organisation}, no reply needed; {vote.why(QUIET)}"
    wanted = ", ".join(asks(email))
    if not wanted:
        return vote.winner(QUIET).action, f"a person asks nothing of the reader; {vote.why(QUIET)}"
    if group_addressed(email):
        return vote.winner().action, f"it is sent to a group; {vote.why()}"
    domain = org_domain(email.author)
    outside_business = not (own_domain(domain, email) or public_domain(domain))
    if outside_business and table()["categories"][vote.winner().category].get("unsolicited"):
        return IGNORE, f"an outside business asks ({wanted}), but {vote.why()}"
    return RESPOND, f"a person wrote it and asks: {wanted}"


def triage_offline(query: TriageQuery, embedder: Embedder) -> TriageDecision:
    """Classify the email of `query`, explaining which rule, example or lesson decided."""
    email = TriageEmail(query.author, query.to, query.subject, query.body)
    general, reason = classify(email, embedder)
    classification = general
    lessons = parse_lessons(query.instructions)
    lesson = deciding_lesson(lessons, email)
    if lesson is None:
        verdict = f"No learned lesson covers this email ({len(lessons)} checked): the rules decide."
    elif lesson.action is classification:
        verdict = f"Lesson `{lesson.line}` covers this email and agrees."
    else:
        verdict = (
            f"Lesson `{lesson.line}` covers this email ({lesson.scope.kind.value} scope) and "
            f"overrides the general rules: {lesson.action.value}."
        )
        classification = lesson.action
    steps = [
        f'1. Email from {email.author or "an unknown sender"} about "{email.subject}".',
        f"2. General rules: {general.value}, because {reason}.",
        f"3. {verdict}",
        f"Classification: {classification.value}.",
    ]
    return TriageDecision(reasoning="\n".join(steps), classification=classification)

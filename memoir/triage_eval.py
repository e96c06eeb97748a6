"""`memoir eval triage`: triage accuracy before and after a person's answers to notify questions.

The file is a JSON list (or `{"emails": [...]}`) of labelled emails in the API's Gmail shape
(`{id?, from, to, subject, body, label}`) or mock shape (`{author, to, subject, email_thread,
label}`), `label` one of respond / notify / ignore, each with an optional `variants` list of
paraphrases (any of `from`/`author`, `to`, `subject`, `body`/`email_thread`; what a variant
leaves out is the original's).

1. Before: every email and variant is triaged with the default preferences.
2. For each simulated person, a fresh user: the emails (not the variants) arrive in file order;
   each one triaged `notify` is a question the person answers as `Person.answer` says, and the
   answer is learned exactly as a turn learns it (`memoir.models.notify.notify_feedback` through
   the preference-update activity).
3. After: every email and variant is triaged again with that user's preferences. An email no
   lesson of the final preference text covers is *out of scope*; its classification must not
   have changed (`out_of_scope_flips`).

The stages (triage, learn, read preferences, make a user) are passed in, so the eval runs the
real activities (the CLI composes them) without `memoir` importing them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memoir.lessons import covering, parse_lessons
from memoir.models import (
    Channel,
    Classification,
    EmailMessage,
    IncomingMessage,
    PreferenceUpdate,
)
from memoir.models.notify import NotifyChoice, notify_feedback

DEFAULT_FILE = Path(__file__).parent / "data" / "triage_eval.json"
LABELS = tuple(Classification)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class TriageDataError(ValueError):
    """The labelled file is missing or malformed; the message says where."""


class _Shape(BaseModel):
    """The fields of either email shape, normalised (`from`/`author`, `body`/`email_thread`)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    sender: str | None = Field(default=None, alias="from")
    to: str | None = None
    subject: str | None = None
    body: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _mock_shape(cls, value: Any) -> Any:
        if isinstance(value, dict):
            value = dict(value)
            if "author" in value and "from" not in value:
                value["from"] = value.pop("author")
            if "email_thread" in value and "body" not in value:
                value["body"] = value.pop("email_thread")
        return value


class LabelledEmail(_Shape):
    """One labelled email with its paraphrased variants."""

    id: str | None = None
    sender: str = Field(alias="from", min_length=1)
    to: str = ""
    subject: str = ""
    body: str = ""
    label: Classification
    variants: list[_Shape] = Field(default_factory=list)


@dataclass(frozen=True)
class EvalItem:
    """An email to triage: an original (`variant` 0) or one of its variants (1, 2 …)."""

    key: str
    email_id: str
    variant: int
    label: Classification
    email: EmailMessage


def load_labelled(path: Path | None = None) -> list[LabelledEmail]:
    """The labelled emails of `path` (default: the bundled set)."""
    path = path or DEFAULT_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TriageDataError(f"{path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise TriageDataError(f"{path}: not JSON ({error})") from None
    if isinstance(raw, dict):
        raw = raw.get("emails")
    if not isinstance(raw, list) or not raw:
        raise TriageDataError(f"{path}: expected a non-empty list of labelled emails")
    emails: list[LabelledEmail] = []
    for index, entry in enumerate(raw):
        try:
            emails.append(LabelledEmail.model_validate(entry))
        except ValidationError as error:
            problem = error.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "email"
            raise TriageDataError(f"{path}: email #{index}: {where}: {problem['msg']}") from None
    return emails


def eval_items(emails: list[LabelledEmail]) -> list[EvalItem]:
    """Every original and variant, as the `EmailMessage` the API would make of it."""
    items: list[EvalItem] = []
    for index, labelled in enumerate(emails):
        email_id = _UNSAFE.sub("-", labelled.id or f"email-{index + 1}").strip("-") or "email"
        for number, shape in enumerate([_Shape(), *labelled.variants]):
            message = EmailMessage(
                email_id=f"{email_id}-v{number}" if number else email_id,
                author=shape.sender or labelled.sender,
                to=shape.to if shape.to is not None else labelled.to,
                subject=shape.subject if shape.subject is not None else labelled.subject,
                body=shape.body if shape.body is not None else labelled.body,
            )
            key = f"{email_id}#{number}"
            items.append(EvalItem(key, email_id, number, labelled.label, message))
    return items


def labelled_items(paths: Iterable[Path]) -> list[EvalItem]:
    """Every original and variant of the labelled files `paths`, in order."""
    return [item for path in paths for item in eval_items(load_labelled(path))]


# ----- the simulated people ------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    """How someone answers a notify question about an email with this label (None: leaves it
    unanswered, so nothing is learned)."""

    name: str
    description: str
    answers: dict[Classification, NotifyChoice | None]

    def answer(self, label: Classification) -> NotifyChoice | None:
        return self.answers[label]


CORRECTOR = Person(
    "corrector",
    "answers only wrong notifications: respond to what needs a reply, ignore junk; leaves right "
    "notifications unanswered",
    {
        Classification.RESPOND: NotifyChoice.RESPOND,
        Classification.NOTIFY: None,
        Classification.IGNORE: NotifyChoice.IGNORE,
    },
)
DISMISSER = Person(
    "dismisser",
    "closes every notification: acknowledges the right ones after reading, ignores junk, "
    "responds to what needs a reply",
    {
        Classification.RESPOND: NotifyChoice.RESPOND,
        Classification.NOTIFY: NotifyChoice.ACKNOWLEDGE,
        Classification.IGNORE: NotifyChoice.IGNORE,
    },
)
PEOPLE = (CORRECTOR, DISMISSER)


# ----- scoring --------------------------------------------------------------------------------

Predictions = dict[str, Classification]
Confusion = dict[str, dict[str, int]]


def accuracy(items: list[EvalItem], predictions: Predictions) -> float | None:
    """The share of `items` whose prediction is their label (None for no items)."""
    if not items:
        return None
    return sum(predictions[i.key] is i.label for i in items) / len(items)


def confusion(items: list[EvalItem], predictions: Predictions) -> Confusion:
    """label → predicted → count, every cell present."""
    table = {label.value: {p.value: 0 for p in LABELS} for label in LABELS}
    for item in items:
        table[item.label.value][predictions[item.key].value] += 1
    return table


def out_of_scope_flips(
    items: list[EvalItem], before: Predictions, after: Predictions, preferences: str
) -> tuple[list[str], list[str]]:
    """(keys of the items no lesson of `preferences` covers, those of them whose classification
    changed): the second must be empty."""
    lessons = parse_lessons(preferences)
    outside = [i.key for i in items if not covering(lessons, i.email)]
    return outside, [key for key in outside if before[key] is not after[key]]


def figures(items: list[EvalItem], predictions: Predictions) -> dict[str, Any]:
    """Accuracy (all, originals, variants) and the confusion matrix of `predictions`."""
    originals = [i for i in items if i.variant == 0]
    variants = [i for i in items if i.variant]
    return {
        "accuracy": accuracy(items, predictions),
        "originals": accuracy(originals, predictions),
        "variants": accuracy(variants, predictions),
        "confusion": confusion(items, predictions),
    }


@dataclass
class PersonResult:
    person: Person
    before: Predictions
    after: Predictions
    items: list[EvalItem]
    answers: Counter[str] = field(default_factory=Counter)
    lessons: list[str] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)
    flips: list[str] = field(default_factory=list)

    def changed(self) -> list[str]:
        """Item keys (and how) whose classification the feedback changed, for the report."""
        return [
            f"{i.key}: {self.before[i.key].value} → {self.after[i.key].value} (label {i.label})"
            for i in self.items
            if self.before[i.key] is not self.after[i.key]
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "person": self.person.name,
            "description": self.person.description,
            "answers": dict(self.answers),
            "after": figures(self.items, self.after),
            "lessons": self.lessons,
            "changed": self.changed(),
            "out_of_scope": len(self.out_of_scope),
            "out_of_scope_flips": self.flips,
        }


@dataclass
class TriageEvalReport:
    items: list[EvalItem]
    before: Predictions
    people: list[PersonResult]

    @property
    def flips(self) -> int:
        return sum(len(p.flips) for p in self.people)

    def to_dict(self) -> dict[str, Any]:
        originals = sum(1 for i in self.items if i.variant == 0)
        return {
            "emails": originals,
            "variants": len(self.items) - originals,
            "labels": dict(Counter(i.label.value for i in self.items if i.variant == 0)),
            "before": figures(self.items, self.before),
            "people": [p.to_dict() for p in self.people],
            "out_of_scope_flips": self.flips,
        }


# ----- running it -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TriageStages:
    """What the eval runs: the real triage and preference-update activities, composed by the
    caller. `triage(user_id, email)` classifies with the user's current preferences."""

    new_user: Callable[[str], Awaitable[str]]
    triage: Callable[[str, EmailMessage], Awaitable[Classification]]
    learn: Callable[[PreferenceUpdate], Awaitable[object]]
    preferences: Callable[[str], Awaitable[str]]


async def classify_all(
    stages: TriageStages, user_id: str, items: list[EvalItem], step: Callable[[], None]
) -> Predictions:
    predictions: Predictions = {}
    for item in items:
        predictions[item.key] = await stages.triage(user_id, item.email)
        step()
    return predictions


async def _answer_notifications(
    stages: TriageStages,
    person: Person,
    user_id: str,
    items: list[EvalItem],
    step: Callable[[], None],
) -> Counter[str]:
    """The emails arrive in order; each notify question gets the person's answer, learned."""
    answers: Counter[str] = Counter()
    for item in (i for i in items if i.variant == 0):
        classification = await stages.triage(user_id, item.email)
        step()
        if classification is not Classification.NOTIFY:
            continue
        choice = person.answer(item.label)
        answers[choice.value if choice else "unanswered"] += 1
        if choice is None:
            continue
        message = IncomingMessage(
            user_id=user_id,
            thread_id=f"eval-{item.email_id}",
            message_id=item.email_id,
            channel=Channel.EMAIL,
            text=item.email.markdown(),
            email=item.email,
        )
        await stages.learn(notify_feedback(choice, message, f"eval-{person.name}-{item.email_id}"))
    return answers


async def run_triage_eval(
    stages: TriageStages,
    emails: list[LabelledEmail],
    step: Callable[[], None] = lambda: None,
    people: tuple[Person, ...] = PEOPLE,
) -> TriageEvalReport:
    """Before, then each person's feedback and after; see the module docstring."""
    items = eval_items(emails)
    before = await classify_all(stages, await stages.new_user("before"), items, step)
    results: list[PersonResult] = []
    for person in people:
        user_id = await stages.new_user(person.name)
        answers = await _answer_notifications(stages, person, user_id, items, step)
        after = await classify_all(stages, user_id, items, step)
        text = await stages.preferences(user_id)
        outside, flips = out_of_scope_flips(items, before, after, text)
        lessons = [lesson.line for lesson in parse_lessons(text)]
        results.append(PersonResult(person, before, after, items, answers, lessons, outside, flips))
    return TriageEvalReport(items, before, results)


def steps_total(emails: list[LabelledEmail], people: tuple[Person, ...] = PEOPLE) -> int:
    """How many triage calls `run_triage_eval` makes (for a progress bar)."""
    items = len(eval_items(emails))
    return items + len(people) * (items + len(emails))

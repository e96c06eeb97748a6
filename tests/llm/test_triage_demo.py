"""The demo's scripted person acts as a sensible one (issue 10): what it teaches agrees with
seed 000's defaults, and the offline triage already agrees with it."""

import pytest

from memoir.demo import DemoEmail, load_inbox, scripted_answer
from memoir.lessons import LESSON_DECISIONS
from memoir.llm import OfflineChatModel
from memoir.models import Classification, EmailMessage
from memoir.stores import DEFAULT_PREFERENCES
from memoir.triage import triage_email

EMAILS = load_inbox().emails


@pytest.mark.parametrize("item", EMAILS, ids=[e.id for e in EMAILS])
def test_a_notify_answer_teaches_what_the_email_deserves(item: DemoEmail) -> None:
    answer = scripted_answer("notify", item.auto, item.person)
    if answer == "expire":  # left unanswered: nothing is learned
        return
    taught, _verb = LESSON_DECISIONS[f"notify.{answer}"]
    assert taught is item.person


def test_a_shared_document_and_a_security_alert_are_acknowledged() -> None:
    by_subject = {e.subject: e for e in EMAILS}
    shared = by_subject["Marco shared a document with you: Q4 roadmap"]
    alert = by_subject["New sign-in to your account from Lisbon"]
    for item in (shared, alert):
        assert scripted_answer("notify", item.auto, item.person) == "acknowledge"
    assert scripted_answer("email", None, Classification.RESPOND) == "yes"


@pytest.mark.parametrize("item", EMAILS, ids=[e.id for e in EMAILS])
async def test_the_default_triage_agrees_with_the_sensible_person(
    offline: OfflineChatModel, item: DemoEmail
) -> None:
    email = EmailMessage(
        email_id=item.id, author=item.sender, to=item.to, subject=item.subject, body=item.body
    )
    decision = await triage_email(offline, email, DEFAULT_PREFERENCES["triage_preferences"])
    assert decision.classification is item.person, decision.reasoning

"""Offline triage: general rules on realistic emails, and learned preference lines."""

import pytest

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.llm.prompts import DEFAULT_TRIAGE_INSTRUCTIONS, LEARNED_TRIAGE_LINE
from memoir.models import Classification, EmailMessage
from memoir.triage import triage_email, triage_messages

EMAILS = [
    (
        "newsletter",
        "The Acme Weekly <news@acme.com>",
        "Acme Weekly: 10 tips for productivity",
        "Hello reader! This week's newsletter brings you 10 tips.\n\nUnsubscribe here.",
        Classification.IGNORE,
    ),
    (
        "promotion",
        "Shop <deals@shop.example>",
        "Flash sale: 50% off everything",
        "Limited time only! Use promo code SAVE50. Questions? Contact us.",
        Classification.IGNORE,
    ),
    (
        "spam",
        "Lottery Intl <winner@lotto.example>",
        "Congratulations, you have won!",
        "You have won $1,000,000. Act now and send your bank details by wire transfer.",
        Classification.IGNORE,
    ),
    (
        "no_reply_digest",
        "Service <no-reply@service.example>",
        "Your weekly account summary",
        "Here is a summary of your account activity this week.",
        Classification.IGNORE,
    ),
    (
        "receipt",
        "Stripe <receipts@stripe.example>",
        "Your receipt from Acme Inc #1234",
        "Amount paid $20.00. Questions? Reply to this email. Unsubscribe",
        Classification.NOTIFY,
    ),
    (
        "deploy_finished",
        "GitHub Actions <noreply@github.example>",
        "Deploy to production finished",
        "The deployment of main@abc123 to production succeeded in 3m12s.",
        Classification.NOTIFY,
    ),
    (
        "shared_document",
        "Google Docs <drive-shares-noreply@google.example>",
        "Maria shared a document with you",
        "Maria Lopez has shared the following document: Q3 roadmap.",
        Classification.NOTIFY,
    ),
    (
        "status_update_no_action",
        "Tom <tom@acme.com>",
        "Weekly status update",
        "Team, the migration is 80% done. No action needed from your side.",
        Classification.NOTIFY,
    ),
    (
        "fyi",
        "Alice <alice@acme.com>",
        "FYI: office closed Monday",
        "FYI, the office will be closed on Monday for maintenance.",
        Classification.NOTIFY,
    ),
    (
        "meeting_request",
        "Dan Smith <dan@acme.com>",
        "Can we meet Thursday?",
        "Hi,\n\nWould you be available Thursday at 2pm to go over the Q3 plan?\n\nDan",
        Classification.RESPOND,
    ),
    (
        "colleague_question",
        "Priya <priya@acme.com>",
        "Question about the API",
        "Quick question: does the /v2/users endpoint support pagination? I can't find it.",
        Classification.RESPOND,
    ),
    (
        "manager_request",
        "Boss <ceo@acme.com>",
        "Budget approval",
        "Please review the attached budget and confirm by Friday. Thanks",
        Classification.RESPOND,
    ),
    (
        "family_question",
        "Mom <mom@family.example>",
        "dinner sunday?",
        "Are you coming for dinner on Sunday? Let me know!",
        Classification.RESPOND,
    ),
]


def email(author: str, subject: str, body: str, email_id: str = "e1") -> EmailMessage:
    return EmailMessage(
        email_id=email_id, author=author, to="ana@me.example", subject=subject, body=body
    )


@pytest.mark.parametrize(
    ("author", "subject", "body", "expected"),
    [e[1:] for e in EMAILS],
    ids=[e[0] for e in EMAILS],
)
async def test_general_rules_classify_realistic_emails(
    offline: OfflineChatModel, author: str, subject: str, body: str, expected: Classification
) -> None:
    decision = await triage_email(
        offline, email(author, subject, body), DEFAULT_TRIAGE_INSTRUCTIONS
    )
    assert decision.classification == expected, decision.reasoning


async def test_reasoning_names_the_rule_that_fired(offline: OfflineChatModel) -> None:
    decision = await triage_email(
        offline,
        email("Stripe <receipts@stripe.example>", "Your receipt #9", "Amount paid $20."),
        DEFAULT_TRIAGE_INSTRUCTIONS,
    )
    assert "receipt" in decision.reasoning
    assert "No learned preference" in decision.reasoning


def learned(action: str, subject: str, author: str) -> str:
    line = LEARNED_TRIAGE_LINE.format(action=action, subject=subject, author=author)
    return DEFAULT_TRIAGE_INSTRUCTIONS + "\n" + line


async def test_learned_ignore_line_overrides_rules_for_similar_subject(
    offline: OfflineChatModel,
) -> None:
    instructions = learned("Ignore", "Weekly status update", "Tom <tom@acme.com>")
    decision = await triage_email(
        offline,
        email("Jane <jane@acme.com>", "Weekly status update - week 3", "No action needed."),
        instructions,
    )
    assert decision.classification == Classification.IGNORE
    assert "Learned preference" in decision.reasoning and "similarity" in decision.reasoning


async def test_learned_respond_line_overrides_rules_for_same_sender(
    offline: OfflineChatModel,
) -> None:
    instructions = learned(
        "Respond", "Deploy to production finished", "CI <noreply@ci.acme.example>"
    )
    decision = await triage_email(
        offline,
        email("CI <noreply@ci.acme.example>", "Nightly build failed", "The build failed."),
        instructions,
    )
    assert decision.classification == Classification.RESPOND
    assert "same sender noreply@ci.acme.example" in decision.reasoning


async def test_learned_line_leaves_unrelated_emails_alone(offline: OfflineChatModel) -> None:
    instructions = learned("Ignore", "Weekly status update", "Tom <tom@acme.com>")
    decision = await triage_email(
        offline,
        email("Dan <dan@acme.com>", "Can we meet Thursday?", "Are you free Thursday at 2pm?"),
        instructions,
    )
    assert decision.classification == Classification.RESPOND
    assert "No learned preference matches" in decision.reasoning


def test_triage_prompt_carries_instructions_and_email_in_seed_format() -> None:
    system, user = triage_messages(
        email("Dan <dan@acme.com>", "Hello", "Body text"), "- Ignore: everything"
    )
    assert "< Rules >\n- Ignore: everything\n</ Rules >" in str(system.content)
    assert str(user.content).startswith("Please determine how to handle the below email thread:")
    assert "From: Dan <dan@acme.com>\nTo: ana@me.example\nSubject: Hello\nBody text" in str(
        user.content
    )


async def test_scripted_triage_answer_passes_through_unchanged() -> None:
    llm = ScriptedChatModel(
        responses={"TriageDecision": [{"reasoning": "scripted", "classification": "notify"}]}
    )
    decision = await triage_email(llm, email("a@b.example", "s", "b"), "rules")
    assert decision.classification == Classification.NOTIFY
    assert "< Rules >\nrules\n</ Rules >" in llm.calls_for("TriageDecision")[0].text

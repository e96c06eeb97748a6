"""Preference updates: one targeted line, never a rewrite; and what triage learns from it."""

from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.llm.prompts import (
    DEFAULT_CAL_PREFERENCES,
    DEFAULT_RESPONSE_PREFERENCES,
    DEFAULT_TRIAGE_INSTRUCTIONS,
    MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT,
    preference_messages,
)
from memoir.models import Classification, EmailMessage
from memoir.preference_update import NAMESPACE_FOR_DECISION, updated_preferences
from memoir.triage import triage_email

JIRA = EmailMessage(
    email_id="e1",
    author="Jira <jira@acme.atlassian.example>",
    to="ana@me.example",
    subject="[JIRA] PROJ-12 status changed to Done",
    body="Bob changed the status of PROJ-12. This is an automated message.",
)


def added_lines(before: str, after: str) -> list[str]:
    old = before.splitlines()
    return [line for line in after.splitlines() if line not in old]


async def test_notify_ignore_keeps_old_text_and_adds_one_scoped_ignore_lesson(
    offline: OfflineChatModel,
) -> None:
    result = await updated_preferences(
        offline,
        "triage_preferences",
        DEFAULT_TRIAGE_INSTRUCTIONS,
        preference_messages("notify.ignore", email=JIRA),
    )
    assert result.user_preferences.startswith(DEFAULT_TRIAGE_INSTRUCTIONS)
    # The seed's text has no "Ignore" heading of its own: the lesson gets one.
    assert added_lines(DEFAULT_TRIAGE_INSTRUCTIONS, result.user_preferences) == [
        "Ignore (learned from your decisions):",
        '- Ignore: emails from jira@acme.atlassian.example (you ignored "[JIRA] PROJ-12 status '
        'changed to Done")',
    ]
    assert "added" in result.chain_of_thought


async def test_opposite_decision_narrows_the_lesson_for_this_email(
    offline: OfflineChatModel,
) -> None:
    first = await updated_preferences(
        offline,
        "triage_preferences",
        DEFAULT_TRIAGE_INSTRUCTIONS,
        preference_messages("notify.ignore", email=JIRA),
    )
    second = await updated_preferences(
        offline,
        "triage_preferences",
        first.user_preferences,
        preference_messages("notify.respond", email=JIRA),
    )
    assert added_lines(first.user_preferences, second.user_preferences) == [
        "Respond (learned from your decisions):",
        '- Respond: emails from jira@acme.atlassian.example with subjects like "* status '
        'changed to Done" (you chose to respond to "[JIRA] PROJ-12 status changed to Done")',
    ]
    after = await triage_email(offline, JIRA, second.user_preferences)
    other = JIRA.model_copy(update={"subject": "[JIRA] PROJ-7 assigned to you"})
    assert after.classification is Classification.RESPOND
    assert (await triage_email(offline, other, second.user_preferences)).classification is (
        Classification.IGNORE
    )


async def test_same_decision_twice_changes_nothing(offline: OfflineChatModel) -> None:
    first = await updated_preferences(
        offline,
        "triage_preferences",
        DEFAULT_TRIAGE_INSTRUCTIONS,
        preference_messages("notify.ignore", email=JIRA),
    )
    again = await updated_preferences(
        offline,
        "triage_preferences",
        first.user_preferences,
        preference_messages("notify.ignore", email=JIRA),
    )
    assert again.user_preferences == first.user_preferences


async def test_email_edit_adds_one_line_describing_the_edit(offline: OfflineChatModel) -> None:
    original = {
        "to": "dan@acme.com",
        "subject": "Re: Thursday",
        "body": "Hi Dan,\n\nThanks for the invitation. I'll check my calendar and "
        "confirm a time shortly.\n\nBest regards,\nAna",
    }
    edited = {**original, "body": "Hey Dan,\n\nThursday works.\n\nCheers,\nAna"}
    result = await updated_preferences(
        offline,
        "response_preferences",
        DEFAULT_RESPONSE_PREFERENCES,
        preference_messages("email.edit", original=original, edited=edited),
    )
    assert added_lines(DEFAULT_RESPONSE_PREFERENCES, result.user_preferences) == [
        '- When replying, prefer: opening with "Hey <name>,"; signing off with "Cheers, Ana"; '
        "shorter emails (about 6 words)"
    ]


async def test_calendar_edit_adds_one_scheduling_line(offline: OfflineChatModel) -> None:
    original = {"title": "Sync", "start": "2025-01-16T09:00:00+01:00", "duration_minutes": 30}
    edited = {**original, "start": "2025-01-16T10:00:00+01:00", "duration_minutes": 15}
    result = await updated_preferences(
        offline,
        "cal_preferences",
        DEFAULT_CAL_PREFERENCES,
        preference_messages("calendar.edit", original=original, edited=edited),
    )
    assert added_lines(DEFAULT_CAL_PREFERENCES, result.user_preferences) == [
        "- When scheduling, prefer: 15-minute meetings; meetings around 10:00"
    ]


async def test_update_call_carries_profile_decision_and_reinforcement() -> None:
    llm = ScriptedChatModel(
        responses={"UserPreferences": [{"chain_of_thought": "ok", "user_preferences": "A\nB"}]}
    )
    await updated_preferences(
        llm, "triage_preferences", "A", preference_messages("notify.ignore", email=JIRA)
    )
    seen = llm.calls_for("UserPreferences")[0].text
    assert "# Process current profile for triage_preferences\n<memory_profile>\nA\n" in seen
    assert "**Subject**: [JIRA] PROJ-12 status changed to Done" in seen
    assert "Decision: notify.ignore" in seen
    assert seen.rstrip().endswith(MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT)


async def test_model_rewrite_of_the_profile_is_refused() -> None:
    current = "\n".join(f"- rule {i}" for i in range(10))
    llm = ScriptedChatModel(
        responses={"UserPreferences": [{"chain_of_thought": "rewrote", "user_preferences": "new"}]}
    )
    result = await updated_preferences(
        llm, "triage_preferences", current, preference_messages("notify.ignore", email=JIRA)
    )
    assert result.user_preferences == current
    assert "Refused" in result.chain_of_thought


async def test_triage_follows_the_line_learned_from_an_ignore(
    offline: OfflineChatModel,
) -> None:
    before = await triage_email(offline, JIRA, DEFAULT_TRIAGE_INSTRUCTIONS)
    learned = await updated_preferences(
        offline,
        "triage_preferences",
        DEFAULT_TRIAGE_INSTRUCTIONS,
        preference_messages("notify.ignore", email=JIRA),
    )
    similar = JIRA.model_copy(
        update={"email_id": "e2", "subject": "[JIRA] PROJ-99 status changed to In Review"}
    )
    after = await triage_email(offline, similar, learned.user_preferences)
    assert before.classification == Classification.NOTIFY
    assert after.classification == Classification.IGNORE
    assert "Lesson `- Ignore: emails from jira@acme.atlassian.example" in after.reasoning


def test_every_decision_maps_to_the_seed_namespace() -> None:
    assert NAMESPACE_FOR_DECISION["notify.ignore"] == "triage_preferences"
    assert NAMESPACE_FOR_DECISION["email.edit"] == "response_preferences"
    assert NAMESPACE_FOR_DECISION["calendar.feedback"] == "cal_preferences"
    assert NAMESPACE_FOR_DECISION["question.ignore"] == "triage_preferences"

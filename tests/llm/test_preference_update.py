"""Preference updates: targeted lines, never a rewrite; triage lessons; only general feedback."""

from typing import Any

import pytest

from memoir.embeddings import LocalEmbedder
from memoir.llm import OfflineChatModel, ScriptedChatModel
from memoir.llm.offline_preferences import (
    clauses,
    learn_from_feedback,
    read_calendar_rules,
    read_response_style,
)
from memoir.llm.prompts import (
    DEFAULT_CAL_PREFERENCES,
    DEFAULT_RESPONSE_PREFERENCES,
    DEFAULT_TRIAGE_INSTRUCTIONS,
    MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT,
)
from memoir.models import Classification, EmailMessage, PreferenceUpdate
from memoir.planner import make_plan
from memoir.preference_update import (
    NAMESPACE_FOR_DECISION,
    preference_request,
    request_for_update,
    updated_preferences,
)
from memoir.triage import triage_email

JIRA = EmailMessage(
    email_id="e1",
    author="Jira <jira@acme.atlassian.example>",
    to="ana@me.example",
    subject="[JIRA] PROJ-12 status changed to Done",
    body="Bob changed the status of PROJ-12. This is an automated message.",
)
DRAFT = {
    "to": "dan@acme.com",
    "subject": "Re: Thursday",
    "body": "Hi Dan,\n\nThanks for the invitation. I'll check my calendar and "
    "confirm a time shortly.\n\nBest regards,\nAna",
}


def added_lines(before: str, after: str) -> list[str]:
    old = before.splitlines()
    return [line for line in after.splitlines() if line not in old]


async def test_notify_ignore_keeps_old_text_and_adds_one_scoped_ignore_lesson(
    offline: OfflineChatModel,
) -> None:
    request = preference_request(
        "triage_preferences", DEFAULT_TRIAGE_INSTRUCTIONS, "notify.ignore", email=JIRA
    )
    result = await updated_preferences(offline, request)
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
        preference_request(
            "triage_preferences", DEFAULT_TRIAGE_INSTRUCTIONS, "notify.ignore", email=JIRA
        ),
    )
    second = await updated_preferences(
        offline,
        preference_request(
            "triage_preferences", first.user_preferences, "notify.respond", email=JIRA
        ),
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
    ignore = "notify.ignore"
    first = await updated_preferences(
        offline,
        preference_request("triage_preferences", DEFAULT_TRIAGE_INSTRUCTIONS, ignore, email=JIRA),
    )
    again = await updated_preferences(
        offline,
        preference_request("triage_preferences", first.user_preferences, ignore, email=JIRA),
    )
    assert again.user_preferences == first.user_preferences


async def test_email_edit_learns_the_greeting_sign_off_and_length_not_the_wording(
    offline: OfflineChatModel,
) -> None:
    edited = {**DRAFT, "body": "Hey Dan,\n\nThursday works.\n\nCheers,\nAna"}
    request = preference_request(
        "response_preferences",
        DEFAULT_RESPONSE_PREFERENCES,
        "email.send.edit",
        original=DRAFT,
        edited=edited,
    )
    result = await updated_preferences(offline, request)
    added = added_lines(DEFAULT_RESPONSE_PREFERENCES, result.user_preferences)
    assert added == [
        '- Sign off emails with "Cheers, Ana".',
        '- Open emails with "Hey <name>,".',
        "- Keep emails short.",
    ]
    style = read_response_style(result.user_preferences)
    assert (style.sign_off, style.greeting, style.tone) == ("Cheers, Ana", "Hey <name>,", "brief")
    assert "Thursday works" not in result.user_preferences


async def test_an_edit_of_the_sign_off_replaces_the_learned_sign_off(
    offline: OfflineChatModel,
) -> None:
    profile = DEFAULT_RESPONSE_PREFERENCES + '\n- Sign off emails with "Best, Ana".'
    edited = {**DRAFT, "body": DRAFT["body"].replace("Best regards,", "Warmly,")}
    request = preference_request(
        "response_preferences", profile, "email.edit", original=DRAFT, edited=edited
    )
    result = await updated_preferences(offline, request)
    assert result.user_preferences == (
        DEFAULT_RESPONSE_PREFERENCES + '\n- Sign off emails with "Warmly, Ana".'
    )
    assert read_response_style(result.user_preferences).sign_off == "Warmly, Ana"


async def test_an_edit_of_the_wording_only_learns_nothing(offline: OfflineChatModel) -> None:
    edited = {**DRAFT, "body": DRAFT["body"].replace("shortly", "by Friday")}
    request = preference_request(
        "response_preferences",
        DEFAULT_RESPONSE_PREFERENCES,
        "email.edit",
        original=DRAFT,
        edited=edited,
    )
    result = await updated_preferences(offline, request)
    assert result.user_preferences == DEFAULT_RESPONSE_PREFERENCES
    assert "nothing general" in result.chain_of_thought


async def test_calendar_edit_learns_the_meeting_length_not_the_time(
    offline: OfflineChatModel,
) -> None:
    original = {"title": "Sync", "start": "2025-01-16T09:00:00+01:00", "duration_minutes": 30}
    edited = {**original, "start": "2025-01-16T10:00:00+01:00", "duration_minutes": 15}
    request = preference_request(
        "cal_preferences",
        DEFAULT_CAL_PREFERENCES,
        "calendar.edit",
        original=original,
        edited=edited,
    )
    result = await updated_preferences(offline, request)
    assert added_lines(DEFAULT_CAL_PREFERENCES, result.user_preferences) == [
        "- Meetings last 15 minutes."
    ]
    assert read_calendar_rules(result.user_preferences).meeting_minutes == 15


async def test_feedback_on_this_draft_writes_nothing_permanent(offline: OfflineChatModel) -> None:
    for feedback in ("Propose Thursday 3pm works", "Tell him I can't make it tomorrow"):
        request = preference_request(
            "response_preferences",
            DEFAULT_RESPONSE_PREFERENCES,
            "email.feedback",
            original=DRAFT,
            feedback=feedback,
        )
        result = await updated_preferences(offline, request)
        assert result.user_preferences == DEFAULT_RESPONSE_PREFERENCES
        assert "revises this draft only" in result.chain_of_thought


async def test_mixed_feedback_keeps_only_the_general_clause(offline: OfflineChatModel) -> None:
    request = preference_request(
        "response_preferences",
        DEFAULT_RESPONSE_PREFERENCES,
        "email.feedback",
        original=DRAFT,
        feedback="Propose Thursday 3pm works, and keep it shorter",
    )
    result = await updated_preferences(offline, request)
    assert added_lines(DEFAULT_RESPONSE_PREFERENCES, result.user_preferences) == [
        "- Keep emails short."
    ]
    assert "Thursday" not in result.user_preferences
    assert read_response_style("- Keep emails short.").tone == "brief"


@pytest.mark.parametrize(
    ("namespace", "feedback", "line", "field", "value"),
    [
        (
            "response_preferences",
            'Always sign off with "Best, Sam"',
            '- Sign off emails with "Best, Sam".',
            "sign_off",
            "Best, Sam",
        ),
        (
            "response_preferences",
            "be a bit warmer",
            "- Write emails in a warm tone.",
            "tone",
            "warm",
        ),
        (
            "cal_preferences",
            "I prefer 45-minute meetings",
            "- Meetings last 45 minutes.",
            "meeting_minutes",
            45,
        ),
        (
            "cal_preferences",
            "no calls on Fridays please",
            "- Avoid meetings on Fridays.",
            "avoid_days",
            ["Friday"],
        ),
        (
            "cal_preferences",
            "always invite dana@example.com",
            "- Invite dana@example.com to meetings by default.",
            "default_attendees",
            ["dana@example.com"],
        ),
    ],
)
async def test_general_feedback_writes_one_canonical_line_the_readers_understand(
    offline: OfflineChatModel, namespace: str, feedback: str, line: str, field: str, value: object
) -> None:
    decision = "email.feedback" if namespace == "response_preferences" else "calendar.feedback"
    result = await updated_preferences(
        offline, preference_request(namespace, "", decision, feedback=feedback)
    )
    assert result.user_preferences == line
    reader = read_response_style if namespace == "response_preferences" else read_calendar_rules
    assert getattr(reader(result.user_preferences), field) == value


async def test_days_to_avoid_are_merged_into_one_line(offline: OfflineChatModel) -> None:
    profile = "- Meetings last 30 minutes.\n- Avoid meetings on Fridays."
    request = preference_request(
        "cal_preferences", profile, "calendar.feedback", feedback="never on Mondays"
    )
    result = await updated_preferences(offline, request)
    assert result.user_preferences == (
        "- Meetings last 30 minutes.\n- Avoid meetings on Fridays and Mondays."
    )
    assert read_calendar_rules(result.user_preferences).avoid_days == ["Monday", "Friday"]


def test_feedback_is_cut_into_clauses_but_never_inside_a_sign_off() -> None:
    assert clauses("Propose Thursday 3pm works, and keep it shorter") == [
        "Propose Thursday 3pm works",
        "keep it shorter",
    ]
    assert clauses('Sign off with "Best, Sam"; no emojis. Thanks!') == [
        'Sign off with "Best, Sam"',
        "no emojis",
        "Thanks",
    ]
    assert clauses("avoid Mondays and Fridays") == ["avoid Mondays and Fridays"]


def test_feedback_about_the_draft_is_judged_draft_only(embedder: LocalEmbedder) -> None:
    for feedback in ("move it to 4pm", "make it 30 minutes", "add sam@acme.com to the invite"):
        [learned] = learn_from_feedback(feedback, "cal_preferences", embedder)
        assert learned.kind == "draft", learned.why


async def test_workflow_messages_become_a_typed_request(offline: OfflineChatModel) -> None:
    proposed = {"to": "Dan", "subject": "Re: Thursday?", "body": "Hi Dan,\n\nYes.\n\nBest,\nAna"}
    edited = {**proposed, "body": "Hi Dan,\n\nYes.\n\nCheers,\nAna"}
    update = PreferenceUpdate(
        user_id="u1",
        namespace="response_preferences",
        decision="email.send.edit",
        messages=[f"Proposed email.send: {proposed}", f"Edited to: {edited}"],
        turn_id="t1",
    )
    request = request_for_update(update, DEFAULT_RESPONSE_PREFERENCES)
    assert (request.decision, request.original, request.edited) == (
        "email.edit",
        proposed,
        edited,
    )
    result = await updated_preferences(offline, request)
    assert result.user_preferences.endswith('\n- Sign off emails with "Cheers, Ana".')


def test_a_notify_update_gets_its_lesson_and_keeps_its_words_as_context() -> None:
    update = PreferenceUpdate(
        user_id="u1",
        namespace="triage_preferences",
        decision="notify.ignore",
        messages=[JIRA.markdown(), "The user ignored this notification."],
        turn_id="t1",
        email=JIRA,
    )
    request = request_for_update(update, "RULES")
    assert request.lesson is not None and request.lesson.action is Classification.IGNORE
    assert request.context == ["The user ignored this notification."]


async def test_update_call_carries_profile_decision_lesson_and_reinforcement() -> None:
    llm = ScriptedChatModel(
        responses={"UserPreferences": [{"chain_of_thought": "ok", "user_preferences": "A\nB"}]}
    )
    await updated_preferences(
        llm, preference_request("triage_preferences", "A", "notify.ignore", email=JIRA)
    )
    seen = llm.calls_for("UserPreferences")[0].text
    assert "# Process current profile for triage_preferences\n<memory_profile>\nA\n" in seen
    assert "**Subject**: [JIRA] PROJ-12 status changed to Done" in seen
    assert "Decision: notify.ignore" in seen
    assert "- Ignore: emails from jira@acme.atlassian.example" in seen
    assert seen.rstrip().endswith(MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT)


async def test_model_rewrite_of_the_profile_is_refused() -> None:
    current = "\n".join(f"- rule {i}" for i in range(10))
    llm = ScriptedChatModel(
        responses={"UserPreferences": [{"chain_of_thought": "rewrote", "user_preferences": "new"}]}
    )
    result = await updated_preferences(
        llm, preference_request("triage_preferences", current, "notify.ignore", email=JIRA)
    )
    assert result.user_preferences.startswith(current)
    assert "Refused" in result.chain_of_thought


async def test_triage_follows_the_line_learned_from_an_ignore(
    offline: OfflineChatModel,
) -> None:
    before = await triage_email(offline, JIRA, DEFAULT_TRIAGE_INSTRUCTIONS)
    learned = await updated_preferences(
        offline,
        preference_request(
            "triage_preferences", DEFAULT_TRIAGE_INSTRUCTIONS, "notify.ignore", email=JIRA
        ),
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


async def test_the_next_reply_follows_what_an_edit_and_feedback_taught(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    edited = {**DRAFT, "body": DRAFT["body"].replace("Best regards,", "Cheers,")}
    learned = await updated_preferences(
        offline,
        preference_request(
            "response_preferences",
            DEFAULT_RESPONSE_PREFERENCES,
            "email.edit",
            original=DRAFT,
            edited=edited,
        ),
    )
    meeting = await updated_preferences(
        offline,
        preference_request(
            "cal_preferences",
            DEFAULT_CAL_PREFERENCES,
            "calendar.feedback",
            feedback="Move it to 4pm, and I prefer 45-minute meetings",
        ),
    )
    assert "4pm" not in meeting.user_preferences
    email = EmailMessage(
        email_id="e9",
        author="Dan Smith <dan@acme.com>",
        to="ana@me.example",
        subject="Budget",
        body="Can you send me the budget numbers?",
    )
    preferences = {
        "response_preferences": learned.user_preferences,
        "cal_preferences": meeting.user_preferences,
    }
    reply = await make_plan(
        offline,
        plan_request(
            email.body, email=email, feedback=[f"Respond to the email: {email.markdown()}"]
        ),
        ["email.send"],
        preferences,
    )
    assert reply.steps[0].args["body"].rstrip().endswith("Cheers,\nAna")
    meeting_plan = await make_plan(
        offline,
        plan_request("schedule a sync with Dan tomorrow at 11"),
        ["calendar.schedule"],
        preferences,
    )
    assert meeting_plan.steps[-1].args["duration_minutes"] == 45


async def test_an_edit_without_a_sign_off_learns_no_sign_off(offline: OfflineChatModel) -> None:
    edited = {**DRAFT, "body": "Hi Dan,\n\nThursday works."}
    request = preference_request(
        "response_preferences", "", "email.edit", original=DRAFT, edited=edited
    )
    result = await updated_preferences(offline, request)
    assert result.user_preferences == "- Keep emails short."

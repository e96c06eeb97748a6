"""The offline skills also read the wording the turn workflow uses (not only prompts helpers)."""

from typing import Any

from memoir.llm import OfflineChatModel
from memoir.llm.prompts import DEFAULT_CAL_PREFERENCES, DEFAULT_RESPONSE_PREFERENCES
from memoir.models import EmailMessage, PreferenceNamespace, PreferenceUpdate
from memoir.planner import make_plan
from memoir.preference_update import request_for_update, updated_preferences

EMAIL = EmailMessage(
    email_id="e1",
    author="Dan Smith <dan@acme.com>",
    to="ana@me.example",
    subject="Thursday?",
    body="Are you free Thursday at 2pm?",
)


def _update(
    namespace: PreferenceNamespace, decision: str, messages: list[str], **kwargs: Any
) -> PreferenceUpdate:
    return PreferenceUpdate(
        user_id="u1",
        namespace=namespace,
        decision=decision,
        messages=messages,
        turn_id="t1",
        **kwargs,
    )


async def test_ignored_notify_email_in_plain_words_adds_an_ignore_line(
    offline: OfflineChatModel,
) -> None:
    update = _update(
        "triage_preferences",
        "notify.ignore",
        [EMAIL.markdown(), "The user ignored this email: it should not need their attention."],
        email=EMAIL,
    )
    result = await updated_preferences(offline, request_for_update(update, "RULES"))
    assert result.user_preferences == (
        "RULES\n\nIgnore (learned from your decisions):\n"
        '- Ignore: emails from dan@acme.com (you ignored "Thursday?")\n'
    )


async def test_edit_given_as_python_dicts_adds_a_reply_preference(
    offline: OfflineChatModel,
) -> None:
    proposed = {"to": "Dan", "subject": "Re: Thursday?", "body": "Hi Dan,\n\nYes.\n\nBest,\nAna"}
    edited = {**proposed, "body": "Hi Dan,\n\nYes.\n\nCheers,\nAna"}
    update = _update(
        "response_preferences",
        "email.send.edit",
        [f"Proposed email.send: {proposed}", f"Edited to: {edited}"],
    )
    result = await updated_preferences(
        offline, request_for_update(update, DEFAULT_RESPONSE_PREFERENCES)
    )
    assert result.user_preferences.endswith('\n- Sign off emails with "Cheers, Ana".')


async def test_feedback_line_adds_a_scheduling_preference(offline: OfflineChatModel) -> None:
    update = _update(
        "cal_preferences",
        "calendar.schedule.response",
        ["Proposed calendar.schedule: {'title': 'Sync'}", "User feedback: never on Fridays"],
    )
    result = await updated_preferences(offline, request_for_update(update, DEFAULT_CAL_PREFERENCES))
    assert result.user_preferences == (DEFAULT_CAL_PREFERENCES + "\n- Avoid meetings on Fridays.")


async def test_seed_respond_messages_with_empty_feedback_still_plan_a_reply(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    feedback = [
        f"Respond to the email: {EMAIL.markdown()}",
        "User wants to reply to the email. Use this feedback to respond: ",
    ]
    plan = await make_plan(
        offline, plan_request(EMAIL.body, email=EMAIL, feedback=feedback), ["email.send"]
    )
    (step,) = plan.steps
    assert step.args["to"] == "Dan Smith <dan@acme.com>"
    assert step.args["subject"] == "Re: Thursday?"
    assert "Thanks for the invitation" in step.args["body"]


async def test_approval_feedback_variant_rewrites_the_email_body(
    offline: OfflineChatModel, plan_request: Any
) -> None:
    plan = await make_plan(
        offline,
        plan_request(
            "email Dan that I'll be late",
            feedback=["Feedback on the proposed email.send: say I can't make it today"],
        ),
        ["email.send"],
    )
    assert "I can't make it today." in plan.steps[0].args["body"]

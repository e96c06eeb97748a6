"""`email.send` turns against a real SMTP sink: approve, edit, ignore, and a crash after the send.

A name ("Dan") is resolved against the user's contacts before the approval is asked, so the
approval shows the address that will be used; several matches are asked about first.

The crash tests fail the executing activity after its side effect and before it completes (a
test-only wrapper around the tools): the retry repeats the side effect with the same idempotency
key, and the receiving side keeps one copy (the sink dedupes by Message-ID, the reminders table
by its key).
"""

from collections.abc import AsyncIterator

import pytest
from temporalio.testing import WorkflowEnvironment

from memoir.mail_sink import MailSink
from memoir.models import (
    ExecuteRequest,
    ExecutionResult,
    HitlKind,
    HitlRequest,
    HumanResponse,
    ResolveRequest,
    StepResolution,
    TurnStatus,
    names,
)
from memoir.models.hitl import ActionRequest
from memoir.stores import Stores
from memoir.tools import ToolRegistry
from memoir.tools.email import message_id_for
from temporal import scenarios as plans
from temporal.harness import Harness, running_harness, until
from temporal.histories import activities_run
from workflows.hitl import CANCELLED_REPLY


class CrashAfterSideEffect(ToolRegistry):
    """Runs the real tool, then fails the first attempt of `capability` as a killed worker would."""

    def __init__(self, inner: ToolRegistry, capability: str) -> None:
        super().__init__({})
        self._inner = inner
        self._capability = capability
        self.attempts = 0

    def families(self) -> list[str]:
        return self._inner.families()

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        return await self._inner.resolve(request)

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        result = await self._inner.execute(request)
        if request.step.capability == self._capability:
            self.attempts += 1
            if self.attempts == 1:
                raise RuntimeError("worker killed after the side effect, before completing")
        return result


async def _with_email(harness: Harness) -> Harness:
    harness.user = await harness.stores.users.set_capabilities(
        harness.user.user_id, ["reminders", "email"]
    )
    return harness


@pytest.fixture
async def email_harness(
    time_env: WorkflowEnvironment, stores: Stores, mail_sink: MailSink
) -> AsyncIterator[Harness]:
    async with running_harness(time_env, stores, smtp_port=mail_sink.port) as harness:
        yield await _with_email(harness)


async def _approved_turn(harness: Harness) -> str:
    harness.llm.script("Plan", plans.send_email())
    routed = await harness.send("email dan hello")
    request = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    return routed.turn_id or ""


async def test_approved_email_delivers_exactly_one_message(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    turn_id = await _approved_turn(email_harness)
    result = await email_harness.result(turn_id)
    assert result.status is TurnStatus.COMPLETED
    assert len(result.actions) == 1 and result.actions[0].success
    [message] = mail_sink.messages()
    assert message.message_id == message_id_for(f"{turn_id}:s1")
    assert (message.to, message.subject, message.body.strip()) == ("dan@example.com", "Hi", "Hello")
    assert mail_sink.handler.received == 1


async def test_edited_email_sends_the_edit_and_learns_response_preferences(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    harness.llm.script("Plan", plans.send_email())
    routed = await harness.send("email dan hello")
    request = await harness.pending(routed.turn_id or "")
    edited = {**request.action_request.args, "body": "Hello Dan, see you at 5. Best, Tess"}
    await harness.answer_inbox(
        request, HumanResponse(type="edit", args=ActionRequest(action="email.send", args=edited))
    )
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED
    [message] = mail_sink.messages()
    assert message.body.strip() == "Hello Dan, see you at 5. Best, Tess"
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "response_preferences"
    )
    assert latest.decision == "email.send.edit"


async def test_ignored_email_sends_nothing_and_learns_triage_preferences(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    harness.llm.script("Plan", plans.send_email())
    routed = await harness.send("email dan hello")
    request = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(request, HumanResponse(type="ignore"))
    result = await harness.result(routed.turn_id or "")
    assert result.actions == []
    assert mail_sink.messages() == [] and mail_sink.handler.received == 0
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "triage_preferences"
    )
    assert latest.decision == "email.send.ignore"


async def _asked(harness: Harness, turn_id: str, kind: HitlKind) -> HitlRequest:
    """The turn's pending question once it is of this kind."""

    async def probe() -> HitlRequest | None:
        pending = await harness.pending(turn_id)
        return pending if pending.kind is kind else None

    return await until(probe, f"a {kind} question")


async def _resolutions(harness: Harness, turn_id: str) -> int:
    """How many times the turn ran entity resolution (a local activity since `fast-turn`)."""
    history = await harness.client.get_workflow_handle(turn_id).fetch_history()
    return activities_run(history).count(names.RESOLVE_STEP)


async def test_approval_of_email_dan_shows_the_address_of_the_one_dan(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    await harness.stores.contacts.add(harness.user.user_id, "Dan Brown", "dan@example.com")
    await harness.stores.contacts.add(harness.user.user_id, "Alice Martin", "alice@example.com")
    harness.llm.script("Plan", plans.send_email(to="Dan"))
    routed = await harness.send("email Dan hello")
    turn_id = routed.turn_id or ""
    request = await harness.pending(turn_id)
    assert request.kind is HitlKind.APPROVAL
    assert request.action_request.args["to"] == "Dan Brown <dan@example.com>"
    assert "- **to**: Dan Brown <dan@example.com>" in request.description
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(turn_id)
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success
    [message] = mail_sink.messages()
    assert message.to == "Dan Brown <dan@example.com>"
    assert await _resolutions(harness, turn_id) == 1  # the approved resolution is executed


async def test_two_dans_ask_which_first_then_the_approval_shows_the_chosen_address(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    await harness.stores.contacts.add(harness.user.user_id, "Dan Smith", "dan.smith@example.com")
    await harness.stores.contacts.add(harness.user.user_id, "Dan Brown", "dan.brown@example.org")
    harness.llm.script("Plan", plans.send_email(to="Dan"))
    routed = await harness.send("email Dan hello")
    turn_id = routed.turn_id or ""
    question = await harness.pending(turn_id)
    assert question.kind is HitlKind.DISAMBIGUATION
    assert [o.label for o in question.options] == [
        "Dan Brown <dan.brown@example.org>",
        "Dan Smith <dan.smith@example.com>",
    ]
    await harness.send("2")
    approval = await _asked(harness, turn_id, HitlKind.APPROVAL)
    assert approval.action_request.args["to"] == "Dan Smith <dan.smith@example.com>"
    await harness.answer_inbox(approval, HumanResponse(type="accept"))
    result = await harness.result(turn_id)
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success
    assert [m.to for m in mail_sink.messages()] == ["Dan Smith <dan.smith@example.com>"]
    assert [o.kind for o in result.hitl] == [HitlKind.DISAMBIGUATION, HitlKind.APPROVAL]


async def test_ignoring_which_dan_cancels_the_turn_without_asking_the_approval(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    await harness.stores.contacts.add(harness.user.user_id, "Dan Smith", "dan.smith@example.com")
    await harness.stores.contacts.add(harness.user.user_id, "Dan Brown", "dan.brown@example.org")
    harness.llm.script("Plan", plans.send_email(to="Dan"))
    routed = await harness.send("email Dan hello")
    question = await harness.pending(routed.turn_id or "")
    await harness.answer_inbox(question, HumanResponse(type="ignore"))
    result = await harness.result(routed.turn_id or "")
    assert (result.status, result.reply) == (TurnStatus.COMPLETED, CANCELLED_REPLY)
    assert [o.kind for o in result.hitl] == [HitlKind.DISAMBIGUATION]
    assert result.actions == [] and mail_sink.messages() == []


async def test_feedback_on_the_approval_replans_without_asking_which_dan_again(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    await harness.stores.contacts.add(harness.user.user_id, "Dan Smith", "dan.smith@example.com")
    await harness.stores.contacts.add(harness.user.user_id, "Dan Brown", "dan.brown@example.org")
    harness.llm.script(
        "Plan", plans.send_email(to="Dan"), plans.send_email(to="Dan", body="Hi Dan!")
    )
    routed = await harness.send("email Dan hello")
    turn_id = routed.turn_id or ""
    question = await harness.pending(turn_id)
    await harness.answer_inbox(question, HumanResponse(type="response", args="1"))
    first = await _asked(harness, turn_id, HitlKind.APPROVAL)
    await harness.answer_inbox(first, HumanResponse(type="response", args="say hi Dan"))

    async def second_approval() -> HitlRequest | None:
        pending = await harness.pending(turn_id)
        return pending if pending.hitl_id != first.hitl_id else None

    second = await until(second_approval, "the re-planned approval")
    assert second.kind is HitlKind.APPROVAL
    assert second.action_request.args["to"] == "Dan Brown <dan.brown@example.org>"
    assert second.action_request.args["body"] == "Hi Dan!"
    await harness.answer_inbox(second, HumanResponse(type="accept"))
    result = await harness.result(turn_id)
    assert [o.kind for o in result.hitl] == [
        HitlKind.DISAMBIGUATION,
        HitlKind.APPROVAL,
        HitlKind.APPROVAL,
    ]
    assert [m.to for m in mail_sink.messages()] == ["Dan Brown <dan.brown@example.org>"]


async def test_an_approval_edit_is_sent_and_an_edited_name_is_resolved(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    await harness.stores.contacts.add(harness.user.user_id, "Dan Brown", "dan@example.com")
    await harness.stores.contacts.add(harness.user.user_id, "Alice Martin", "alice@example.com")
    harness.llm.script("Plan", plans.send_email(to="Dan"))
    routed = await harness.send("email Dan hello")
    request = await harness.pending(routed.turn_id or "")
    assert request.action_request.args["to"] == "Dan Brown <dan@example.com>"
    edited = {**request.action_request.args, "to": "Alice", "body": "Hello Alice. Best, Tess"}
    await harness.answer_inbox(
        request, HumanResponse(type="edit", args=ActionRequest(action="email.send", args=edited))
    )
    result = await harness.result(routed.turn_id or "")
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success
    [message] = mail_sink.messages()
    assert message.to == "Alice Martin <alice@example.com>"
    assert message.body.strip() == "Hello Alice. Best, Tess"
    [latest, *_] = await harness.stores.preferences.history(
        harness.user.user_id, "response_preferences"
    )
    assert latest.decision == "email.send.edit"


async def test_a_name_not_in_the_contacts_is_approved_as_planned_then_fails_plainly(
    email_harness: Harness, mail_sink: MailSink
) -> None:
    harness = email_harness
    harness.llm.script("Plan", plans.send_email(to="Zed"))
    routed = await harness.send("email Zed hello")
    request = await harness.pending(routed.turn_id or "")
    assert request.kind is HitlKind.APPROVAL and request.action_request.args["to"] == "Zed"
    await harness.answer_inbox(request, HumanResponse(type="accept"))
    result = await harness.result(routed.turn_id or "")
    [action] = result.actions
    assert not action.success
    assert action.error == "I don't have an email address for 'Zed' in your contacts."
    assert mail_sink.messages() == []


async def test_crash_after_smtp_send_retries_with_the_same_message_id(
    time_env: WorkflowEnvironment, stores: Stores, mail_sink: MailSink
) -> None:
    crash: list[CrashAfterSideEffect] = []

    def wrap(tools: ToolRegistry) -> ToolRegistry:
        crash.append(CrashAfterSideEffect(tools, "email.send"))
        return crash[0]

    async with running_harness(
        time_env, stores, wrap_tools=wrap, smtp_port=mail_sink.port
    ) as harness:
        await _with_email(harness)
        turn_id = await _approved_turn(harness)
        result = await harness.result(turn_id)
    assert result.status is TurnStatus.COMPLETED
    assert result.actions[0].success
    assert crash[0].attempts == 2
    assert mail_sink.handler.received == 2  # sent twice, by the failed attempt and the retry
    assert [m.message_id for m in mail_sink.messages()] == [message_id_for(f"{turn_id}:s1")]


async def test_crash_after_reminder_insert_leaves_one_reminder(
    time_env: WorkflowEnvironment, stores: Stores
) -> None:
    crash: list[CrashAfterSideEffect] = []

    def wrap(tools: ToolRegistry) -> ToolRegistry:
        crash.append(CrashAfterSideEffect(tools, "reminders.create"))
        return crash[0]

    async with running_harness(time_env, stores, wrap_tools=wrap) as harness:
        harness.llm.script("Plan", await harness.remind_plan("water the plants"))
        routed = await harness.send("remind me to water the plants")
        result = await harness.result(routed.turn_id or "")
        reminders = await harness.stores.reminders.list(harness.user.user_id, status=None)
    assert result.status is TurnStatus.COMPLETED and result.actions[0].success
    assert crash[0].attempts == 2
    assert [r.text for r in reminders] == ["water the plants"]

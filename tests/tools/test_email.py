"""`email.send` against a real SMTP sink: delivery, the derived Message-ID, retries, bad input."""

from pathlib import Path

import pytest

from memoir.mail_sink import MailSink, list_messages, store
from memoir.models import ExecuteRequest, PlanStep, ResolveRequest
from memoir.ports import free_port
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools.email import EmailTool, message_id_for, parse_recipient


def tool_for(sink: MailSink) -> EmailTool:
    return EmailTool(
        Settings(smtp_host=sink.host, smtp_port=sink.port, smtp_from="Tess <tess@example.com>")
    )


def step(**args: object) -> PlanStep:
    return PlanStep(id="s1", capability="email.send", args=args)


def execute_request(key: str, **args: object) -> ExecuteRequest:
    return ExecuteRequest(
        turn_id="turn-1",
        user_id="u1",
        thread_id="t1",
        step=step(**args),
        args=args,
        idempotency_key=key,
    )


def resolve_request(**args: object) -> ResolveRequest:
    return ResolveRequest(turn_id="turn-1", user_id="u1", step=step(**args))


async def test_send_delivers_one_message_with_the_derived_message_id(mail_sink: MailSink) -> None:
    result = await tool_for(mail_sink).execute(
        execute_request("turn-1:s1", to="Dan <dan@example.com>", subject="Hi", body="Hello Dan")
    )
    assert result.success, result.error
    [message] = mail_sink.messages()
    assert message.message_id == message_id_for("turn-1:s1")
    assert message.message_id.startswith("<") and message.message_id.endswith("@memoir>")
    assert message.to == "Dan <dan@example.com>"
    assert message.sender == "Tess <tess@example.com>"
    assert (message.subject, message.body.strip()) == ("Hi", "Hello Dan")
    assert "Dan <dan@example.com>" in result.summary and "Hi" in result.summary
    assert result.latest_action is not None
    assert (result.latest_action.capability, result.latest_action.action) == ("email", "send")
    assert result.latest_action.external_ids == {"message_id": message.message_id}


async def test_the_same_key_sent_twice_leaves_one_message(mail_sink: MailSink) -> None:
    tool = tool_for(mail_sink)
    request = execute_request("turn-2:s1", to="dan@example.com", subject="Hi", body="Hello")
    first = await tool.execute(request)
    second = await tool.execute(request)
    assert first.success and second.success
    assert mail_sink.handler.received == 2
    assert mail_sink.handler.duplicates == 1
    assert [m.message_id for m in mail_sink.messages()] == [message_id_for("turn-2:s1")]


async def test_different_keys_are_different_messages(mail_sink: MailSink) -> None:
    tool = tool_for(mail_sink)
    for key in ("turn-3:s1", "turn-4:s1"):
        await tool.execute(execute_request(key, to="dan@example.com", subject="Hi", body="Hi"))
    assert len(mail_sink.messages()) == 2


async def test_unreachable_server_raises_so_the_activity_retries(tmp_path: Path) -> None:
    tool = EmailTool(Settings(smtp_port=free_port(), smtp_timeout_seconds=2))
    with pytest.raises(Exception):  # noqa: B017 - any transport error: Temporal retries it
        await tool.execute(execute_request("k:s1", to="dan@example.com", subject="Hi", body="x"))


@pytest.mark.parametrize(
    ("to", "expected"),
    [
        ("dan@example.com", "dan@example.com"),
        ("Dan Smith <dan@example.com>", "Dan Smith <dan@example.com>"),
        ('"Smith, Dan" <dan@example.com>', '"Smith, Dan" <dan@example.com>'),
    ],
)
async def test_resolve_accepts_plain_and_named_addresses(to: str, expected: str) -> None:
    resolution = await EmailTool(Settings()).resolve(
        resolve_request(to=to, subject="Hi", body="Hello")
    )
    assert resolution.status == "resolved"
    assert resolution.args == {"to": expected, "subject": "Hi", "body": "Hello"}


@pytest.mark.parametrize("to", ["Sarah", "dan@", "dan@example", "Dan <dan>", "a b@example.com", ""])
async def test_resolve_refuses_a_malformed_address_with_a_reason(to: str) -> None:
    resolution = await EmailTool(Settings()).resolve(
        resolve_request(to=to, subject="Hi", body="Hello")
    )
    assert resolution.status == "not_found"
    assert resolution.message
    if to:
        assert f"'{to}'" in resolution.message and "address" in resolution.message


async def test_resolve_needs_a_subject_and_a_body() -> None:
    tool = EmailTool(Settings())
    no_subject = await tool.resolve(resolve_request(to="dan@example.com", body="Hello"))
    no_body = await tool.resolve(resolve_request(to="dan@example.com", subject="Hi"))
    assert no_subject.status == no_body.status == "not_found"
    assert "subject" in (no_subject.message or "") and "body" in (no_body.message or "")


def test_parse_recipient() -> None:
    assert parse_recipient(" dan@example.com ") == ("", "dan@example.com")
    assert parse_recipient("Dan <dan@mail.example.org>") == ("Dan", "dan@mail.example.org")
    assert parse_recipient("Dan") is None


def test_sink_store_dedupes_by_message_id(tmp_path: Path) -> None:
    raw = b"Message-ID: <x@y>\r\nSubject: a\r\n\r\nbody\r\n"
    assert store(tmp_path, "<x@y>", raw) is True
    assert store(tmp_path, "<x@y>", raw + b"changed") is False
    [message] = list_messages(tmp_path)
    assert message.message_id == "<x@y>" and message.body.strip() == "body"
    assert list_messages(tmp_path / "missing") == []


# ----- entity resolution: a name is looked up in the user's contacts -----


async def _contacts_user(stores: Stores, *people: tuple[str, str]) -> str:
    user, _ = await stores.users.create_user("Tess")
    for name, email in people:
        await stores.contacts.add(user.user_id, name, email)
    return user.user_id


def resolve_for(user_id: str, **args: object) -> ResolveRequest:
    return ResolveRequest(turn_id="turn-1", user_id=user_id, step=step(**args))


async def test_a_name_with_one_contact_resolves_to_its_address(stores: Stores) -> None:
    user_id = await _contacts_user(stores, ("Dan Smith", "dan@example.com"))
    tool = EmailTool(Settings(), stores.contacts)
    resolution = await tool.resolve(resolve_for(user_id, to="Dan", subject="Hi", body="Hello"))
    assert resolution.status == "resolved"
    assert resolution.args == {
        "to": "Dan Smith <dan@example.com>",
        "subject": "Hi",
        "body": "Hello",
    }


async def test_a_name_with_two_contacts_gives_candidates_that_set_to(stores: Stores) -> None:
    user_id = await _contacts_user(
        stores, ("Dan Smith", "dan@example.com"), ("Dan Brown", "dbrown@example.org")
    )
    tool = EmailTool(Settings(), stores.contacts)
    resolution = await tool.resolve(resolve_for(user_id, to="Dan", subject="Hi", body="Hello"))
    assert resolution.status == "candidates"
    assert resolution.args == {"subject": "Hi", "body": "Hello"}
    assert [(c.label, c.args) for c in resolution.candidates] == [
        ("Dan Brown <dbrown@example.org>", {"to": "Dan Brown <dbrown@example.org>"}),
        ("Dan Smith <dan@example.com>", {"to": "Dan Smith <dan@example.com>"}),
    ]
    listed = await tool.resolve(
        resolve_for(user_id, to=["ann@example.com", "Dan"], subject="Hi", body="Hello")
    )
    assert [c.args["to"] for c in listed.candidates] == [
        ["ann@example.com", "Dan Brown <dbrown@example.org>"],
        ["ann@example.com", "Dan Smith <dan@example.com>"],
    ]


async def test_an_unknown_name_is_not_found_in_the_contacts(stores: Stores) -> None:
    user_id = await _contacts_user(stores, ("Dan Smith", "dan@example.com"))
    tool = EmailTool(Settings(), stores.contacts)
    resolution = await tool.resolve(resolve_for(user_id, to="Sarah", subject="Hi", body="Hello"))
    assert resolution.status == "not_found"
    assert resolution.message == "I don't have an email address for 'Sarah' in your contacts."
    malformed = await tool.resolve(resolve_for(user_id, to="dan@", subject="Hi", body="Hello"))
    assert malformed.status == "not_found" and "name@example.com" in (malformed.message or "")

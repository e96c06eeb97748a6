"""POST /v1/emails: the Gmail and mock shapes, normalised; mixed or neither shape refused."""

from __future__ import annotations

import hashlib

import httpx
import pytest
from pydantic import TypeAdapter, ValidationError
from temporalio.client import Client

from api.emails import EmailIn, GmailEmail, MockEmail, incoming_email, normalise_email
from memoir.models import Channel, Classification, EmailMessage, ThreadInput
from memoir.models import search_attributes as sa
from memoir.models.names import thread_workflow_id, turn_workflow_id
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, answer, assert_error, finished_view, start_input

GMAIL = {
    "id": "18c2f0a1b2",
    "threadId": "18c2f0a000",
    "from": "Alice <alice@example.com>",
    "to": "me@example.com",
    "subject": "Lunch on Friday?",
    "body": "Are you free for lunch on Friday?",
}
MOCK = {
    "author": "Bob <bob@example.com>",
    "to": "me@example.com",
    "subject": "Quarterly report",
    "email_thread": "The report is attached.",
}
EMAIL_IN: TypeAdapter[GmailEmail | MockEmail] = TypeAdapter(EmailIn)


def test_gmail_shape_normalises_to_email_message() -> None:
    email = EMAIL_IN.validate_python(GMAIL)
    assert isinstance(email, GmailEmail)
    assert normalise_email(email) == EmailMessage(
        email_id="18c2f0a1b2",
        author="Alice <alice@example.com>",
        to="me@example.com",
        subject="Lunch on Friday?",
        body="Are you free for lunch on Friday?",
    )


def test_mock_shape_normalises_to_email_message() -> None:
    email = EMAIL_IN.validate_python({**MOCK, "id": "mock-1"})
    assert isinstance(email, MockEmail)
    assert normalise_email(email) == EmailMessage(
        email_id="mock-1",
        author="Bob <bob@example.com>",
        to="me@example.com",
        subject="Quarterly report",
        body="The report is attached.",
    )


def test_mock_shape_without_id_gets_a_stable_hashed_id() -> None:
    key = "Bob <bob@example.com>\nQuarterly report\nThe report is attached."
    expected = "mock-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    first = normalise_email(EMAIL_IN.validate_python(MOCK))
    again = normalise_email(EMAIL_IN.validate_python(dict(MOCK)))
    assert first.email_id == again.email_id == expected


def test_gmail_email_becomes_an_email_message_on_its_gmail_thread() -> None:
    message = incoming_email("u1", EMAIL_IN.validate_python(GMAIL))
    assert message.thread_id == "email-18c2f0a000"
    assert message.message_id == "18c2f0a1b2"
    assert message.channel is Channel.EMAIL
    assert message.email is not None
    assert message.text == message.email.markdown()
    assert message.text.startswith("**Subject**: Lunch on Friday?\n**From**: Alice")


def test_email_without_thread_id_is_its_own_thread() -> None:
    body = {k: v for k, v in GMAIL.items() if k != "threadId"}
    assert incoming_email("u1", EMAIL_IN.validate_python(body)).thread_id == "email-18c2f0a1b2"
    mock = incoming_email("u1", EMAIL_IN.validate_python(MOCK))
    assert mock.thread_id == "email-" + mock.message_id


def test_gmail_thread_id_is_sanitised_to_the_id_pattern() -> None:
    email = EMAIL_IN.validate_python({**GMAIL, "threadId": "a:b/c d"})
    assert incoming_email("u1", email).thread_id == "email-a-b-c-d"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({**GMAIL, "author": "x"}, id="mixed"),
        pytest.param({"to": "me@example.com", "subject": "hi"}, id="neither"),
    ],
)
def test_mixed_or_neither_shape_is_refused_by_the_model(body: dict[str, str]) -> None:
    with pytest.raises(ValidationError) as caught:
        EMAIL_IN.validate_python(body)
    assert caught.value.errors()[0]["type"] == "email_shape"


async def post(http: httpx.AsyncClient, user: ApiUser, body: object) -> httpx.Response:
    return await http.post("/v1/emails", json=body, headers=user.headers)


async def test_mixed_email_shape_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**GMAIL, "email_thread": "both"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["type"] == "email_shape"
    assert "exactly one email shape" in error["message"]


async def test_neither_email_shape_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {"to": "me@example.com", "subject": "hi"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["type"] == "email_shape"


async def test_missing_field_of_a_shape_is_422_naming_it(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    body = {k: v for k, v in GMAIL.items() if k != "to"}
    error = assert_error(await post(http, user, body), 422, "validation_error")
    assert [(d["field"], d["type"]) for d in error["details"]] == [("gmail.to", "missing")]


async def test_email_id_with_colon_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    error = assert_error(await post(http, user, {**GMAIL, "id": "a:b"}), 422, "validation_error")
    assert error["details"][0]["field"] == "gmail.id"
    assert "':'" in error["details"][0]["reason"]


async def test_email_too_long_for_one_message_is_422(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    body = {**GMAIL, "body": "x" * 20_000}  # the body fits, the markdown around it does not
    error = assert_error(await post(http, user, body), 422, "validation_error")
    assert error["details"][0]["field"] == "text"


async def test_email_is_submitted_to_its_email_thread(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.IGNORE))
    response = await post(http, user, GMAIL)
    assert response.status_code == 202, response.text
    turn_id = turn_workflow_id(user.user_id, "email-18c2f0a000", "18c2f0a1b2")
    assert response.json() == {"turn_id": turn_id, "status": "started"}
    thread_id = thread_workflow_id(user.user_id, "email-18c2f0a000")
    started = await start_input(temporal_client, thread_id, ThreadInput)
    assert (started.thread_id, started.channel) == ("email-18c2f0a000", Channel.EMAIL)
    thread = await temporal_client.get_workflow_handle(thread_id).describe()
    assert thread.typed_search_attributes.get(sa.CHANNEL) == "email"
    await finished_view(http, harness, user, turn_id)
    [triage_call] = harness.llm.calls_for("TriageDecision")
    assert GMAIL["from"] in triage_call and GMAIL["body"] in triage_call


async def test_email_triaged_ignore_ends_ignored(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.IGNORE))
    routed = await post(http, user, GMAIL)
    view = await finished_view(http, harness, user, routed.json()["turn_id"])
    assert (view["status"], view["classification"]) == ("ignored", "ignore")
    assert (view["reply"], view["actions"]) == (None, [])
    assert "Plan" not in harness.llm.schemas_called()


async def test_notify_email_ignored_from_the_inbox_ends_ignored_and_teaches_triage(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await post(http, user, GMAIL)
    request = await harness.pending(routed.json()["turn_id"])
    assert request.kind == "notify"
    response = await answer(http, user, request.hitl_id, {"type": "ignore"})
    assert response.status_code == 202, response.text
    view = await finished_view(http, harness, user, request.turn_id)
    assert (view["status"], view["classification"]) == ("ignored", "notify")
    [latest, *_] = await harness.stores.preferences.history(user.user_id, "triage_preferences")
    assert (latest.decision, latest.turn_id) == ("notify.ignore", request.turn_id)

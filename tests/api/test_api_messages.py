"""POST /v1/messages: validation with clear 4xx, and routing by the real thread workflow."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from temporalio.client import Client

from api.gateway import UNSTORABLE
from memoir.models import Channel, ThreadInput
from memoir.models import search_attributes as sa
from memoir.models.names import thread_workflow_id, turn_workflow_id
from temporal import scenarios as plans
from temporal.harness import Harness, until
from tests.api.support import (
    ApiUser,
    assert_error,
    finished_view,
    get_turn,
    post_message,
    start_input,
    thread_knows,
    thread_state,
)

STALE_REPLY = "I'm not waiting on a question right now — what would you like to do?"
VALID = {"thread_id": "t1", "message_id": "m1", "text": "remind me to call mum"}


async def post(http: httpx.AsyncClient, user: ApiUser, body: object) -> httpx.Response:
    return await http.post("/v1/messages", json=body, headers=user.headers)


async def test_malformed_json_is_400_with_the_parse_error(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    headers = {**user.headers, "Content-Type": "application/json"}
    response = await http.post("/v1/messages", content=b'{"thread_id": "t1",', headers=headers)
    error = assert_error(response, 400, "malformed_json")
    assert "Malformed JSON" in error["message"]
    assert error["details"][0]["reason"]


async def test_non_json_body_is_415(http: httpx.AsyncClient, user: ApiUser) -> None:
    headers = {**user.headers, "Content-Type": "text/plain"}
    response = await http.post("/v1/messages", content=b"hello", headers=headers)
    assert_error(response, 415, "unsupported_media_type")


async def test_unknown_field_is_422_naming_it(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "priority": "high"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"] == [
        {"field": "priority", "reason": "Extra inputs are not permitted", "type": "extra_forbidden"}
    ]


async def test_missing_field_is_422_naming_it(http: httpx.AsyncClient, user: ApiUser) -> None:
    body = {k: v for k, v in VALID.items() if k != "message_id"}
    error = assert_error(await post(http, user, body), 422, "validation_error")
    assert [(d["field"], d["type"]) for d in error["details"]] == [("message_id", "missing")]
    assert "message_id" in error["message"]


async def test_missing_body_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.post("/v1/messages", headers=user.headers)
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "body"


async def test_empty_text_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    error = assert_error(await post(http, user, {**VALID, "text": ""}), 422, "validation_error")
    assert [(d["field"], d["type"]) for d in error["details"]] == [("text", "string_too_short")]


async def test_blank_text_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    error = assert_error(await post(http, user, {**VALID, "text": "  \n"}), 422, "validation_error")
    assert error["details"][0] == {"field": "text", "reason": "must not be blank", "type": "blank"}


async def test_one_megabyte_text_is_422_too_long(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "text": "x" * 1_000_000})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "text"
    assert "20000" in error["details"][0]["reason"]


async def test_body_over_one_mebibyte_is_413(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "text": "x" * (1024 * 1024 + 1)})
    error = assert_error(response, 413, "body_too_large")
    assert "1 MiB" in error["message"]


async def test_body_over_one_mebibyte_without_length_is_413(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit counts bytes
        for _ in range(3):
            yield b"x" * (512 * 1024)

    headers = {**user.headers, "Content-Type": "application/json"}
    response = await http.post("/v1/messages", content=chunks(), headers=headers)
    assert_error(response, 413, "body_too_large")


async def test_id_with_colon_is_422_with_a_reason(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "thread_id": "a:b"})
    error = assert_error(response, 422, "validation_error")
    reason = "must not contain ':', '/' or whitespace"
    assert error["details"] == [{"field": "thread_id", "reason": reason, "type": "id_invalid"}]


async def test_id_with_whitespace_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "message_id": "m 1"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "message_id"


async def test_id_with_a_trailing_newline_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "message_id": "m1\n"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "message_id"


async def test_text_with_a_nul_character_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "text": "hello\u0000there"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"] == [
        {"field": "text", "reason": UNSTORABLE, "type": "string_unstorable"}
    ]


async def test_id_with_a_nul_character_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await post(http, user, {**VALID, "thread_id": "t\u00001"})
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "thread_id"


async def test_email_subject_with_a_lone_surrogate_is_422(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    body = (
        b'{"id": "e1", "from": "Ana <ana@example.com>", "to": "tess@example.com",'
        b' "subject": "hi \\ud800", "body": "hello"}'
    )
    headers = {**user.headers, "Content-Type": "application/json"}
    response = await http.post("/v1/emails", content=body, headers=headers)
    error = assert_error(response, 422, "validation_error")
    assert error["details"][0]["field"] == "text"  # the email as the turn reads it


async def test_message_is_submitted_to_its_thread_by_update_with_start(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("call mum"))
    body = {**VALID, "thread_id": harness.thread_id}
    response = await post(http, user, body)
    assert response.status_code == 202, response.text
    turn_id = turn_workflow_id(user.user_id, harness.thread_id, "m1")
    assert response.json() == {"turn_id": turn_id, "status": "started", "reply": None}

    thread_id = thread_workflow_id(user.user_id, harness.thread_id)
    started = await start_input(temporal_client, thread_id, ThreadInput)
    assert started.model_dump(include={"user_id", "thread_id", "channel"}) == {
        "user_id": user.user_id,
        "thread_id": harness.thread_id,
        "channel": Channel.CHAT,
    }
    assert (started.hitl_ttl_seconds, started.idle_hours, started.max_replans) == (123, 7.5, 2)
    attributes = (
        await temporal_client.get_workflow_handle(thread_id).describe()
    ).typed_search_attributes
    assert attributes.get(sa.USER_ID) == user.user_id
    assert attributes.get(sa.THREAD_ID) == harness.thread_id
    assert attributes.get(sa.CHANNEL) == "chat"
    await finished_view(http, harness, user, turn_id)
    [plan_call] = harness.llm.calls_for("Plan")
    assert VALID["text"] in plan_call


async def test_second_message_joins_the_same_thread_workflow(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("call mum"), plans.remind("buy bread"))
    first = await post_message(http, user, harness.thread_id, "m1", "remind me to call mum")
    second = await post_message(http, user, harness.thread_id, "m2", "remind me to buy bread")
    assert (first.json()["status"], second.json()["status"]) == ("started", "started")
    thread = await temporal_client.get_workflow_handle(
        thread_workflow_id(user.user_id, harness.thread_id)
    ).describe()
    for routed in (first, second):
        await finished_view(http, harness, user, routed.json()["turn_id"])
        turn = await temporal_client.get_workflow_handle(routed.json()["turn_id"]).describe()
        assert (turn.parent_id, turn.parent_run_id) == (thread.id, thread.run_id)
    state = await thread_state(temporal_client, user.user_id, harness.thread_id)
    assert state.seen_count == 2


async def test_same_message_id_twice_is_a_duplicate_of_the_same_turn_and_runs_once(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("file taxes"), plans.remind("file taxes"))
    text = "remind me to file taxes"
    first = await post_message(http, user, harness.thread_id, "dup-1", text)
    again = await post_message(http, user, harness.thread_id, "dup-1", text)
    assert first.json()["status"] == "started"
    assert again.status_code == 202
    assert again.json() == {
        "turn_id": first.json()["turn_id"],
        "status": "duplicate",
        "reply": None,
    }
    view = await finished_view(http, harness, user, first.json()["turn_id"])
    assert view["status"] == "completed"
    reminders = await harness.stores.reminders.list(user.user_id)
    assert [r.text for r in reminders] == ["file taxes"]
    assert len(harness.llm.calls_for("Plan")) == 1


async def test_chat_yes_answers_the_pending_approval_and_the_turn_completes(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("renew passport", approval=True))
    routed = await post_message(
        http, user, harness.thread_id, "m1", "remind me to renew my passport"
    )
    turn_id = routed.json()["turn_id"]
    await thread_knows(harness, await harness.pending(turn_id))
    answered = await post_message(http, user, harness.thread_id, "m2", "yes")
    assert answered.status_code == 202, answered.text
    assert answered.json() == {"turn_id": turn_id, "status": "routed_to_pending", "reply": None}
    view = await finished_view(http, harness, user, turn_id)
    assert view["status"] == "completed"
    assert [(a["capability"], a["success"]) for a in view["actions"]] == [
        ("reminders.create", True)
    ]
    reminders = await harness.stores.reminders.list(user.user_id)
    assert [r.text for r in reminders] == ["renew passport"]


async def test_invalid_chat_answer_is_reasked_with_an_error_under_the_same_hitl_id(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    harness.llm.script("Plan", plans.remind("buy milk", approval=True))
    routed = await post_message(http, user, harness.thread_id, "m1", "remind me to buy milk")
    turn_id = routed.json()["turn_id"]
    request = await harness.pending(turn_id)
    await thread_knows(harness, request)
    reply = await post_message(http, user, harness.thread_id, "m2", "maybe")
    assert reply.status_code == 202, reply.text
    routed_reply = reply.json()
    assert (routed_reply["turn_id"], routed_reply["status"]) == (turn_id, "routed_to_pending")
    assert routed_reply["reply"] == f"⚠️ Please answer yes or no.\n\n{request.question}"

    async def reasked() -> dict[str, object] | None:
        pending = (await get_turn(http, user, turn_id)).json()["pending"]
        return pending if pending and pending["error"] else None

    pending = await until(reasked, "the request to be asked again")
    assert pending["hitl_id"] == request.hitl_id
    assert pending["error"] == "Please answer yes or no."
    assert str(pending["question"]).startswith("⚠️ Please answer yes or no.")


async def test_yes_with_nothing_pending_is_a_stale_reply_with_the_fixed_text(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, harness: Harness
) -> None:
    response = await post_message(http, user, harness.thread_id, "m1", "yes")
    assert response.status_code == 202, response.text
    assert response.json() == {"turn_id": None, "status": "stale_reply", "reply": STALE_REPLY}
    state = await thread_state(temporal_client, user.user_id, harness.thread_id)
    assert (state.running_turn_id, state.queued_turn_ids) == (None, [])

"""POST /v1/messages: validation with clear 4xx, and ingest by update-with-start."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from memoir.models import Channel, IncomingMessage, ThreadInput
from memoir.models import search_attributes as sa
from memoir.models.names import thread_workflow_id, turn_workflow_id
from tests.api.support import ApiUser, assert_error

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


async def test_message_is_submitted_to_its_thread_by_update_with_start(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    response = await post(http, user, VALID)
    assert response.status_code == 202, response.text
    turn_id = turn_workflow_id(user.user_id, "t1", "m1")
    assert response.json() == {"turn_id": turn_id, "status": "started", "reply": None}

    thread = temporal_client.get_workflow_handle(thread_workflow_id(user.user_id, "t1"))
    started = await thread.query("input", result_type=ThreadInput)
    assert started.model_dump(include={"user_id", "thread_id", "channel"}) == {
        "user_id": user.user_id,
        "thread_id": "t1",
        "channel": Channel.CHAT,
    }
    assert (started.hitl_ttl_seconds, started.idle_hours, started.max_replans) == (123, 7.5, 2)
    [message] = await thread.query("messages", result_type=list[IncomingMessage])
    assert (message.user_id, message.text, message.channel) == (user.user_id, VALID["text"], "chat")
    attributes = (await thread.describe()).typed_search_attributes
    assert attributes.get(sa.USER_ID) == user.user_id
    assert attributes.get(sa.THREAD_ID) == "t1"
    assert attributes.get(sa.CHANNEL) == "chat"


async def test_second_message_joins_the_same_thread_workflow(
    http: httpx.AsyncClient, user: ApiUser, temporal_client: Client, stub_worker: Worker
) -> None:
    await post(http, user, VALID)
    again = await post(http, user, VALID)
    other = await post(http, user, {**VALID, "message_id": "m2"})
    assert again.json()["status"] == "duplicate"
    assert other.json()["status"] == "started"
    thread = temporal_client.get_workflow_handle(thread_workflow_id(user.user_id, "t1"))
    messages = await thread.query("messages", result_type=list[IncomingMessage])
    assert [m.message_id for m in messages] == ["m1", "m2"]

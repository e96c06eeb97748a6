"""Evidence for issue 13: a turn's raw history holds no trace of the message; the codec server
decodes it for its user only; after `DELETE /v1/me` nobody can decode it any more."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from memoir.crypto import KeyDestroyedError
from memoir.models.names import reminder_workflow_id, thread_workflow_id
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.codec import keyring_of
from temporal.harness import Harness
from tests.api.support import ApiUser, assert_error, post_message
from tests.security.conftest import json_data, json_encoding, payload_json, payloads_in

UI_ORIGIN = "http://127.0.0.1:8233"


async def run_canary_turn(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness, stores: Stores
) -> tuple[str, list[str]]:
    """A reminder turn whose message and reminder carry a fresh canary; the canary and the ids
    of the workflows it went through (turn, thread, reminder timer)."""
    canary = f"canary-{uuid.uuid4().hex}"
    harness.llm.script("Plan", plans.remind(f"call mum {canary}"))
    routed = await post_message(http, user, harness.thread_id, "m1", f"remind me {canary}")
    turn_id = routed.json()["turn_id"]
    await harness.result(turn_id)
    [reminder] = await stores.reminders.list(user.user_id, status=None)
    assert canary in reminder.text  # the store keeps it: only Temporal's copy is encrypted
    ids = [turn_id, thread_workflow_id(user.user_id, harness.thread_id)]
    return canary, [*ids, reminder_workflow_id(reminder.reminder_id)]


async def history_payloads(client: Client, workflow_id: str) -> tuple[bytes, list[Payload]]:
    """The raw bytes of every event of a workflow's history, and every payload in them."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    raw = b"".join(event.SerializeToString() for event in history.events)
    return raw, [p for event in history.events for p in data_payloads(event)]


def data_payloads(event: HistoryEvent) -> list[Payload]:
    """The payloads carrying Memoir's data: not search attributes (the server indexes them, ids
    and kinds only) nor the SDK's own marker bookkeeping (patch ids, local activity timings),
    which the SDK writes unencoded; a local activity's result (`result`) is Memoir's."""
    if event.HasField("marker_recorded_event_attributes"):
        marker = event.marker_recorded_event_attributes
        data = marker.details["result"].payloads if "result" in marker.details else []
        return [*data, *payloads_in(marker.failure)] if marker.HasField("failure") else [*data]
    return [p for p in payloads_in(event) if "type" not in p.metadata]


async def decode(http: httpx.AsyncClient, token: str, payloads: list[Payload]) -> httpx.Response:
    body = {"payloads": [payload_json(p) for p in payloads]}
    headers = {"Authorization": f"Bearer {token}", "X-Namespace": "default"}
    return await http.post("/codec/decode", json=body, headers=headers)


async def test_raw_history_holds_no_canary_and_decodes_for_its_user_only(
    http: httpx.AsyncClient,
    user: ApiUser,
    other_user: ApiUser,
    harness: Harness,
    stores: Stores,
    temporal_client: Client,
) -> None:
    canary, workflow_ids = await run_canary_turn(http, user, harness, stores)
    for workflow_id in workflow_ids:
        raw, payloads = await history_payloads(temporal_client, workflow_id)
        assert canary.encode() not in raw, workflow_id
        plain = [p for p in payloads if p.metadata["encoding"] != b"binary/encrypted"]
        assert payloads and not plain, (workflow_id, plain)
    _, turn_payloads = await history_payloads(temporal_client, workflow_ids[0])

    mine = await decode(http, user.token, turn_payloads)
    assert mine.status_code == 200, mine.text
    decoded = mine.json()["payloads"]
    assert any(canary.encode() in json_data(p) for p in decoded)
    assert not any(json_encoding(p) == b"binary/encrypted" for p in decoded)

    theirs = await decode(http, other_user.token, turn_payloads)
    assert theirs.status_code == 200
    assert theirs.json()["payloads"] == [payload_json(p) for p in turn_payloads]


async def test_after_erasure_the_history_decodes_for_nobody(
    http: httpx.AsyncClient,
    user: ApiUser,
    harness: Harness,
    stores: Stores,
    temporal_client: Client,
) -> None:
    _, workflow_ids = await run_canary_turn(http, user, harness, stores)
    _, payloads = await history_payloads(temporal_client, workflow_ids[0])
    erased = await http.delete("/v1/me", headers=user.headers)
    assert erased.status_code == 200, erased.text
    assert erased.json()["erased"]["data_keys"] == 1

    assert_error(await decode(http, user.token, payloads), 401, "unauthorized")
    # Even someone holding the same user id again (a new account) cannot decode them.
    await stores.users.create_user("Again", user_id=user.user_id)
    token = await stores.users.issue_token(user.user_id)
    assert_error(await decode(http, token, payloads), 410, "key_destroyed")
    keyring = keyring_of(temporal_client.data_converter)
    assert keyring is not None
    key_id = payloads[0].metadata["encryption-key-id"].decode()
    fresh_process = type(keyring)(keyring.pool, keyring.master)
    try:
        await fresh_process.key(key_id)
        raise AssertionError("the destroyed key still opens")
    except KeyDestroyedError:
        pass
    await stores.users.delete_user(user.user_id)


async def test_encode_then_decode_round_trips_for_the_user(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"')
    headers = user.headers
    encoded = await http.post(
        "/codec/encode", json={"payloads": [payload_json(plain)]}, headers=headers
    )
    assert encoded.status_code == 200, encoded.text
    [sealed] = encoded.json()["payloads"]
    assert json_encoding(sealed) == b"binary/encrypted"
    decoded = await http.post("/codec/decode", json={"payloads": [sealed]}, headers=headers)
    assert decoded.json()["payloads"] == [payload_json(plain)]


async def test_decode_without_a_token_is_401(http: httpx.AsyncClient) -> None:
    response = await http.post("/codec/decode", json={"payloads": []})
    assert_error(response, 401, "unauthorized")


async def test_decode_of_bad_base64_is_422(http: httpx.AsyncClient, user: ApiUser) -> None:
    body: dict[str, Any] = {"payloads": [{"metadata": {}, "data": "%%%"}]}
    response = await http.post("/codec/decode", json=body, headers=user.headers)
    assert_error(response, 422, "validation_error")


async def test_login_cookie_authenticates_the_web_ui(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    response = await http.post(
        "/codec/login",
        content=f"token={user.token}&next={UI_ORIGIN}/namespaces/default/workflows",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"{UI_ORIGIN}/namespaces/default/workflows"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "Path=/codec" in cookie
    decoded = await http.post(
        "/codec/decode", json={"payloads": []}, cookies={"memoir_codec": user.token}
    )
    assert decoded.status_code == 200


async def test_login_never_redirects_off_the_ui(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.post(
        "/codec/login",
        content=f"token={user.token}&next=https://evil.example/",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.headers["location"] == f"{UI_ORIGIN}/"


async def test_cors_answers_the_web_ui_with_credentials(http: httpx.AsyncClient) -> None:
    preflight = await http.options(
        "/codec/decode",
        headers={
            "Origin": UI_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-namespace,authorization",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == UI_ORIGIN
    assert preflight.headers["access-control-allow-credentials"] == "true"


async def test_cors_ignores_other_origins_and_other_paths(http: httpx.AsyncClient) -> None:
    request = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    refused = await http.options("/codec/decode", headers=request)
    assert "access-control-allow-origin" not in refused.headers
    api = await http.get("/healthz", headers={"Origin": UI_ORIGIN})
    assert "access-control-allow-origin" not in api.headers


async def test_decoding_ones_payloads_is_audited_as_a_read_of_the_history(
    http: httpx.AsyncClient, user: ApiUser
) -> None:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"')
    body = {"payloads": [payload_json(plain)]}
    sealed = (await http.post("/codec/encode", json=body, headers=user.headers)).json()
    await http.post("/codec/decode", json=body, headers=user.headers)  # clear: nothing opened
    assert not await codec_reads(http, user)
    await http.post("/codec/decode", json=sealed, headers=user.headers)
    [entry] = await codec_reads(http, user)
    assert (entry["action"], entry["details"]) == ("read", {"payloads": 1})


async def codec_reads(http: httpx.AsyncClient, user: ApiUser) -> list[dict[str, Any]]:
    """The user's audit entries written by the codec server."""
    page = (await http.get("/v1/audit", headers=user.headers)).json()
    entries: list[dict[str, Any]] = page["items"]
    return [e for e in entries if e["resource_kind"] == "history_payloads"]

"""Isolation matrix: two users x every endpoint x every resource kind. Another user's turn,
inbox item, memory, preference version, audit entry or profile is 404 to the intruder (never
403 or 200), or absent from what the intruder lists. The routes come from `app.routes`: a new
endpoint without an entry here fails `test_every_route_has_a_matrix_entry`.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from starlette.routing import Route

from api.app import create_app
from memoir.settings import Settings
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, approval_asked, assert_error, post_message

NAMESPACE = "response_preferences"


@dataclass
class Owned:
    """The owner's resources of every kind, and the two users."""

    owner: ApiUser
    intruder: ApiUser
    turn_id: str
    hitl_id: str
    memory_id: str
    audit_ids: list[int]


Check = Callable[[httpx.AsyncClient, Owned, Stores], Awaitable[None]]


def _get(http: httpx.AsyncClient, who: ApiUser, path: str, **params: Any) -> Any:
    return http.get(path, headers=who.headers, params=params)


async def _turn(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    assert_error(await _get(http, o.intruder, f"/v1/turns/{o.turn_id}"), 404, "not_found")


async def _answer(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    body = {"type": "accept", "args": None}
    response = await http.post(f"/v1/inbox/{o.hitl_id}", json=body, headers=o.intruder.headers)
    assert_error(response, 404, "not_found")
    view = (await _get(http, o.owner, f"/v1/turns/{o.turn_id}")).json()
    assert view["status"] == "awaiting_human"


async def _inbox(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    listed = (await _get(http, o.intruder, "/v1/inbox")).json()
    assert o.hitl_id not in {item["hitl_id"] for item in listed}


async def _memories(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    for params in ({}, {"query": "dog"}):
        items = (await _get(http, o.intruder, "/v1/memories", **params)).json()["items"]
        assert o.memory_id not in {item["id"] for item in items}


def _memory_call(method: str, suffix: str) -> Check:
    async def check(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
        path = f"/v1/memories/{o.memory_id}{suffix}"
        response = await http.request(method, path, headers=o.intruder.headers)
        assert_error(response, 404, "not_found")
        [memory] = await stores.memories.list(o.owner.user_id)
        assert (memory.memory_id, memory.pinned) == (o.memory_id, False)

    return check


async def _preferences(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    mine = (await _get(http, o.intruder, f"/v1/preferences/{NAMESPACE}")).json()
    assert mine["version"] == 1


async def _preference_history(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    history = (await _get(http, o.intruder, f"/v1/preferences/{NAMESPACE}/history")).json()
    assert [v["version"] for v in history["versions"]] == [1]


async def _rollback(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    path = f"/v1/preferences/{NAMESPACE}/rollback"
    response = await http.post(path, json={"version": 2}, headers=o.intruder.headers)
    assert_error(response, 404, "not_found")
    assert (await stores.preferences.current(o.owner.user_id, NAMESPACE)).version == 2


async def _audit(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    cursor = max(o.audit_ids) + 1
    page = (await _get(http, o.intruder, "/v1/audit", limit=200, cursor=cursor)).json()
    assert not {e["audit_id"] for e in page["items"]} & set(o.audit_ids)


async def _me(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    assert (await _get(http, o.intruder, "/v1/me")).json()["user_id"] == o.intruder.user_id


async def _capabilities(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    body: dict[str, list[str]] = {"capabilities": []}
    response = await http.put("/v1/me/capabilities", json=body, headers=o.intruder.headers)
    assert response.json()["user_id"] == o.intruder.user_id
    assert (await _get(http, o.owner, "/v1/me")).json()["capabilities"] == ["reminders"]


async def _message(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    thread_id, message_id = o.turn_id.split(":")[2:]
    routed = await post_message(http, o.intruder, thread_id, message_id, "hello")
    assert routed.json()["turn_id"].startswith(f"turn:{o.intruder.user_id}:"), routed.text


async def _email(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    thread_id = o.turn_id.split(":")[2]
    email = {
        "id": thread_id,
        "from": "Ana <ana@example.com>",
        "to": "tess@example.com",
        "subject": "hi",
        "body": "hello",
    }
    routed = await http.post("/v1/emails", json=email, headers=o.intruder.headers)
    assert routed.json()["turn_id"].startswith(f"turn:{o.intruder.user_id}:"), routed.text


async def _erase(http: httpx.AsyncClient, o: Owned, stores: Stores) -> None:
    assert (await http.delete("/v1/me", headers=o.intruder.headers)).status_code == 200
    assert await stores.users.get_user(o.owner.user_id) is not None
    assert [m.memory_id for m in await stores.memories.list(o.owner.user_id)] == [o.memory_id]


def _exempt(reason: str) -> str:
    return reason


# (METHOD, path) -> the check, or why the route holds no resource of a user (a reason string).
MATRIX: dict[tuple[str, str], Check | str] = {
    ("GET", "/v1/turns/{turn_id}"): _turn,
    ("POST", "/v1/inbox/{hitl_id}"): _answer,
    ("GET", "/v1/inbox"): _inbox,
    ("GET", "/v1/memories"): _memories,
    ("DELETE", "/v1/memories/{memory_id}"): _memory_call("DELETE", ""),
    ("POST", "/v1/memories/{memory_id}/pin"): _memory_call("POST", "/pin"),
    ("DELETE", "/v1/memories/{memory_id}/pin"): _memory_call("DELETE", "/pin"),
    ("GET", "/v1/preferences/{namespace}"): _preferences,
    ("GET", "/v1/preferences/{namespace}/history"): _preference_history,
    ("POST", "/v1/preferences/{namespace}/rollback"): _rollback,
    ("GET", "/v1/audit"): _audit,
    ("GET", "/v1/me"): _me,
    ("PUT", "/v1/me/capabilities"): _capabilities,
    ("POST", "/v1/messages"): _message,
    ("POST", "/v1/emails"): _email,
    ("DELETE", "/v1/me"): _erase,  # last: the intruder erases themself
    ("GET", "/healthz"): _exempt("no user resource: the database and Temporal answer"),
    ("GET", "/inbox"): _exempt("a static page; its data comes from GET /v1/inbox"),
    ("GET", "/openapi.json"): _exempt("the API's description"),
    ("GET", "/docs"): _exempt("the API's documentation page"),
    ("GET", "/docs/oauth2-redirect"): _exempt("the documentation page's OAuth redirect"),
    ("GET", "/redoc"): _exempt("the API's documentation page"),
    ("POST", "/codec/encode"): _exempt("the codec server: key isolation in tests/security"),
    ("POST", "/codec/decode"): _exempt("the codec server: key isolation in tests/security"),
    ("GET", "/codec/login"): _exempt("the codec server's login page (no user data)"),
    ("POST", "/codec/login"): _exempt("the codec server's login (checks a token)"),
    ("POST", "/codec/logout"): _exempt("the codec server's logout (clears a cookie)"),
}


def app_routes() -> set[tuple[str, str]]:
    """Every (method, path) the app serves."""
    routes = set()
    for route in create_app(Settings()).routes:
        if isinstance(route, APIRoute | Route):
            routes |= {(m, route.path) for m in route.methods or () if m != "HEAD"}
    return routes


def test_every_route_has_a_matrix_entry() -> None:
    missing = sorted(app_routes() - MATRIX.keys())
    assert missing == [], f"routes without an isolation matrix entry: {missing}"


async def _owned(
    http: httpx.AsyncClient, harness: Harness, owner: ApiUser, intruder: ApiUser, stores: Stores
) -> Owned:
    """The owner's turn (waiting on an approval), memory, preference version 2 and audit."""
    harness.llm.script("Plan", plans.chat())
    routed = await post_message(http, owner, harness.thread_id, "luna", "my dog Luna is 3")
    await harness.result(routed.json()["turn_id"])
    [memory] = await stores.memories.list(owner.user_id)
    request = await approval_asked(http, owner, harness)
    rollback = await http.post(
        f"/v1/preferences/{NAMESPACE}/rollback", json={"version": 1}, headers=owner.headers
    )
    assert rollback.json()["version"] == 2, rollback.text
    page = (await _get(http, owner, "/v1/audit", limit=200)).json()
    audit_ids = [e["audit_id"] for e in page["items"]]
    assert audit_ids
    return Owned(owner, intruder, request.turn_id, request.hitl_id, memory.memory_id, audit_ids)


async def test_another_users_resources_are_404_or_absent(
    http: httpx.AsyncClient,
    harness: Harness,
    user: ApiUser,
    other_user: ApiUser,
    stores: Stores,
) -> None:
    owned = await _owned(http, harness, user, other_user, stores)
    harness.llm.script("Plan", plans.chat())
    failed = []
    for (method, path), check in MATRIX.items():
        if isinstance(check, str):
            continue
        try:
            await check(http, owned, stores)
        except (AssertionError, KeyError, TypeError) as error:
            failed.append(f"{method} {path}: {error!r}")
    assert failed == []


@pytest.mark.parametrize("kind", ["turn", "hitl"])
async def test_a_made_up_id_of_another_user_is_404_too(
    http: httpx.AsyncClient, user: ApiUser, other_user: ApiUser, kind: str
) -> None:
    turn_id = f"turn:{other_user.user_id}:t-{uuid.uuid4().hex[:6]}:m1"
    if kind == "turn":
        response = await http.get(f"/v1/turns/{turn_id}", headers=user.headers)
    else:
        body = {"type": "accept", "args": None}
        response = await http.post(f"/v1/inbox/{turn_id}:hitl1", json=body, headers=user.headers)
    assert_error(response, 404, "not_found")

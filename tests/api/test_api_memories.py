"""GET /v1/memories (list, search, kind filter), DELETE one, pin / unpin, DELETE /v1/me.

Memories come from real turns on the harness's worker: the scripted model plans, the offline
model (its fallback) runs the memory skills, so "my dog Luna is 3" becomes a semantic memory and
a reminder turn an episodic one.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import WorkflowExecutionStatus

from memoir.embeddings import get_local_embedder
from memoir.models.names import thread_workflow_id
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.harness import Harness
from tests.api.support import ApiUser, assert_error, post_message

LUNA = "User's dog Luna is 3 years old."
LISBON = "User lives in Lisbon."


async def chat(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, text: str, message_id: str = ""
) -> str:
    """Send `text` as a chat message that plans as small talk; wait for its turn; its id."""
    harness.llm.script("Plan", plans.chat())
    message_id = message_id or f"m-{uuid.uuid4().hex[:8]}"
    routed = await post_message(http, user, harness.thread_id, message_id, text)
    turn_id: str = routed.json()["turn_id"]
    await harness.result(turn_id)
    return turn_id


async def remind(http: httpx.AsyncClient, harness: Harness, user: ApiUser, what: str) -> None:
    """A reminder turn: captured as an episode."""
    harness.llm.script("Plan", await harness.remind_plan(what))
    routed = await post_message(http, user, harness.thread_id, "m-remind", f"Remind me to {what}")
    await harness.result(routed.json()["turn_id"])


async def memories(http: httpx.AsyncClient, user: ApiUser, **params: Any) -> list[dict[str, Any]]:
    response = await http.get("/v1/memories", params=params, headers=user.headers)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def test_list_shows_a_fact_from_a_turn_with_its_provenance(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3", message_id="luna-1")
    [memory] = await memories(http, user)
    assert memory["id"].startswith("mem_")
    assert (memory["kind"], memory["category"], memory["summary"]) == ("semantic", "pet", LUNA)
    assert memory["key"] == "profile:pet:luna:age"
    assert memory["pinned"] is False
    assert memory["source_message_ids"] == ["luna-1"]
    assert memory["similarity"] is None
    assert {"importance", "created_at", "updated_at", "last_accessed", "date_iso"} <= set(memory)


async def test_list_is_newest_first_and_pages_with_limit_and_offset(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    await chat(http, harness, user, "I live in Lisbon")
    assert [m["summary"] for m in await memories(http, user)] == [LISBON, LUNA]
    assert [m["summary"] for m in await memories(http, user, limit=1, offset=1)] == [LUNA]


async def test_search_returns_the_closest_memory_first_with_its_similarity(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    await chat(http, harness, user, "I live in Lisbon")
    found = await memories(http, user, query="How old is my dog?")
    assert [m["summary"] for m in found] == [LUNA, LISBON]
    assert 0 < found[1]["similarity"] < found[0]["similarity"] <= 1


async def test_kind_filter_keeps_only_that_kind(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    await remind(http, harness, user, "call my mom")
    episodic = await memories(http, user, kind="episodic")
    assert [m["kind"] for m in episodic] == ["episodic"]
    assert episodic[0]["summary"].startswith("On ") and "call your mom" in episodic[0]["summary"]
    assert episodic[0]["date_iso"] and episodic[0]["week"] and episodic[0]["year"]
    assert [m["summary"] for m in await memories(http, user, kind="semantic")] == [LUNA]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"kind": "procedural"}, "query.kind", id="bad-kind"),
        pytest.param({"limit": 0}, "query.limit", id="limit-0"),
        pytest.param({"limit": 101}, "query.limit", id="limit-101"),
        pytest.param({"offset": -1}, "query.offset", id="negative-offset"),
        pytest.param({"query": "   "}, "query.query", id="blank-query"),
    ],
)
async def test_bad_listing_parameters_are_422_with_a_reason(
    http: httpx.AsyncClient, user: ApiUser, params: dict[str, Any], field: str
) -> None:
    response = await http.get("/v1/memories", params=params, headers=user.headers)
    error = assert_error(response, 422, "validation_error")
    [detail] = error["details"]
    assert detail["field"] == field
    assert detail["reason"] and field in error["message"]


async def test_delete_removes_the_row_and_the_vector(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, stores: Stores
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    [memory] = await memories(http, user)
    response = await http.delete(f"/v1/memories/{memory['id']}", headers=user.headers)
    assert response.status_code == 204, response.text
    assert await memories(http, user) == []
    assert await memories(http, user, query="my dog Luna") == []
    [vector] = get_local_embedder().embed([LUNA])
    assert await stores.memories.vectors.query(user.user_id, vector, top_k=5) == []


async def test_deleting_an_unknown_memory_is_404(http: httpx.AsyncClient, user: ApiUser) -> None:
    response = await http.delete("/v1/memories/mem_nope", headers=user.headers)
    assert_error(response, 404, "not_found")


async def test_pin_and_unpin_a_memory(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    [memory] = await memories(http, user)
    path = f"/v1/memories/{memory['id']}/pin"
    pinned = await http.post(path, headers=user.headers)
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["pinned"] is True
    assert (await memories(http, user))[0]["pinned"] is True
    unpinned = await http.delete(path, headers=user.headers)
    assert unpinned.status_code == 200, unpinned.text
    assert unpinned.json()["pinned"] is False
    assert (await memories(http, user))[0]["pinned"] is False


async def test_another_users_memory_is_404_to_delete_pin_and_unpin(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, other_user: ApiUser
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    [memory] = await memories(http, user)
    path = f"/v1/memories/{memory['id']}"
    headers = other_user.headers
    assert_error(await http.delete(path, headers=headers), 404, "not_found")
    assert_error(await http.post(f"{path}/pin", headers=headers), 404, "not_found")
    assert_error(await http.delete(f"{path}/pin", headers=headers), 404, "not_found")
    assert await memories(http, other_user) == []
    assert [m["pinned"] for m in await memories(http, user)] == [False]


async def test_memories_need_a_token(http: httpx.AsyncClient) -> None:
    assert_error(await http.get("/v1/memories"), 401, "unauthorized")


async def test_delete_me_erases_everything_and_the_token_then_answers_401(
    http: httpx.AsyncClient, harness: Harness, user: ApiUser, stores: Stores
) -> None:
    await chat(http, harness, user, "my dog Luna is 3")
    await http.get("/v1/preferences/triage_preferences", headers=user.headers)
    response = await http.delete("/v1/me", headers=user.headers)
    assert response.status_code == 200, response.text
    assert response.json()["erased"]["memories"] == 1
    assert_error(await http.get("/v1/memories", headers=user.headers), 401, "unauthorized")
    assert await stores.users.get_user(user.user_id) is None
    assert await stores.memories.list(user.user_id) == []
    assert await stores.preferences.history(user.user_id, "triage_preferences") == []
    [vector] = get_local_embedder().embed([LUNA])
    assert await stores.memories.vectors.query(user.user_id, vector, top_k=5) == []
    thread = thread_workflow_id(user.user_id, harness.thread_id)
    assert await harness.status(thread) is WorkflowExecutionStatus.TERMINATED

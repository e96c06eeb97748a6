"""Agent Inbox compatibility: `GET /v1/inbox` items are `HumanInterrupt`s, and
`POST /v1/inbox/{hitl_id}` takes a `HumanResponse` as Agent Inbox sends it.

The types below are written here after Agent Inbox's `types.ts` (langchain-ai/agent-inbox): a
`HumanInterrupt` is `{action_request: {action, args}, config: {allow_ignore, allow_respond,
allow_edit, allow_accept}, description?}`; a `HumanResponse` is `{type, args}` with `args` null,
a string or an `ActionRequest`. Its `sendHumanResponse` resumes with `HumanResponse[]` (a list of
one); an unedited "accept" of an editable request carries the action request as `args`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

import httpx
from pydantic import ConfigDict, TypeAdapter
from typing_extensions import TypedDict

from temporal.harness import Harness
from tests.api.support import (
    ApiUser,
    answer,
    approval_asked,
    assert_error,
    finished_view,
    inbox_of,
)


class HumanInterruptConfig(TypedDict):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


class ActionRequest(TypedDict):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    action: str
    args: dict[str, Any]


class HumanInterrupt(TypedDict):
    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]
    action_request: ActionRequest
    config: HumanInterruptConfig
    description: NotRequired[str]


class HumanResponse(TypedDict):
    type: Literal["accept", "ignore", "response", "edit"]
    args: None | str | ActionRequest


INTERRUPTS = TypeAdapter(list[HumanInterrupt])
RESPONSES = TypeAdapter(list[HumanResponse])


async def test_inbox_items_validate_as_agent_inbox_human_interrupts(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    await approval_asked(http, user, harness, "pay rent")
    [item] = INTERRUPTS.validate_python(await inbox_of(http, user))
    assert item["action_request"]["action"] == "reminders.create"
    assert item["action_request"]["args"]["text"] == "pay rent"
    assert item["config"] == {
        "allow_ignore": True,
        "allow_respond": True,
        "allow_edit": True,
        "allow_accept": True,
    }
    assert "pay rent" in item.get("description", "")


async def test_unedited_accept_as_a_list_of_one_runs_the_action(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    [item] = await inbox_of(http, user)
    body = [{"type": "accept", "args": item["action_request"]}]
    RESPONSES.validate_python(body)
    response = await answer(http, user, request.hitl_id, body)
    assert response.status_code == 202, response.text
    view = await finished_view(http, harness, user, request.turn_id)
    assert view["status"] == "completed"
    [reminder] = await harness.stores.reminders.list(user.user_id)
    assert reminder.text == "pay rent"


async def test_edit_as_a_list_of_one_runs_the_edited_action(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    [item] = await inbox_of(http, user)
    edited = {**item["action_request"]["args"], "text": "pay the rent to Ines"}
    body = [{"type": "edit", "args": {"action": "reminders.create", "args": edited}}]
    RESPONSES.validate_python(body)
    response = await answer(http, user, request.hitl_id, body)
    assert response.status_code == 202, response.text
    await finished_view(http, harness, user, request.turn_id)
    [reminder] = await harness.stores.reminders.list(user.user_id)
    assert reminder.text == "pay the rent to Ines"


async def test_ignore_with_null_args_as_a_list_of_one_runs_nothing(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    response = await answer(http, user, request.hitl_id, [{"type": "ignore", "args": None}])
    assert response.status_code == 202, response.text
    view = await finished_view(http, harness, user, request.turn_id)
    assert view["status"] == "completed"  # declined: the turn ends without the action
    assert await harness.stores.reminders.list(user.user_id) == []


async def test_single_response_object_is_taken_too(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    body = {"type": "response", "args": "make it tomorrow instead"}
    response = await answer(http, user, request.hitl_id, body)
    assert response.status_code == 202, response.text


async def test_a_list_of_two_responses_is_422(
    http: httpx.AsyncClient, user: ApiUser, harness: Harness
) -> None:
    request = await approval_asked(http, user, harness, "pay rent")
    body = [{"type": "accept", "args": None}, {"type": "ignore", "args": None}]
    assert_error(await answer(http, user, request.hitl_id, body), 422, "validation_error")

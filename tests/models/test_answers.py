"""Answer validation against `expected_input`, shared by the turn workflow and the API."""

from datetime import UTC, datetime, timedelta

import pytest

from memoir.models import (
    ActionRequest,
    AnswerSource,
    ExpectedInput,
    HitlAnswer,
    HitlConfig,
    HitlKind,
    HitlOption,
    HitlRequest,
    HumanResponse,
)
from memoir.models.answers import InvalidAnswer, interpret_answer, looks_like_answer

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def request(expected: ExpectedInput, *, config: HitlConfig | None = None) -> HitlRequest:
    return HitlRequest(
        hitl_id="turn:u:t:m:hitl1",
        turn_id="turn:u:t:m",
        thread_id="t",
        user_id="u",
        kind=HitlKind.APPROVAL,
        action_request=ActionRequest(action="reminders.delete", args={"query": "milk"}),
        config=config or HitlConfig(allow_accept=True, allow_edit=True),
        description="",
        question="Go ahead?",
        expected_input=expected,
        options=[HitlOption(id="a", label="Alpha"), HitlOption(id="b", label="Beta")],
        created_at=NOW,
        expires_at=NOW + timedelta(minutes=5),
    )


def chat(text: str) -> HitlAnswer:
    return HitlAnswer(
        hitl_id="turn:u:t:m:hitl1",
        response=HumanResponse(type="response", args=text),
        source=AnswerSource.CHAT,
    )


def inbox(response: HumanResponse) -> HitlAnswer:
    return HitlAnswer(hitl_id="turn:u:t:m:hitl1", response=response)


@pytest.mark.parametrize(
    ("text", "decision"), [("yes", "accept"), ("OK!", "accept"), ("no", "ignore"), ("n", "ignore")]
)
def test_yes_no_chat_answers_map_to_accept_or_ignore(text: str, decision: str) -> None:
    assert interpret_answer(request(ExpectedInput.YES_NO), chat(text)).type == decision


def test_yes_no_rejects_anything_else_with_a_reason() -> None:
    with pytest.raises(InvalidAnswer, match="Please answer yes or no."):
        interpret_answer(request(ExpectedInput.YES_NO), chat("maybe later"))


@pytest.mark.parametrize(("text", "choice"), [("2", "b"), ("alpha", "a"), ("B", "b")])
def test_single_choice_takes_a_number_an_id_or_a_label(text: str, choice: str) -> None:
    decision = interpret_answer(request(ExpectedInput.SINGLE_CHOICE), chat(text))
    assert decision.choices == [choice]


def test_single_choice_out_of_range_names_the_range() -> None:
    with pytest.raises(InvalidAnswer, match="from 1 to 2"):
        interpret_answer(request(ExpectedInput.SINGLE_CHOICE), chat("7"))


def test_multi_choice_takes_several() -> None:
    decision = interpret_answer(request(ExpectedInput.MULTI_CHOICE), chat("1, 2"))
    assert decision.choices == ["a", "b"]


def test_free_text_keeps_the_text() -> None:
    decision = interpret_answer(request(ExpectedInput.FREE_TEXT), chat("at 5pm please"))
    assert (decision.type, decision.text) == ("text", "at 5pm please")


def test_empty_answer_is_invalid() -> None:
    with pytest.raises(InvalidAnswer, match="empty"):
        interpret_answer(request(ExpectedInput.FREE_TEXT), chat("   "))


def test_inbox_type_not_allowed_by_config_is_invalid() -> None:
    no_accept = request(ExpectedInput.YES_NO, config=HitlConfig(allow_accept=False))
    with pytest.raises(InvalidAnswer, match="'accept' is not allowed"):
        interpret_answer(no_accept, inbox(HumanResponse(type="accept")))


def test_inbox_edit_keeps_the_action_and_takes_new_args() -> None:
    edited = ActionRequest(action="reminders.delete", args={"query": "oat milk"})
    decision = interpret_answer(
        request(ExpectedInput.YES_NO), inbox(HumanResponse(type="edit", args=edited))
    )
    assert decision.edited == edited


def test_inbox_edit_of_another_action_is_invalid() -> None:
    edited = ActionRequest(action="email.send", args={})
    with pytest.raises(InvalidAnswer, match="must keep the action"):
        interpret_answer(
            request(ExpectedInput.YES_NO), inbox(HumanResponse(type="edit", args=edited))
        )


def test_inbox_response_needs_text() -> None:
    with pytest.raises(InvalidAnswer, match="non-empty text"):
        interpret_answer(request(ExpectedInput.YES_NO), inbox(HumanResponse(type="response")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", True),
        ("2", True),
        ("Nope.", True),
        ("remind me", False),
        ("yes please do it", False),
    ],
)
def test_stale_reply_guard_recognises_short_answers(text: str, expected: bool) -> None:
    assert looks_like_answer(text) is expected

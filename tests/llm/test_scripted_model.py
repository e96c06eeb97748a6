"""ScriptedChatModel: scripts consumed in order, every call recorded, fallback or raise."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from memoir.llm import OfflineChatModel, ScriptedChatModel, ScriptExhausted, structured
from memoir.models import Classification, Plan, TriageDecision


def test_structured_responses_are_consumed_in_order() -> None:
    first = TriageDecision(reasoning="a", classification=Classification.IGNORE)
    llm = ScriptedChatModel(
        responses={TriageDecision: [first, {"reasoning": "b", "classification": "respond"}]}
    )
    runnable = structured(llm, TriageDecision)
    assert runnable.invoke("one") is first
    assert runnable.invoke("two").classification == Classification.RESPOND
    assert llm.remaining(TriageDecision) == 0


def test_every_call_is_recorded_with_schema_and_messages() -> None:
    llm = ScriptedChatModel(
        responses={"Plan": [{"intent": "x", "confidence": 0.5}]}, replies=["hello"]
    )
    structured(llm, Plan).invoke([SystemMessage("sys"), HumanMessage("plan this")])
    llm.invoke([HumanMessage("say hi")])
    assert [c.schema for c in llm.calls] == ["Plan", None]
    assert llm.calls[0].messages[1].content == "plan this"
    assert "say hi" in llm.calls_for(None)[0].text


def test_plain_replies_are_consumed_in_order() -> None:
    llm = ScriptedChatModel(replies=["one", "two"], on_exhausted="raise")
    assert [llm.invoke("a").content, llm.invoke("b").content] == ["one", "two"]


def test_exhausted_script_raises_when_configured() -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    with pytest.raises(ScriptExhausted):
        structured(llm, Plan).invoke("x")
    with pytest.raises(ScriptExhausted):
        llm.invoke("x")


def test_exhausted_script_falls_back_to_the_offline_model(
    offline: OfflineChatModel,
) -> None:
    llm = ScriptedChatModel(fallback=offline)
    assert llm.invoke([HumanMessage("thanks!")]).content == "You're welcome!"
    assert len(llm.calls) == 1


def test_exhausted_structured_script_names_the_typed_providers() -> None:
    llm = ScriptedChatModel()
    with pytest.raises(NotImplementedError, match="no scripted Plan response left"):
        structured(llm, Plan).invoke("x")


def test_scripted_exception_is_raised_for_that_call() -> None:
    llm = ScriptedChatModel(responses={"Plan": [TimeoutError("slow model")]})
    with pytest.raises(TimeoutError):
        structured(llm, Plan).invoke("x")


async def test_async_calls_consume_the_same_script() -> None:
    llm = ScriptedChatModel(
        responses={"Plan": [{"intent": "a", "confidence": 0.4}]}, on_exhausted="raise"
    )
    plan = await structured(llm, Plan).ainvoke("x")
    assert plan.intent == "a"


def test_script_appends_answers_and_calls_support_text_search() -> None:
    llm = ScriptedChatModel(on_exhausted="raise").script("Plan", {"intent": "a", "confidence": 0.5})
    llm.script(Plan, {"intent": "b", "confidence": 0.5}).reply("hi")
    runnable = structured(llm, Plan)
    assert [runnable.invoke("first").intent, runnable.invoke("feed the cat").intent] == ["a", "b"]
    assert llm.invoke("x").content == "hi"
    assert llm.schemas_called() == ["Plan", "Plan"]
    assert "feed the cat" in llm.calls_for("Plan")[-1]

"""memoir.llm.providers: the offline implementation gets the typed request, a model the prompt."""

from dataclasses import dataclass

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from memoir.embeddings import Embedder
from memoir.llm import OfflineChatModel, ScriptedChatModel, ScriptExhausted
from memoir.llm.providers import ask, write
from memoir.models import Classification, TriageDecision


@dataclass(frozen=True)
class Question:
    text: str


def render(question: Question) -> list[BaseMessage]:
    return [HumanMessage(content=f"Classify: {question.text}")]


def offline_triage(question: Question, embedder: Embedder) -> TriageDecision:
    return TriageDecision(reasoning=f"offline read {question.text!r}", classification="notify")


def offline_reply(question: Question, embedder: Embedder) -> str:
    return f"offline reply to {question.text}"


async def test_offline_model_answers_from_the_typed_request(offline: OfflineChatModel) -> None:
    decision = await ask(
        offline, TriageDecision, Question("a build failed"), render=render, offline=offline_triage
    )
    assert decision.reasoning == "offline read 'a build failed'"


async def test_scripted_answer_comes_from_the_script_and_sees_the_prompt() -> None:
    scripted = TriageDecision(reasoning="scripted", classification=Classification.IGNORE)
    llm = ScriptedChatModel(responses={TriageDecision: [scripted]})
    decision = await ask(
        llm, TriageDecision, Question("sale!"), render=render, offline=offline_triage
    )
    assert decision is scripted
    assert "Classify: sale!" in llm.calls_for(TriageDecision)[0]


async def test_exhausted_script_falls_back_to_offline_and_records_the_prompt(
    offline: OfflineChatModel,
) -> None:
    llm = ScriptedChatModel(fallback=offline)
    decision = await ask(
        llm, TriageDecision, Question("lunch?"), render=render, offline=offline_triage
    )
    assert decision.classification is Classification.NOTIFY
    assert "Classify: lunch?" in llm.calls_for(TriageDecision)[0]


async def test_exhausted_script_raises_when_told_to() -> None:
    llm = ScriptedChatModel(on_exhausted="raise")
    with pytest.raises(ScriptExhausted):
        await ask(llm, TriageDecision, Question("x"), render=render, offline=offline_triage)


async def test_plain_reply_is_written_offline_or_from_the_script(
    offline: OfflineChatModel,
) -> None:
    assert await write(offline, Question("hi"), render=render, offline=offline_reply) == (
        "offline reply to hi"
    )
    llm = ScriptedChatModel(replies=["scripted hello"], fallback=offline)
    assert await write(llm, Question("hi"), render=render, offline=offline_reply) == (
        "scripted hello"
    )
    assert await write(llm, Question("again"), render=render, offline=offline_reply) == (
        "offline reply to again"
    )
    assert [c.schema for c in llm.calls] == [None, None]

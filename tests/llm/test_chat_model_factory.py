"""get_chat_model and structured(): provider selection, missing key, OpenAI request shape."""

import json

import httpx
import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from memoir.embeddings import EmbeddingConfigError
from memoir.llm import LLMConfigError, OfflineChatModel, get_chat_model, structured
from memoir.models import Plan, TriageDecision
from memoir.settings import Settings


def settings(**kw: object) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[arg-type]


def test_openai_without_key_is_a_clear_error() -> None:
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        get_chat_model(settings(llm_provider="openai", openai_api_key=None))


def test_openai_with_key_builds_chat_openai_from_settings() -> None:
    llm = get_chat_model(
        settings(
            llm_provider="openai",
            openai_api_key="sk-test",
            llm_model="my-model",
            openai_base_url="http://localhost:11434/v1",
        )
    )
    assert isinstance(llm, ChatOpenAI)
    assert llm.model_name == "my-model" and llm.temperature == 0
    assert llm.openai_api_base == "http://localhost:11434/v1"


def test_offline_provider_needs_no_key() -> None:
    assert isinstance(get_chat_model(settings(llm_provider="offline")), OfflineChatModel)


def test_offline_provider_builds_the_configured_embedder_on_first_use() -> None:
    offline = settings(llm_provider="offline", embedding_provider="openai", openai_api_key=None)
    llm = get_chat_model(offline)
    assert isinstance(llm, OfflineChatModel)
    with pytest.raises(EmbeddingConfigError, match="OPENAI_API_KEY"):
        llm.get_embedder()


def test_offline_model_gives_no_structured_output_for_a_prompt() -> None:
    with pytest.raises(NotImplementedError, match="typed requests"):
        structured(OfflineChatModel(), Plan)


def fake_openai(content: dict[str, object], seen: list[dict[str, object]]) -> ChatOpenAI:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(content)},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    return ChatOpenAI(
        model="m",
        api_key=SecretStr("sk-test"),
        base_url="http://fake/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )


def test_structured_openai_uses_strict_json_schema_when_possible() -> None:
    seen: list[dict[str, object]] = []
    llm = fake_openai({"reasoning": "r", "classification": "notify"}, seen)
    decision = structured(llm, TriageDecision).invoke("email")
    assert decision.classification == "notify"
    response_format = seen[0]["response_format"]
    assert isinstance(response_format, dict) and response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True


def test_structured_openai_sends_free_form_args_schema_non_strict_and_validates() -> None:
    seen: list[dict[str, object]] = []
    plan = {
        "intent": "list",
        "confidence": 0.9,
        "steps": [{"id": "s1", "capability": "reminders.list", "args": {}}],
    }
    result = structured(fake_openai(plan, seen), Plan).invoke("list my reminders")
    assert isinstance(result, Plan) and result.steps[0].capability == "reminders.list"
    response_format = seen[0]["response_format"]
    assert isinstance(response_format, dict)
    assert response_format["json_schema"]["strict"] is False

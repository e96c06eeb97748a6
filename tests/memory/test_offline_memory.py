"""The offline extractor's memory answers, on the typed requests a chat model sees rendered."""

from __future__ import annotations

import pytest

from memoir.embeddings import get_local_embedder
from memoir.llm.offline_facts import extract_facts
from memoir.llm.offline_memory import (
    compose_offline,
    episodic_offline,
    extraction_offline,
    gate_offline,
    profile_update_offline,
    same_fact_offline,
)
from memoir.memory.episodic import episode_request
from memoir.memory.hotpath import memory_fields
from memoir.memory.models import Memory
from memoir.memory.profile_sync import profile_request
from memoir.memory.requests import ComposeRequest, SameFactRequest, TurnMemoryRequest
from memoir.memory.schemas import (
    ComposedSummary,
    EpisodicSummary,
    HotpathDecision,
    MemoryCandidate,
    ProfileUpdate,
)
from memoir.models import RememberRequest, UserProfile
from memoir.stores.user_context import UserContext
from tests.memory.support import memory, remember, reminder_result

EMBEDDER = get_local_embedder()
USER = UserProfile(user_id="u1", name="Ana")


def gate(text: str, earlier: tuple[str, ...] = ()) -> HotpathDecision:
    return gate_offline(TurnMemoryRequest(message=text, earlier=list(earlier)), EMBEDDER)


def extract(text: str, earlier: tuple[str, ...] = ()) -> list[MemoryCandidate]:
    request = TurnMemoryRequest(message=text, earlier=list(earlier))
    return extraction_offline(request, EMBEDDER).memories


def candidate(text: str, earlier: tuple[str, ...] = ()) -> MemoryCandidate:
    """The most important memory of `text` (the one the single-candidate hot path wrote)."""
    return extract(text, earlier)[0]


@pytest.mark.parametrize(
    "text",
    [
        "my dog Luna is 3",
        "I live in Lisbon",
        "I prefer short replies",
        "My name is Ana Silva",
        "Luna turned 4",
        "I work as a nurse",
        "My wife is called Marta",
        "I'm vegetarian",
        "My goal is to run a marathon",
        "Never schedule meetings before 10am",
        "Please remember that I'm allergic to peanuts",
    ],
)
def test_gate_creates_for_stable_facts(text: str) -> None:
    decision = gate(text)
    assert decision.should_create, decision.reasoning


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("What can you do?", "meta/capability"),
        ("Do you remember my dog's name?", "meta/capability"),
        ("Remind me to call mom at 5pm", "one-off request"),
        ("Send an email to Dan about the report", "one-off request"),
        ("I have a dentist appointment tomorrow", "time-bound"),
        ("I'm meeting my sister Maria on Friday", "time-bound"),
        ("Thanks!", "no stable fact"),
        ("Good morning", "no stable fact"),
    ],
)
def test_gate_refuses_questions_requests_and_events(text: str, why: str) -> None:
    decision = gate(text)
    assert not decision.should_create
    assert why in decision.reasoning


@pytest.mark.parametrize(
    ("text", "category", "key", "summary"),
    [
        ("my dog Luna is 3", "pet", "profile:pet:luna:age", "User's dog Luna is 3 years old."),
        ("I have a cat named Miso", "pet", "profile:pet:miso:kind", "User has a cat named Miso."),
        ("I live in Lisbon", "profile", "profile:city", "User lives in Lisbon."),
        ("I'm based in new york now", "profile", "profile:city", "User lives in New York."),
        ("Call me Ana", "profile", "profile:name", "User's name is Ana."),
        ("I work as a nurse", "work", "profile:job", "User works as a nurse."),
        (
            "My wife is called Marta",
            "relationship",
            "profile:partner",
            "User's wife is named Marta.",
        ),
        (
            "I prefer short replies",
            "preference",
            "preference:reply_length",
            "User prefers short replies.",
        ),
        ("Always reply in Portuguese", "preference", "preference:language", None),
        ("I love hiking", "interest", None, "User is interested in hiking."),
    ],
)
def test_candidate_has_category_summary_and_key(
    text: str, category: str, key: str | None, summary: str | None
) -> None:
    found = candidate(text)
    assert (found.category, found.key) == (category, key)
    if summary:
        assert found.summary == summary
    assert 0.4 <= found.importance <= 1.0


def test_candidate_resolves_a_pronoun_from_earlier_turns() -> None:
    found = candidate("She turned 4 last week", earlier=("My cat Miso is 3",))
    assert found.key == "profile:pet:miso:age"
    assert found.summary == "User's cat Miso is 4 years old."


def same(existing: str, new: str, old_key: str | None = None, new_key: str | None = None) -> bool:
    old = memory(existing, key=old_key)
    cand = MemoryCandidate(category="pet", summary=new, importance=0.8, key=new_key)
    request = SameFactRequest(existing=memory_fields(old), candidate=memory_fields(cand))
    return same_fact_offline(request, EMBEDDER).same_fact


def compose(old: Memory, new: MemoryCandidate) -> ComposedSummary:
    request = ComposeRequest(existing=memory_fields(old), new=memory_fields(new))
    return compose_offline(request, EMBEDDER)


def profile(ctx: UserContext, mem: Memory) -> ProfileUpdate:
    return profile_update_offline(profile_request(ctx, mem), EMBEDDER)


def episode(request: RememberRequest) -> EpisodicSummary:
    return episodic_offline(episode_request(request, [], "UTC", 10), EMBEDDER)


def test_same_key_is_the_same_fact() -> None:
    assert same("anything", "else", "profile:city", "profile:city")


def test_different_keys_are_different_facts() -> None:
    assert not same("x", "x", "profile:pet:luna:age", "profile:pet:luna:kind")


def test_same_entity_and_attribute_is_the_same_fact() -> None:
    assert same("User's dog Luna is 3 years old.", "Luna is 4 years old.")
    assert not same("User's dog Luna is 3 years old.", "User's cat Miso is 3 years old.")
    assert not same("User's dog Luna is 3 years old.", "User has a dog named Luna.")


def test_compose_newer_wins_and_keeps_older_details() -> None:
    old = memory("User's dog Luna is 3 years old.", key="profile:pet:luna:age")
    new = MemoryCandidate(
        category="pet",
        summary="User's pet Luna is 4 years old.",
        importance=0.8,
        key="profile:pet:luna:age",
    )
    result = compose(old, new)
    assert isinstance(result, ComposedSummary)
    assert result.summary == "User's dog Luna is 4 years old."


def test_compose_keeps_the_newer_city() -> None:
    old = memory("User lives in Lisbon.", key="profile:city", category="profile")
    new = MemoryCandidate(
        category="profile", summary="User lives in Porto.", importance=0.85, key="profile:city"
    )
    result = compose(old, new)
    assert isinstance(result, ComposedSummary) and result.summary == "User lives in Porto."


@pytest.mark.parametrize(
    ("summary", "key", "category", "changes"),
    [
        ("User lives in Lisbon.", "profile:city", "profile", {"city": "Lisbon"}),
        ("User's name is Ana Silva.", "profile:name", "profile", {"name": "Ana Silva"}),
        (
            "User prefers short replies.",
            "preference:reply_length",
            "preference",
            {"tone": "concise"},
        ),
        (
            "User prefers replies in Portuguese.",
            "preference:language",
            "preference",
            {"language": "pt"},
        ),
        (
            "User's timezone is Europe/Lisbon.",
            "profile:timezone",
            "profile",
            {"timezone": "Europe/Lisbon"},
        ),
        (
            "User's goal is to run a marathon.",
            None,
            "goal",
            {"goals": ["read more", "run a marathon"]},
        ),
        ("User's dog Luna is 3 years old.", "profile:pet:luna:age", "pet", {}),
    ],
)
def test_profile_update_from_a_memory(
    summary: str, key: str | None, category: str, changes: dict[str, object]
) -> None:
    ctx = UserContext(name="Ana", city="Paris", goals=["read more"])
    result = profile(ctx, memory(summary, key=key, category=category))
    assert isinstance(result, ProfileUpdate)
    assert result.changes == changes


def test_profile_update_is_empty_when_the_profile_already_says_so() -> None:
    ctx = UserContext(city="Lisbon")
    mem = memory("User lives in Lisbon.", key="profile:city", category="profile")
    result = profile(ctx, mem)
    assert isinstance(result, ProfileUpdate) and result.changes == {}


def test_episodic_summary_of_an_action_is_notable() -> None:
    request = remember(
        USER, "Remind me to call my mom at 5pm", results=[reminder_result("call my mom")]
    )
    result = episode(request)
    assert isinstance(result, EpisodicSummary)
    assert result.notable
    assert result.topic == "a reminder to call your mom"
    assert result.approach == "set a reminder to call your mom for 2025-01-15 17:00"


def test_episodic_summary_of_small_talk_is_not_notable() -> None:
    request = remember(USER, "how are you?", reply="Fine, thanks!")
    result = episode(request)
    assert isinstance(result, EpisodicSummary) and not result.notable


def test_episodic_summary_of_a_recap_is_notable() -> None:
    request = remember(USER, "what did we discuss yesterday?", reply="We set a reminder.")
    result = episode(request)
    assert isinstance(result, EpisodicSummary) and result.notable
    assert result.topic == "what we talked about before"


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        ("My home is in Lisbon", "User lives in Lisbon."),
        ("I don't eat meat", "User is vegetarian."),
        ("I follow a vegetarian diet", "User is vegetarian."),
        ("Short answers work best for me", "User prefers short replies."),
    ],
)
def test_paraphrased_facts_are_recognised(text: str, summary: str) -> None:
    assert [fact.summary for fact in extract_facts(text)][:1] == [summary]


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Remind me tomorrow", "a reminder"),
        ("Remind me tomorrow at 9 to call my mom", "a reminder to call your mom"),
        ("Book the physio for Friday at 4", "booking the physio"),
        ("Please plan my week", "planning your week"),
        ("Can you find a quiet café nearby?", "finding a quiet café nearby"),
        ("What's the tide like?", "your question about the tide like"),
        ("Meetings last 45 minutes", "that meetings last 45 minutes"),  # no verb: no "-ing"
        ("Ingrid lives in Bergen", "that Ingrid lives in Bergen"),  # a name keeps its capital
    ],
)
def test_an_episode_topic_is_words_never_the_request_quoted(text: str, topic: str) -> None:
    request = remember(USER, text, results=[reminder_result("something")])
    result = episode(request)
    assert isinstance(result, EpisodicSummary)
    assert result.topic == topic
    assert "“" not in result.topic and '"' not in result.topic


def test_a_recap_with_nothing_recapped_is_not_notable() -> None:
    request = remember(USER, "what did we discuss yesterday?", reply="")
    result = episode(request)
    assert isinstance(result, EpisodicSummary) and not result.notable


def test_a_relayed_line_about_last_time_is_no_recap() -> None:
    from memoir.memory.episodic import outcome_signals

    assert outcome_signals(remember(USER, "Maya: what did we talk about last time?")) == []


def test_compose_keeps_a_named_speakers_subject_and_details() -> None:
    old = memory("Ingrid's dog Luna is 3 years old.", key="person:ingrid:pet:luna:age")
    new = MemoryCandidate(
        category="pet",
        summary="Ingrid's pet Luna is 4 years old.",
        importance=0.8,
        key="person:ingrid:pet:luna:age",
    )
    result = compose(old, new)
    assert isinstance(result, ComposedSummary)
    assert result.summary == "Ingrid's dog Luna is 4 years old."

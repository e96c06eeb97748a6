"""Event-aware extraction: the offline extractor's answer to the extraction request (speaker,
message time, earlier turns: the fields a real LLM sees rendered)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memoir.embeddings import get_local_embedder
from memoir.llm.offline_memory import extraction_offline, gate_offline
from memoir.memory.requests import TurnMemoryRequest
from memoir.memory.schemas import HotpathDecision, MemoryCandidate

EMBEDDER = get_local_embedder()
# Monday 8 May 2023, 10:15 UTC.
MAY_8 = datetime(2023, 5, 8, 10, 15, tzinfo=UTC)


def extract(
    text: str,
    *,
    speaker: str | None = None,
    earlier: tuple[str, ...] = (),
    now: datetime | None = MAY_8,
    timezone: str = "UTC",
) -> list[MemoryCandidate]:
    request = TurnMemoryRequest(
        message=text, earlier=list(earlier), speaker=speaker, now=now, timezone=timezone
    )
    return extraction_offline(request, EMBEDDER).memories


def gate(text: str, *, speaker: str | None = None) -> HotpathDecision:
    request = TurnMemoryRequest(message=text, speaker=speaker, now=MAY_8)
    return gate_offline(request, EMBEDDER)


def summaries(memories: list[MemoryCandidate]) -> list[str]:
    return [m.summary for m in memories]


def test_several_facts_in_one_message_become_several_memories() -> None:
    found = extract("My parrot Kiwi is 7 and I work as a pharmacist, and I drive a Corolla")
    assert set(summaries(found)) == {
        "User's parrot Kiwi is 7 years old.",
        "User works as a pharmacist.",
        "User drives a Corolla.",
    }
    keys = {m.key for m in found}
    assert {"profile:pet:kiwi:age", "profile:job"} <= keys


def test_yesterday_in_a_message_of_8_may_2023_is_7_may() -> None:
    [event] = extract("Yesterday I ran my first half marathon")
    assert event.kind == "event" and event.category == "event"
    assert event.date_iso == date(2023, 5, 7)
    assert event.time_phrase == "Yesterday"
    assert event.summary == "On 2023-05-07 User ran their first half marathon."


@pytest.mark.parametrize(
    ("text", "day", "opening"),
    [
        ("I sold my old bike last week", date(2023, 5, 1), "In the week of 2023-05-01 "),
        ("We visited the Alhambra in March", date(2023, 3, 1), "In March 2023 "),
        ("I quit smoking three days ago", date(2023, 5, 5), "On 2023-05-05 "),
        ("I graduated in 2019", date(2019, 1, 1), "In 2019 "),
        ("Bought a used piano on 2 May", date(2023, 5, 2), "On 2023-05-02 "),
    ],
)
def test_a_past_event_verb_is_an_event_with_its_date(text: str, day: date, opening: str) -> None:
    [event] = extract(text)
    assert event.kind == "event" and event.key is None
    assert event.date_iso == day
    assert event.summary.startswith(opening + "User ")


def test_an_event_without_a_time_phrase_has_no_date() -> None:
    [event] = extract("I adopted a three-legged cat from the shelter")
    assert event.kind == "event" and event.date_iso is None
    assert event.summary == "User adopted a three-legged cat from the shelter."


def test_relative_dates_are_the_users_days() -> None:
    # 23:30 UTC on 7 May is already 8 May in Auckland: "yesterday" there is 7 May.
    late = datetime(2023, 5, 7, 23, 30, tzinfo=UTC)
    [event] = extract("I lost my wallet yesterday", now=late, timezone="Pacific/Auckland")
    assert event.date_iso == date(2023, 5, 7)
    [utc] = extract("I lost my wallet yesterday", now=late, timezone="UTC")
    assert utc.date_iso == date(2023, 5, 6)


def test_the_subject_is_kept_not_user() -> None:
    found = extract("My brother Tariq got married in April")
    wedding = next(m for m in found if m.kind == "event")
    assert wedding.subject == "User's brother Tariq"
    assert wedding.summary == "In April 2023 User's brother Tariq got married."
    assert "User has a brother named Tariq." in summaries(found)


def test_a_named_speaker_is_the_subject_and_namespaces_the_key() -> None:
    found = extract("I live in Tromsø and my cat Pixel is 2", speaker="Ingrid")
    assert set(summaries(found)) == {
        "Ingrid lives in Tromsø.",
        "Ingrid's cat Pixel is 2 years old.",
    }
    assert {m.key for m in found} == {"person:ingrid:city", "person:ingrid:pet:pixel:age"}
    assert all(m.subject == "Ingrid" for m in found)


def test_two_speakers_facts_never_share_a_key() -> None:
    [one] = extract("I live in Bergen", speaker="Ingrid")
    [two] = extract("I live in Bergen", speaker="Olav")
    assert one.key != two.key


def test_a_pronoun_is_the_person_or_pet_named_before() -> None:
    found = extract("She just started puppy school", earlier=("My dog Mochi is 1",), speaker=None)
    [event] = found
    assert event.subject == "User's dog Mochi"
    assert event.summary == "On 2023-05-08 User's dog Mochi started puppy school."


@pytest.mark.parametrize(
    "text",
    [
        "You can do it!",
        "Never give up.",
        "Keep going, you've got this",
        "I'm so proud of you",
        "Good luck with the exam!",
        "Thanks so much, that's lovely",
        "Haha, same here",
        "I think so too",
        "How was the trip?",
        "Did you ever finish that book?",
    ],
)
def test_encouragement_small_talk_and_questions_are_not_facts(text: str) -> None:
    assert extract(text) == []
    assert extract(text, speaker="Ingrid") == []
    assert not gate(text).should_create


def test_a_plan_still_to_come_is_not_a_memory() -> None:
    assert extract("I'm flying to Lima next Tuesday") == []
    assert extract("My cousin turns 30 in July") == []


def test_an_instruction_to_the_assistant_is_kept_but_not_from_a_relayed_line() -> None:
    [rule] = extract("Never book calls before 9am")
    assert rule.category == "preference"
    assert extract("Never book calls before 9am", speaker="Ingrid") == []


def test_a_garbled_preference_is_said_properly() -> None:
    [wish] = extract("I'd rather rent than buy for now")
    assert wish.summary == "User would rather rent than buy for now."


def test_the_gate_explains_what_it_keeps() -> None:
    decision = gate("I lost my job at the bakery yesterday")
    assert decision.should_create
    assert "On 2023-05-07 User lost their job at the bakery." in decision.reasoning


def test_a_model_date_that_is_not_a_date_is_no_date() -> None:
    candidate = MemoryCandidate.model_validate(
        {"category": "event", "summary": "x", "importance": 0.6, "date_iso": "sometime in May"}
    )
    assert candidate.date_iso is None

"""The offline model's clause grammar: cutting sentences, subjects, tenses, verb forms."""

from __future__ import annotations

import pytest

from memoir.llm.offline_clauses import (
    gerund,
    is_verb_of,
    parse_clause,
    past_form,
    split_clauses,
    third_person_verb,
)


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        ("My cat Pixel is 2 and I live in Tromsø", ["My cat Pixel is 2", "I live in Tromsø"]),
        ("I love hiking and cycling", ["I love hiking and cycling"]),
        ("Tom and I went to Rome", ["Tom and I went to Rome"]),
        ("It rained, so we stayed in", ["It rained", "we stayed in"]),
        (
            "She barks at night and now she sleeps all day",
            ["She barks at night", "she sleeps all day"],
        ),
        ("Big news: I quit my job", ["Big news", "I quit my job"]),
    ],
)
def test_a_sentence_is_cut_where_a_subject_starts_a_new_clause(
    sentence: str, clauses: list[str]
) -> None:
    assert split_clauses(sentence) == clauses


@pytest.mark.parametrize(
    ("text", "kind", "lemma", "tense"),
    [
        ("I sold my bike", "speaker", "sell", "past"),
        ("Sold my bike last week", "speaker", "sell", "past"),  # the subject left out
        ("Yesterday we adopted a puppy", "group", "adopt", "past"),
        ("I've just started yoga", "speaker", "start", "perfect"),
        ("My aunt Rosa teaches piano", "possessed", "teach", "present"),
        ("I'm learning Greek", "speaker", "learn", "progressive"),
        ("I'll call you tomorrow", "speaker", "", "future"),
        ("We're going to move in June", "group", "", "future"),
        ("I could try that", "speaker", "", "modal"),
        ("You can do it", "listener", "", "modal"),
        ("keep going", "none", "", "imperative"),
        ("I've got two cats", "speaker", "have", "present"),
        ("I don't drive", "speaker", "drive", "present"),
        ("Carmen's sister was fired", "possessed", "fire", "past"),
        ("I've been running a lot", "speaker", "run", "progressive"),
        ("I used to live in Oslo", "speaker", "live", "past"),
        ("We were moving house", "group", "move", "past"),
        ("She has moved to Lyon", "pronoun", "move", "perfect"),
    ],
)
def test_subject_verb_and_tense(text: str, kind: str, lemma: str, tense: str) -> None:
    clause = parse_clause(text)
    assert (clause.subject.kind, clause.lemma, clause.tense) == (kind, lemma, tense)


def test_negation_and_copula() -> None:
    assert parse_clause("I don't drive").negated
    clause = parse_clause("My brother is a nurse")
    assert clause.copula and clause.rest == "a nurse" and clause.subject.noun == "brother"


def test_a_name_before_a_word_that_is_no_verb_is_no_clause() -> None:
    assert not parse_clause("Grumpy as ever").verb_phrase


def test_verb_forms() -> None:
    assert [third_person_verb(v) for v in ("drive", "have", "watch", "study", "am")] == [
        "drives",
        "has",
        "watches",
        "studies",
        "is",
    ]
    assert [past_form(v) for v in ("gone", "begun", "started")] == ["went", "began", "started"]
    assert [gerund(v) for v in ("book", "schedule", "plan", "email", "lie")] == [
        "booking",
        "scheduling",
        "planning",
        "emailing",
        "lying",
    ]
    assert all(
        is_verb_of(v, "event_verbs") for v in ("went", "lost", "adopted", "moved", "bought", "quit")
    )
    assert not any(is_verb_of(v, "event_verbs") for v in ("thought", "said", "felt", "wondered"))


@pytest.mark.parametrize(
    ("text", "kind", "words", "partner"),
    [
        ("He and Priscilla moved to Leeds", "pronoun", "he and Priscilla", "Priscilla"),
        ("Tom and I went to Rome", "group", "Tom and I", "Tom"),
        ("Anna Silva and Tom went hiking", "name", "Anna Silva and Tom", "Tom"),
        ("Anna Silva's garden was flooded", "possessed", "Anna Silva's garden", ""),
        ("They adopted a cat", "pronoun", "they", ""),
    ],
)
def test_subjects_read_by_their_shape(text: str, kind: str, words: str, partner: str) -> None:
    subject = parse_clause(text).subject
    assert (subject.kind, subject.text, subject.partner) == (kind, words, partner)

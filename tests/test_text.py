"""Plain-text helpers: one line, a JSON object, a sentence, first and second person, a message."""

from langchain_core.messages import AIMessage

from memoir.text import (
    loads_object,
    message_text,
    one_line,
    second_person,
    sentence,
    swap_words,
    to_first_person,
)


def test_one_line_joins_lines_and_runs_of_white_space() -> None:
    assert one_line("call\n  mom\tat 5") == "call mom at 5"


def test_one_line_cuts_a_long_text_with_an_ellipsis() -> None:
    assert one_line("abcdefgh", 5) == "abcd…"


def test_loads_object_gives_an_empty_dict_for_anything_but_an_object() -> None:
    assert loads_object('{"tone": "warm"}') == {"tone": "warm"}
    assert loads_object("[1, 2]") == {} and loads_object("not json") == {}


def test_a_sentence_is_capitalised_and_ends_with_punctuation() -> None:
    assert sentence(" see you there ") == "See you there."
    assert sentence("can we meet?") == "Can we meet?"


def test_swap_words_replaces_whole_words_in_any_case() -> None:
    assert swap_words("My mymy my", {"my": "your"}) == "your mymy your"


def test_second_person_says_the_users_words_back_to_them() -> None:
    assert second_person("remind me I'm to call my mom") == "remind you you're to call your mom"


def test_to_first_person_reads_a_proposal_as_a_request() -> None:
    assert to_first_person("remind you to call your mom") == "remind me to call my mom"


def test_message_text_joins_the_text_blocks_of_a_message() -> None:
    blocks = ["Hello", {"type": "text", "text": "there"}, {"type": "image_url", "image_url": {}}]
    assert message_text(AIMessage(content=blocks)) == "Hello\nthere"
    assert message_text(AIMessage(content="plain")) == "plain"

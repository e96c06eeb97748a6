"""Email header helpers: an author's address and first name, a subject without prefixes."""

from memoir.emails import email_address, first_name, normalize_subject


def test_the_address_of_an_author_is_lower_cased_without_the_name() -> None:
    assert email_address("Dan Smith <Dan.Smith@ACME.com>") == "dan.smith@acme.com"


def test_a_bare_address_is_its_own_address() -> None:
    assert email_address(" Dan@Acme.com ") == "dan@acme.com"


def test_the_first_name_comes_from_the_display_name() -> None:
    assert first_name("Dan Smith <dan@acme.com>") == "Dan"


def test_without_a_display_name_the_first_name_comes_from_the_address() -> None:
    assert first_name("dan.smith@acme.com") == "Dan"


def test_reply_forward_and_tag_prefixes_leave_the_subject() -> None:
    assert normalize_subject("Re: FWD: [team] Re:Budget for Q3") == "Budget for Q3"

"""Email header helpers: an author's address and first name, a subject without prefixes."""

from memoir.emails import (
    Recipient,
    domain_name,
    email_address,
    first_name,
    lookalike,
    normalize_subject,
    own_words,
    recipients,
    same_organisation,
)


def test_the_address_of_an_author_is_lower_cased_without_the_name() -> None:
    assert email_address("Dan Smith <Dan.Smith@ACME.com>") == "dan.smith@acme.com"


def test_a_comma_in_an_unquoted_name_does_not_hide_the_address() -> None:
    assert email_address("Angela Moore, LCSW <AMoore@Rehab.example>") == "amoore@rehab.example"


def test_a_bare_address_is_its_own_address() -> None:
    assert email_address(" Dan@Acme.com ") == "dan@acme.com"


def test_the_first_name_comes_from_the_display_name() -> None:
    assert first_name("Dan Smith <dan@acme.com>") == "Dan"


def test_without_a_display_name_the_first_name_comes_from_the_address() -> None:
    assert first_name("dan.smith@acme.com") == "Dan"


def test_reply_forward_and_tag_prefixes_leave_the_subject() -> None:
    assert normalize_subject("Re: FWD: [team] Re:Budget for Q3") == "Budget for Q3"


def test_recipients_after_a_cc_marker_are_copies() -> None:
    assert recipients("Kim Lee <kim@x.example>, cc: Ana <ana@y.example>; bo@y.example") == [
        Recipient("Kim Lee", "kim@x.example", copied=False),
        Recipient("Ana", "ana@y.example", copied=True),
        Recipient("", "bo@y.example", copied=True),
    ]


def test_an_empty_or_undisclosed_to_header_has_no_recipients() -> None:
    assert recipients("") == []
    assert recipients("undisclosed-recipients:;") == []


def test_a_misspelt_or_padded_copy_of_a_domain_imitates_it() -> None:
    assert lookalike("acme-corpp-helpdesk.example", "acme-corp.example")
    assert lookalike("acme-corp-example.net", "acme-corp.example")


def test_a_domain_under_a_country_second_level_imitates_by_its_name() -> None:
    assert lookalike("northfie1d-ac.uk", "northfield.ac.uk")
    assert lookalike("brightlane-co-uk.com", "brightlane.co.uk")
    assert not lookalike("brightlane.atlassian.net", "brightlane.co.uk")
    assert not lookalike("mail.brightlane.co.uk", "brightlane.co.uk")


def test_the_name_of_a_domain_skips_a_country_second_level() -> None:
    assert domain_name("mail.brightlane.co.uk") == "brightlane"
    assert domain_name("northfield.ac.uk") == "northfield"
    assert domain_name("acme-corp.example") == "acme-corp"
    assert domain_name("localhost") == "localhost"


def test_a_domain_its_subdomains_and_unrelated_domains_do_not_imitate_it() -> None:
    assert not lookalike("acme-corp.example", "acme-corp.example")
    assert not lookalike("mail.acme-corp.example", "acme-corp.example")
    assert not lookalike("github.com", "noreply.github.com")
    assert not lookalike("stripe.com", "acme-corp.example")
    assert not lookalike("localhost", "acme-corp.example")


def test_own_words_leave_out_quoted_history() -> None:
    assert own_words("Thanks!\n> Can you?") == "Thanks!\n"
    assert own_words("Sure.\n-----Original Message-----\nFrom: Kim") == "Sure.\n"
    assert own_words("Fine.\nFrom: Kim Lee\nSent: Monday\nCan you?") == "Fine.\n"
    assert own_words("Ok.\nOn Mon, 2 Nov, Kim wrote:\n> Can you?") == "Ok.\n"


def test_the_same_name_under_another_country_s_suffix_is_the_same_organisation() -> None:
    assert same_organisation("harbour.com.my", "harbour.com.sg")
    assert same_organisation("acme.de", "acme.com")
    assert not same_organisation("acme.net", "acme.com")
    assert not same_organisation("harb0ur.com.my", "harbour.com.sg")
    assert not lookalike("harbour.co.id", "harbour.com.sg")

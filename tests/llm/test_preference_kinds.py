"""The preference readers (offline_preferences): common kinds of preference texts, typed."""

from datetime import time

import pytest

from memoir.llm.offline_preferences import read_calendar_rules, read_response_style
from memoir.llm.prompts import DEFAULT_CAL_PREFERENCES, DEFAULT_RESPONSE_PREFERENCES
from memoir.stores.preferences import DEFAULT_PREFERENCES


@pytest.mark.parametrize(
    ("text", "sign_off"),
    [
        ('Sign off emails with "Best, Sam".', "Best, Sam"),
        ("sign my emails 'Cheers, Sam'", "Cheers, Sam"),
        ("End my emails with “Thanks, Sam”", "Thanks, Sam"),
        (
            '- When replying, prefer: opening with "Hey <name>,"; signing off with "Cheers, Ana"',
            "Cheers, Ana",
        ),
        ("Sign off with my name; no emojis.", None),
    ],
)
def test_sign_off(text: str, sign_off: str | None) -> None:
    assert read_response_style(text).sign_off == sign_off


@pytest.mark.parametrize(
    ("text", "tone"),
    [
        ("Write emails in a warm tone.", "warm"),
        ("Be brief.", "brief"),
        ("keep my replies short and friendly", "brief and warm"),
        ("Use a formal tone with clients.", "formal"),
        (DEFAULT_RESPONSE_PREFERENCES, "professional and concise"),
    ],
)
def test_tone(text: str, tone: str) -> None:
    assert read_response_style(text).tone == tone


def test_later_lines_win_and_unread_lines_are_kept() -> None:
    style = read_response_style(
        'Sign off emails with "Best, Sam".\nSign off emails with "Cheers, Sam".\nNo emojis.'
    )
    assert style.sign_off == "Cheers, Sam"
    assert style.other == ["No emojis."]
    assert read_response_style('- When replying, prefer: opening with "Hey <name>,"').greeting == (
        "Hey <name>,"
    )


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("Meetings last 45 minutes.", "meeting_minutes", 45),
        ("keep meetings to 45 min", "meeting_minutes", 45),
        ("I prefer one hour meetings", "meeting_minutes", 60),
        ("- When scheduling, prefer: 15-minute meetings", "meeting_minutes", 15),
        (DEFAULT_CAL_PREFERENCES, "meeting_minutes", 30),
        ("Avoid meetings before 10:00.", "avoid_before", time(10)),
        ("don't book anything before 10am", "avoid_before", time(10)),
        ("Avoid meetings after 17:00.", "avoid_after", time(17)),
        ("no calls after 5", "avoid_after", time(17)),
        ("Only schedule meetings between 10am and 4pm.", "avoid_after", time(16)),
        ("Avoid meetings on Fridays.", "avoid_days", ["Friday"]),
        ("no meetings on Friday", "avoid_days", ["Friday"]),
        ("No meetings on weekends", "avoid_days", ["Saturday", "Sunday"]),
        (
            "Invite dana@example.com to meetings by default.",
            "default_attendees",
            ["dana@example.com"],
        ),
        ("always add dana@example.com", "default_attendees", ["dana@example.com"]),
    ],
)
def test_calendar_rules(text: str, field: str, value: object) -> None:
    assert getattr(read_calendar_rules(text), field) == value


def test_store_default_calendar_preferences() -> None:
    rules = read_calendar_rules(DEFAULT_PREFERENCES["cal_preferences"])
    assert rules.meeting_minutes == 30  # not the 10-minute gap between meetings
    assert (rules.avoid_before, rules.avoid_after) == (time(9), time(18))
    assert rules.avoid_days == [] and rules.default_attendees == []
    assert any("agenda" in line for line in rules.other)

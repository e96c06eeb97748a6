# ruff: noqa: E501  (the emails are test data, one string each)
"""Offline triage on emails written for this test (not from an eval set): one per kind of
mail of seed 000's default rules, from senders the example table has never seen."""

import pytest

from memoir.llm import OfflineChatModel
from memoir.llm.offline_triage import table
from memoir.models import Classification, EmailMessage
from memoir.stores import DEFAULT_PREFERENCES
from memoir.triage import triage_email

EMAILS = [
    (
        "r1",
        "Oskar Hale <oskar@fjordsoft.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Can you cover my on-call shift Saturday?",
        "Hi Lea, something came up with my family. Would you be able to swap on-call shifts with me this Saturday? I can take yours next week.",
        Classification.RESPOND,
    ),
    (
        "r2",
        "Mira Chen <mira.chen@atlasfoods.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Invoice export format",
        "Hello Lea, our accounting software needs the invoices as CSV with semicolons. Is that something your export can do, or is it only PDF?",
        Classification.RESPOND,
    ),
    (
        "r3",
        "Dad <hbrandt@web.de>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Sunday",
        "Mum's birthday lunch is at 1pm on Sunday. Will you bring the cake or should I order one?",
        Classification.RESPOND,
    ),
    (
        "r4",
        "Felix Moreau <felix@fjordsoft.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Payments API returning 502",
        "Lea, since the deploy an hour ago about 20% of calls to the payments API return 502. Rolling back didn't help. Need you on this now.",
        Classification.RESPOND,
    ),
    (
        "r5",
        "Ingrid Solberg <ingrid@fjordsoft.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Q2 budget",
        "Lea, I need your team's Q2 budget request by Wednesday noon so finance can consolidate. A rough number is fine.",
        Classification.RESPOND,
    ),
    (
        "r6",
        "Dr. Amal Haddad's office <reception@haddad-clinic.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Follow-up visit",
        "Dear Ms. Brandt, Dr. Haddad would like to see you for a follow-up in two weeks. Please reply with the days that suit you.",
        Classification.RESPOND,
    ),
    (
        "r7",
        "Tomas Rivera <tomas@brightline.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Workshop agenda",
        "Hi Lea, great to meet you at the conference. Could we set up a call next week to plan the joint workshop? Tuesday or Thursday afternoon?",
        Classification.RESPOND,
    ),
    (
        "r8",
        "Ana Lopez <ana@fjordsoft.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Thoughts on the caching RFC?",
        "Hey Lea, I put the caching RFC in the team folder. You know the read path best, what's your take on the invalidation approach?",
        Classification.RESPOND,
    ),
    (
        "n1",
        "Jenkins <jenkins@ci.fjordsoft.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Build #4412 FAILED: billing-service",
        "Build #4412 of billing-service failed at stage 'integration-tests'. Changes: 3 commits by felix.",
        Classification.NOTIFY,
    ),
    (
        "n2",
        "Revolut <no-reply@revolut.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "You paid 23.40 EUR at Cafe Nord",
        "Your card ending 7719 was charged 23.40 EUR at Cafe Nord.",
        Classification.NOTIFY,
    ),
    (
        "n3",
        "Oskar Hale <oskar@fjordsoft.example>",
        "eng@fjordsoft.example",
        "Sick today",
        "Hi all, I'm down with the flu and won't be online today. Felix has my pager.",
        Classification.NOTIFY,
    ),
    (
        "n4",
        "Dropbox <no-reply@dropbox.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        'Ingrid shared "Offsite photos" with you',
        "Ingrid Solberg shared a folder with you. View folder",
        Classification.NOTIFY,
    ),
    (
        "n5",
        "Opsgenie <alerts@opsgenie.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "[Closed] High latency on search-api",
        "Alert 'High latency on search-api' was closed automatically after the metric recovered. Duration: 9m.",
        Classification.NOTIFY,
    ),
    (
        "n6",
        "Apple <no_reply@email.apple.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Your Apple ID was used to sign in on a new device",
        "Your Apple ID was used to sign in to an iPad near Oslo. If you recently signed in, you can disregard this email.",
        Classification.NOTIFY,
    ),
    (
        "n7",
        "Ingrid Solberg <ingrid@fjordsoft.example>",
        "all@fjordsoft.example",
        "New parental leave policy",
        "Hi everyone, starting next month parental leave is extended to 20 weeks for all parents. Details are on the HR wiki.",
        Classification.NOTIFY,
    ),
    (
        "n8",
        "Norwegian <noreply@norwegian.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Your booking DY1234 is confirmed",
        "Thank you for booking. Oslo - Berlin, 14 May 07:05. Booking reference ABC123.",
        Classification.NOTIFY,
    ),
    (
        "i1",
        "Patagonia <email@e.patagonia.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Gear up for spring: new colours are here",
        "Explore our new spring jackets and fleeces. Shop now. Unsubscribe",
        Classification.IGNORE,
    ),
    (
        "i2",
        "Dan Kowalski <dan@growthhackers.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Fjordsoft + us?",
        "Hi Lea, we help B2B SaaS teams double their inbound leads with AI-written content. Do you have 15 minutes this week for a quick chat?",
        Classification.IGNORE,
    ),
    (
        "i3",
        "Hacker Newsletter <kale@hackernewsletter.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Hacker Newsletter #700",
        "Top links this week: a new database, the history of Unix and a guide to writing. Unsubscribe",
        Classification.IGNORE,
    ),
    (
        "i4",
        "IT Helpdesk <it-support@fjordsoft-helpdesk.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Action required: password expiry",
        "Your password expires in 24 hours. Click the link below to keep your current password or your access will be disabled.",
        Classification.IGNORE,
    ),
    (
        "i5",
        "Strava <no-reply@strava.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Felix gave you kudos",
        "Felix Moreau gave you kudos on your Morning Run. Open Strava to say thanks.",
        # A social app's nudge: seed 000's marketing (social and app nudges). It was a close
        # call of the learned model after the sixth blind round (ignore 0.65, notify 0.45); the
        # eighth settles it (ignore 0.69, notify 0.41).
        Classification.IGNORE,
    ),
    (
        "i6",
        "Booking.com <noreply@booking.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "How was your stay in Bergen?",
        "Rate your stay and help other travellers. It only takes a minute.",
        Classification.IGNORE,
    ),
    (
        "i7",
        "Felix Moreau <felix@fjordsoft.example>",
        "Ingrid Solberg <ingrid@fjordsoft.example>, team@fjordsoft.example",
        "Re: Friday breakfast",
        "Croissants sound great, thanks Ingrid!",
        Classification.IGNORE,
    ),
    (
        "i8",
        "AWS Events <aws-events@amazon.example>",
        "Lea Brandt <lea@fjordsoft.example>",
        "Register: AWS Summit Stockholm",
        "Join us for a free day of sessions on cloud and AI. Register now, space is limited.",
        Classification.IGNORE,
    ),
]


@pytest.mark.parametrize(
    ("author", "to", "subject", "body", "label"),
    [e[1:] for e in EMAILS],
    ids=[e[0] for e in EMAILS],
)
async def test_unseen_emails_are_triaged_as_seed_000_says(
    offline: OfflineChatModel, author: str, to: str, subject: str, body: str, label: Classification
) -> None:
    email = EmailMessage(email_id="e1", author=author, to=to, subject=subject, body=body)
    decision = await triage_email(offline, email, DEFAULT_PREFERENCES["triage_preferences"])
    assert decision.classification is label, decision.reasoning
    assert "because" in decision.reasoning  # the rule, cue or nearest example that decided


def test_the_table_covers_every_action_with_enough_examples() -> None:
    categories = table()["categories"]
    assert {c["action"] for c in categories.values()} == {"respond", "notify", "ignore"}
    for name, category in categories.items():
        assert len(category["examples"]) >= 4, name
        assert category["rule"], name

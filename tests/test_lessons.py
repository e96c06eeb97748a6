"""Targeted triage lessons: the scope a decision teaches, where its line goes, how it reads back."""

from memoir.lessons import (
    Scope,
    ScopeKind,
    add_lesson,
    deciding_lesson,
    has_lesson,
    lesson_for_decision,
    parse_lessons,
)
from memoir.llm import ScriptedChatModel
from memoir.llm.prompts import DEFAULT_TRIAGE_INSTRUCTIONS
from memoir.models import Classification, EmailMessage
from memoir.preference_update import preference_request, updated_preferences
from memoir.stores import DEFAULT_PREFERENCES

TRIAGE = DEFAULT_PREFERENCES["triage_preferences"]
ME = "Sam <sam@northwind.example>"


def email(author: str, subject: str, body: str = "", to: str = ME) -> EmailMessage:
    return EmailMessage(email_id="e1", author=author, to=to, subject=subject, body=body)


SHOP = email("Shop <newsletters@shop.example>", "Spring sale", "Up to 50% off. Unsubscribe")
BANK = email("Harbor Bank <alerts@harborbank.example>", "Your statement is ready")
DAN = email("Dan <dan@acme.example>", "Lunch on Friday?", "Are you free?")


def section(text: str, heading: str) -> list[str]:
    """The lines under the heading that starts with `heading`, up to the blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1 : end]


def learn(text: str, decision: str, about: EmailMessage) -> str:
    lesson = lesson_for_decision(decision, about, text)
    assert lesson is not None
    return add_lesson(text, lesson)[0]


def test_each_lesson_lands_under_the_heading_of_its_action() -> None:
    text = learn(TRIAGE, "notify.ignore", SHOP)
    text = learn(text, "notify.acknowledge", BANK)
    text = learn(text, "notify.respond", DAN)
    ignore_line = '- Ignore: emails from newsletters@shop.example (you ignored "Spring sale")'
    notify_line = (
        '- Notify: emails from alerts@harborbank.example with subjects like "Your statement is '
        'ready" (you acknowledged "Your statement is ready")'
    )
    respond_line = (
        '- Respond: emails from dan@acme.example (you chose to respond to "Lunch on Friday?")'
    )
    assert section(text, "Ignore")[-1] == ignore_line
    assert section(text, "Notify")[-1] == notify_line
    assert section(text, "Respond")[-1] == respond_line
    assert text.startswith(TRIAGE.split("\n\n")[0])  # the rest is kept word for word


def test_ignoring_an_email_covers_its_sender_s_address() -> None:
    assert [lesson.scope for lesson in parse_lessons(learn(TRIAGE, "notify.ignore", DAN))] == [
        Scope(ScopeKind.SENDER, "dan@acme.example")
    ]


def test_ignoring_a_company_s_offers_never_covers_its_alerts() -> None:
    offer = email("Harbor Bank <offers@harborbank.example>", "Pre-approved: 0% APR", "Apply today")
    [lesson] = parse_lessons(learn(TRIAGE, "notify.ignore", offer))
    assert lesson.scope == Scope(ScopeKind.SENDER, "offers@harborbank.example")
    assert deciding_lesson([lesson], BANK) is None


def test_an_acknowledgement_covers_mail_like_it_not_the_senders_other_mail() -> None:
    alert = email("GitHub <noreply@github.example>", "Security alert for memoir", "Unsubscribe")
    lesson = parse_lessons(learn(TRIAGE, "notify.acknowledge", alert))[0]
    digest = email("GitHub <noreply@github.example>", "Trending repositories today", "Unsubscribe")
    assert lesson.scope.kind is ScopeKind.SUBJECT
    assert lesson.scope.covers(alert) and not lesson.scope.covers(digest)


def test_a_shared_domain_is_never_a_scope() -> None:
    internal = email("Payroll <noreply@northwind.example>", "Your payslip")
    webmail = email("Alerts <alerts@gmail.com>", "Weekly report")
    for sender in (internal, webmail):
        [lesson] = parse_lessons(learn(TRIAGE, "notify.ignore", sender))
        assert lesson.scope.kind is ScopeKind.SENDER


def test_a_notification_from_a_person_teaches_about_that_kind_of_mail_only() -> None:
    fyi = email("Wei <wei@northwind.example>", "Weekly platform update 12", "Kafka is done.")
    [lesson] = parse_lessons(learn(TRIAGE, "notify.acknowledge", fyi))
    assert lesson.scope == Scope(
        ScopeKind.SUBJECT, "Weekly platform update *", within="wei@northwind.example"
    )
    review = email("Wei <wei@northwind.example>", "Can you review my PR?", "Before Thursday?")
    assert deciding_lesson([lesson], review) is None


def test_a_conflicting_decision_narrows_instead_of_flipping_the_whole_sender() -> None:
    text = learn(TRIAGE, "notify.acknowledge", BANK)
    offer = email("Harbor Bank <offers@harborbank.example>", "0% APR card", "Apply today.")
    text = learn(text, "notify.ignore", offer)
    lessons = parse_lessons(text)
    assert deciding_lesson(lessons, offer).action is Classification.IGNORE  # type: ignore[union-attr]
    assert deciding_lesson(lessons, BANK).action is Classification.NOTIFY  # type: ignore[union-attr]
    assert lesson_for_decision("notify.ignore", offer, text) is None  # already decided so


def test_the_same_scope_with_another_action_is_replaced_in_place() -> None:
    text = TRIAGE + '- Ignore: emails from dan@acme.example with subjects like "Lunch on Friday?"\n'
    lesson = lesson_for_decision("notify.respond", DAN, text)
    assert lesson is not None
    changed, what = add_lesson(text, lesson)
    assert what.startswith("replaced `- Ignore: emails from dan@acme.example")
    assert [(x.action, x.scope.kind) for x in parse_lessons(changed)] == [
        (Classification.RESPOND, ScopeKind.SUBJECT)
    ]


def test_lines_a_person_edits_are_read_back() -> None:
    text = "\n".join(
        [
            "- Ignore: emails from @shop.example",
            '- Notify: emails with subjects like "Invoice *" (any sender)',
            "- Respond: emails about school trips",
            "- Ignore: marketing emails (a general rule, no lesson)",
        ]
    )
    assert [(x.action.value, x.scope) for x in parse_lessons(text)] == [
        ("ignore", Scope(ScopeKind.DOMAIN, "shop.example")),
        ("notify", Scope(ScopeKind.SUBJECT, "Invoice *")),
        ("respond", Scope(ScopeKind.TOPIC, "school trips")),
    ]


def test_ignoring_a_colleague_s_email_never_silences_the_colleague() -> None:
    reply_all = email("Ahmed <ahmed@northwind.example>", "Re: Team dinner venue", "+1, thanks!")
    [lesson] = parse_lessons(learn(TRIAGE, "notify.ignore", reply_all))
    assert lesson.scope == Scope(
        ScopeKind.SUBJECT, "Team dinner venue", within="ahmed@northwind.example"
    )
    urgent = email("Ahmed <ahmed@northwind.example>", "Disk full on db-2", "Can you resize it?")
    assert deciding_lesson([lesson], urgent) is None


SEED_000 = DEFAULT_TRIAGE_INSTRUCTIONS  # headings "Emails that are (not) worth responding to:"


def test_an_ignore_lesson_never_lands_under_the_respond_heading() -> None:
    """Issue 10: "Ignore: emails like …" lines were appended under "Respond"."""
    for start in (TRIAGE, SEED_000):
        text = learn(start, "notify.respond", DAN)
        text = learn(text, "notify.ignore", SHOP)
        text = learn(text, "notify.acknowledge", BANK)
        for heading in ("Ignore", "Notify", "Respond"):
            learned = [line for line in section(text, heading) if parse_lessons(line)]
            assert [lesson.action.value for lesson in parse_lessons("\n".join(learned))] == [
                heading.lower()
            ]


def test_a_lesson_a_model_wrote_under_another_heading_is_moved_under_its_own() -> None:
    misplaced = (
        TRIAGE + '- Ignore: emails from newsletters@shop.example (you ignored "Spring sale")\n'
    )
    lesson = lesson_for_decision("notify.ignore", SHOP, TRIAGE)
    assert lesson is not None
    assert not has_lesson(misplaced, lesson)  # stated, but under "Respond"
    text, what = add_lesson(misplaced, lesson)
    assert what.startswith("replaced")
    assert lesson.line in section(text, "Ignore")
    assert not [line for line in section(text, "Respond") if line.startswith("- Ignore")]
    assert has_lesson(text, lesson)
    assert add_lesson(text, lesson) == (text, f"`{lesson.line}` is already there: no change")


async def test_the_updater_moves_a_lesson_the_model_put_under_another_heading() -> None:
    line = '- Ignore: emails from newsletters@shop.example (you ignored "Spring sale")'
    model = ScriptedChatModel(
        responses={
            "UserPreferences": [
                {"chain_of_thought": "appended", "user_preferences": TRIAGE + line + "\n"}
            ]
        }
    )
    request = preference_request("triage_preferences", TRIAGE, "notify.ignore", email=SHOP)
    result = await updated_preferences(model, request)
    assert section(result.user_preferences, "Ignore")[-1] == line
    assert line not in section(result.user_preferences, "Respond")

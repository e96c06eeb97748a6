"""The general triage rules of the offline provider: cue families and who sent the email.

An email is read for families of cues (words and phrases of a kind of mail, never sentences of
particular emails), and its sender is placed in one of three kinds:

- a **person** (a named human's address): what they ask decides; unsolicited outreach (sales,
  recruiting, fundraising) is ignored, a question or request needs a reply, news is a
  notification;
- an **organisation** (a role or machine address: noreply@, alerts@, info@, feedback@ …, or a
  bulk-mail footer): it never needs a reply unless it explicitly asks for one ("reply YES to
  confirm"); transactional mail about the user's own things (receipts, deliveries, sign-ins,
  statements, deploys, shared documents …) is a notification, marketing and engagement mail
  (sales, webinars, product news, likes, streaks, surveys, digests) is ignored;
- anyone: scams and phishing are ignored, "no action needed" is a notification.

`classify_by_rules` returns the classification and the reason in words, naming the cues.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memoir.llm._text import email_address
from memoir.llm.triage_lessons import PUBLIC_MAIL_DOMAINS
from memoir.models import Classification

Marker = tuple[re.Pattern[str], str]


def _markers(*pairs: tuple[str, str]) -> list[Marker]:
    return [(re.compile(p, re.I), label) for p, label in pairs]


@dataclass(frozen=True)
class TriageEmail:
    author: str
    to: str
    subject: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.subject}\n{self.body}"


class SenderKind(StrEnum):
    PERSON = "person"
    ORGANISATION = "organisation"


# ----- anyone ----------------------------------------------------------------------------------

SCAM = _markers(
    (
        r"\byou(?:'ve| have)? (?:been selected|won)\b|\blottery\b|\bjackpot\b|\bunclaimed\b|"
        r"\bclaim (?:your|the) (?:prize|reward|funds?|winnings|inheritance)\b",
        "a prize or reward bait",
    ),
    (
        r"\b(?:inheritance|beneficiary|next of kin)\b|\bwire transfer\b|"
        r"\b(?:send|provide|confirm|reply with) (?:us )?(?:your )?(?:full name and )?bank "
        r"(?:account )?details\b|\$\s?\d+(?:\.\d+)?\s?(?:million|m)\b|\bmillion dollars\b",
        "a money-transfer bait",
    ),
    (r"\bairdrop\b|\bconnect (?:your )?(?:crypto )?wallet\b|\b\d+ btc\b", "a crypto bait"),
    (
        r"\bverify your (?:account|identity|mailbox|email account)\b|"
        r"\b(?:mailbox|email storage|storage) (?:is |has reached )?(?:almost |nearly )?full\b|"
        r"\b(?:emails?|messages?|account|mailbox) will be (?:deleted|closed|suspended|lost)\b|"
        r"\bavoid losing\b|\b(?:confirm|update|verify|re-?enter) (?:your|their) (?:bank|account|"
        r"payment|login|direct deposit|card) (?:details|information|credentials)\b|"
        r"\bclick (?:on )?the link (?:below )?to (?:verify|update|confirm|restore)\b",
        "an account-verification bait (phishing)",
    ),
    (r"\bspam\b|\bact now\b", "spam"),
)
NO_ACTION = _markers(
    (
        r"\bno (?:further )?(?:action|response|reply) (?:is )?(?:needed|required)\b|"
        r"\bno need to (?:reply|respond|do anything)\b|"
        r"\bnothing (?:else )?(?:needed|to do|required)\b|"
        r"\byou don'?t need to do anything\b|\byou(?:'re| are) all set\b|"
        r"\bthere'?s nothing (?:else )?(?:to do|you need to do)\b",
        "says no action is needed",
    ),
)

# ----- what people ask -------------------------------------------------------------------------

RESPOND_MARKERS = _markers(
    (r"\b(?:can|could|would|will) you\b", "a direct request"),
    (
        r"\b(?:please|kindly) (?!note\b|find\b|see\b|ignore\b|disregard\b|be aware\b|welcome\b|"
        r"join (?:me|us) in welcoming\b)[a-z]+\b|"
        r"\blet me know\b|\bget back to me\b",
        "a request for an answer or an action",
    ),
    (
        r"\bare you (?:available|free|around|able|coming|open)\b|\bdo you have time\b|"
        r"\bwhat time works\b|\bworks? for you\b|\bsuits? you\b|\bmeeting request\b|"
        r"\bschedule (?:a|the|our) (?:meeting|call|kickoff)\b|"
        r"\bset up a (?:meeting|call)\b|\blet'?s (?:meet|catch up|sync)\b|"
        r"\bbook a (?:call|meeting)\b|\bfind a time\b|\bwhich (?:day|time|slot|option) "
        r"(?:do you prefer|works|suits)\b",
        "a meeting or scheduling request",
    ),
    (
        r"\bwhat do you think\b|\bwhat'?s your (?:call|take|view)\b|"
        r"\byour (?:input|opinion|feedback|approval|sign-?off|signature|decision|comments|"
        r"thoughts|review|eyes)\b|\bneeds? your\b|\byou need to\b|\bwaiting (?:on|for) "
        r"(?:you|your)\b|\bi'?d (?:love|appreciate|like) (?:your|you to)\b",
        "asks for the user's input or decision",
    ),
    (
        r"\burgent\b|\basap\b|\bas soon as (?:you )?(?:can|possible)\b|\bblock(?:er|ing)\b|"
        r"\bis down\b|\boutage\b|\bincident (?:bridge|call)\b",
        "an urgent issue",
    ),
    (
        r"\b(?:stopped|not|isn'?t|aren'?t|doesn'?t|don'?t) work(?:ing|s)?\b|\bbroken\b|"
        r"\bdoes nothing\b|\bhas no effect\b|\bno longer works\b|\bcharged (?:twice|two times)\b|"
        r"\bbilled (?:twice|two times)\b",
        "a problem report",
    ),
    (
        r"\b(?:by|before|until) (?:eod|end of (?:the )?(?:day|week)|(?:this |next )?"
        r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight)\b|"
        r"\bdeadline\b",
        "a deadline",
    ),
)
OUTREACH = _markers(
    (
        r"\bi help (?:[a-z]+ )*(?:leaders|teams|companies|founders|businesses)\b|"
        r"\bwe(?:'ve)? help(?:ed)? (?:\d+\+? )?(?:[a-z]+ )*(?:companies|teams|businesses|brands)\b|"
        r"\bqualified leads\b|\b(?:your|their) (?:sales )?pipeline\b|\bbook a demo\b|"
        r"\bsee if we(?:'re| are) a (?:good )?fit\b|\bbumping this\b|"
        r"\bfollowing up on my (?:last|previous) (?:email|note|message)\b",
        "unsolicited sales outreach",
    ),
    (
        r"\bcame across your (?:profile|resume|cv|company)\b|\bexciting (?:new )?opportunit|"
        r"\bopen to (?:new )?(?:roles|opportunities|a new role)\b|\bis hiring\b|"
        r"\b(?:top|competitive) salary\b|\binterested in hearing more\b",
        "recruiting outreach",
    ),
    (
        r"\b(?:make|give) a (?:gift|donation)\b|\bdonate (?:now|today)\b|\bfundrais|"
        r"\bevery (?:dollar|euro|gift) (?:is )?matched\b|\bdouble your impact\b|\bwill you give\b",
        "a fundraising appeal",
    ),
)

# ----- what organisations send -----------------------------------------------------------------

TRANSACTIONAL = _markers(
    (
        r"\breceipt\b|\bamount (?:paid|due)\b|\btotal:|\bpaid\b|\bpayment (?:method|received|"
        r"confirmation|successful)\b|\binvoice\b|\bstatement\b|\bdirect debit\b|"
        r"\byour (?:[a-z]+ )?bill\b|"
        r"\bcharged to\b|\brenew(?:ed|al)\b|\bsubscription (?:renewed|confirmed)\b|"
        r"\border (?:confirmation|#|no\.?|number)|\byour order\b|\brefund(?:ed)? "
        r"(?:processed|issued)\b|\bpurchase of\b|\btransaction\b|"
        r"\b(?:card|account) ending (?:in )?\d",
        "a receipt, bill or payment",
    ),
    (
        r"\b(?:has|have|was|been) shipped\b|^shipped\b|\bon (?:its|the) way\b|"
        r"\bout for delivery\b|\bdelivered\b|(?<!free )\bdelivery\b|"
        r"\btrack(?:ing)? (?:your|number|the)\b|\bparcel\b|\byour package\b",
        "a shipping or delivery update",
    ),
    (
        r"\bsign(?:ed)?[- ]in\b|\bnew (?:device|login)\b|\blog(?:ged)?[- ]?in (?:attempt|from)\b|"
        r"\bpassword (?:(?:was|has been) )?(?:changed|updated|reset)\b|\bsecurity alert\b|"
        r"\bif (?:this|that) was you\b|\btwo-factor\b|\bverification code\b",
        "an account or security notice",
    ),
    (
        r"\bcheck-?in\b|\bboarding pass\b|\bflight\b|\bitinerary\b|\bgate change\b|"
        r"\b(?:booking|reservation) (?:is )?confirmed\b",
        "a travel notice",
    ),
    (
        r"\bappointment (?:reminder|confirmed|confirmation|with)\b|\breminder of your\b",
        "an appointment notice",
    ),
    (
        r"\b(?:has )?(?:accepted|declined|tentatively accepted) (?:this|your|the) invitation\b|"
        r"^(?:accepted|declined|tentative|updated invitation|canceled event|cancelled event):",
        "a calendar response",
    ),
    (
        r"\bdeploy(?:ment|ed|s)?\b|\bbuild (?:passed|succeeded|failed|finished)\b|"
        r"\bworkflow (?:run|'[^']+')|\bpipeline (?:passed|succeeded|failed)\b|\bmerged\b|"
        r"\bpull request\b|\bcompleted successfully\b|\bsucceeded\b|\bresolved\b|"
        r"\bincident #?\d+|\bis now live\b|\brelease notes\b|\bchangelog\b|"
        r"\bstatus changed\b|\bautomated message\b",
        "a deploy, build or incident notification",
    ),
    (
        r"\bshared (?:a |the )?(?:document|doc|file|folder|spreadsheet|presentation)\b|"
        r"\bhas shared\b|\bshared [^\n]{0,60}\bwith you\b|\binvited you to (?:view|edit|comment)\b",
        "a shared document",
    ),
    (
        r"\b(?:is|are) now (?:available|ready|open)\b|\bis ready\b|\bis available\b|"
        r"\bcan now be (?:viewed|downloaded)\b|\bavailable in (?:the |your )?(?:[a-z]+ )?"
        r"(?:portal|app|account|online banking)\b|\bpayslip\b",
        "a document that is ready",
    ),
)
NOTIFY_MARKERS = [
    *TRANSACTIONAL,
    *_markers(
        (r"\bfyi\b|\bfor your information\b|\bjust so you know\b|\bheads[- ]up\b", "an FYI"),
        (
            r"\bout sick\b|\bsick (?:day|leave)\b|\bunwell\b|\bout of (?:the )?office\b|"
            r"\bon (?:vacation|holiday|leave|parental leave)\b|\bback (?:tomorrow|on|next)\b",
            "an absence notice",
        ),
        (
            r"\b(?:joins|is joining|has joined|will join|starts|is starting|is leaving|has left)"
            r" (?:the|our|us|on|as|today|next)\b|\bwelcome [A-Z][a-z]+ (?:to|on)\b|"
            r"\blast day\b",
            "people news (someone joins or leaves)",
        ),
        (
            r"\bmoved (?:from|to)\b|\brescheduled\b|\bpostponed\b|\bcancel(?:l)?ed\b|"
            r"\b(?:is|are|will be) closed\b|\bclosure\b|\bno school\b|\bpublic holiday\b|"
            r"\bis now on\b|\bnow (?:on|at) (?:monday|tuesday|wednesday|thursday|friday)\b",
            "a schedule change or closure",
        ),
        (
            r"\b(?:scheduled |planned )?maintenance\b|\bdowntime\b|\bwill be unavailable\b|"
            r"\bservice (?:interruption|disruption)\b",
            "a maintenance notice",
        ),
        (
            r"\b(?:status|progress|weekly|monthly|quarterly|project|team|platform) "
            r"(?:update|report|recap|news)\b|\bquick update\b|\bupdate:|"
            r"\b(?:was|were|has been|is) (?:finished|completed|done)\b|\bnext step\b",
            "a status update",
        ),
        (r"\bnotification\b|\balert\b", "a notification"),
        (r"\bannouncement\b|\bannouncing\b", "an announcement"),
    ),
]
EXPLICIT_REPLY = re.compile(
    r"\b(?:please |kindly )?reply (?:yes|no|with|by|to confirm)\b|"
    r"\b(?:please|kindly) (?:reply|respond|confirm|rsvp|let us know)\b|\brsvp\b|"
    r"\bto confirm (?:that )?you(?:'ll| will)? (?:attend|be there|come)\b",
    re.I,
)
COMMERCIAL = _markers(
    (
        r"\b\d{1,2}\s?% off\b|\bup to \d{1,2}\s?%|\bsave \d{1,2}\s?%|"
        r"\b\d{1,2}\s?% (?:discount|apr)\b|"
        r"\bon sale\b|\b(?:flash |spring |summer |winter |big )?sale\b|\bdiscounts?\b|"
        r"\bpromo(?:tion|tional)?\b|\bcoupon\b|\bdeals?\b|\bspecial offer\b|"
        r"\boffer (?:ends|expires)\b|"
        r"\blimited[- ]time\b|\bfree (?:shipping|delivery|trial)\b|\bshop (?:now|the)\b|"
        r"\bbuy now\b|\blast chance\b|\bdon'?t miss\b|\bpre-?approved\b|"
        r"\bapply (?:now|today)\b|\breduced\b|\bblack friday\b|\bearly[- ]bird\b|\btickets?\b",
        "a sales pitch",
    ),
    (
        r"\bwebinar\b|\bregist(?:er (?:now|today|for)|ration (?:is )?(?:open|available))\b|"
        r"\bsave your seat\b|\blivestream\b|"
        r"\blive (?:session|event|demo|online session)\b|\bseats are limited\b|"
        r"\bjoin (?:us|our experts)\b|\bevents? (?:near you|happening)\b|\bthings to do\b|"
        r"\bthis weekend in\b|\bnear you\b",
        "an event promotion",
    ),
    (
        r"\bwhat'?s new\b|\bnew in\b|\bwe(?:'ve| have)? (?:just )?(?:shipped|launched|released|"
        r"added)\b|\bintroducing\b|\bnew features?\b|\bsee what'?s new\b|\btake a look\b|"
        r"\bnew templates\b",
        "product news",
    ),
    (
        r"\b(?:liked|commented on|reacted to|shared) your (?:photo|post|video|story|comment)\b|"
        r"\bappeared in \d+ searches\b|\bwho'?s (?:looking|viewing)\b|\bviewed your profile\b|"
        r"\bsee what your friends\b|\bstreak\b|\byou haven'?t (?:practi[cs]ed|logged in|visited)\b|"
        r"\bpeople you may know\b|\bnew followers?\b|\bcatch up on what you missed\b|"
        r"\bwants to connect\b|\baccept (?:the )?invitation\b|\btrending in\b|\bupvotes\b|"
        r"\b(?:open|try) (?:the )?[A-Z]?[a-z]+ (?:app|premium)\b",
        "a social or app engagement nudge",
    ),
    (
        r"\bnewsletters?\b|\bdigest\b|\bin this issue\b|\bthis week'?s\b|"
        r"\bread (?:it )?(?:online|in (?:your )?browser)\b|\btoday'?s (?:highlights|picks|topics|"
        r"stories)\b|\bstories (?:for you|picked)\b|\btop stories\b|\bmailing list\b|"
        r"\b(?:weekly|daily|monthly) (?:summary|recap|roundup)\b",
        "a newsletter or digest",
    ),
    (
        r"\bsurvey\b|\brate your\b|\bhow was your\b|\btell us about your experience\b|"
        r"\bshare your (?:feedback|experience|thoughts)\b|\breview your (?:stay|purchase|order)\b|"
        r"\bhow likely are you to recommend\b|\bon a scale of \d+\s?(?:-|to)\s?\d+\b",
        "a survey",
    ),
    (
        r"\bupgrade (?:to|now|your plan)\b|\bpremium\b|\btry [^\n]{0,20} free\b",
        "an upsell",
    ),
)
# An automated message about the user's own things ("your train", "your report was approved").
ABOUT_YOURS = re.compile(
    r"\byour (?!(?:friends|feed|network|inbox|streak|profile)\b)[a-z]+(?: [a-z]+)?\b", re.I
)
BULK_FOOTER = re.compile(
    r"\bunsubscribe\b|\bview (?:it |this email )?in (?:your )?browser\b|\bstop receiving\b|"
    r"\bmanage (?:your )?(?:email )?(?:preferences|subscriptions)\b|\bemail settings\b",
    re.I,
)

# ----- who sent it -----------------------------------------------------------------------------

ROLE_ADDRESS = re.compile(
    r"(?:^|[._+-])(?:no-?reply|do-?not-?reply|donotreply|notifications?|notify|alerts?|mailer|"
    r"mailer-daemon|bounces?|news|newsletters?|digest|marketing|promo(?:tions)?|offers|deals|"
    r"updates|receipts?|billing|invoices?|statements?|payroll|tracking|shipment|orders?|"
    r"calendar-notification|automated|robot|info|hello|team|events|feedback|support|service|"
    r"contact|admin|office|accounts?|security|jobs|careers|donate|donations|members|community|"
    r"reservations?|bookings?|online|appointments?|people|hr|facilities|request|shop|store|"
    r"invitations?|invites?|messages?|notices?|surveys?|research|rewards|welcome|care|help|"
    r"helpdesk|customer(?:care|service)?|sysadmin|webmaster|postmaster|it|ops|devops|ci|"
    r"calendar|drive|docs|talent|recruiting|press|legal|finance|accounting|sales|partners|"
    r"marketing|media|announce(?:ments)?|mail|email|reply|system)"
    r"(?:$|[._+-])",
    re.I,
)
MASS_RECIPIENT = re.compile(
    r"(?:^|[<\s,;])(?:all|everyone|team|staff|employees|company|parents|families|members|"
    r"announce(?:ments)?|list|offsite|dl-[a-z0-9-]+)@",
    re.I,
)
MASS_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|dear|good morning)?\s*(?:all|everyone|everybody|team|folks|parents|"
    r"families|colleagues|y'?all)\b",
    re.I,
)
PERSONAL_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\s+"
    r"(?:(?:mr|mrs|ms|dr)\.?\s+)?[A-Z][\w'-]+",
    re.I,
)
BOILERPLATE_QUESTION = re.compile(
    r"^(?:any |have |got )?(?:questions|need help|problems viewing this email|not you|"
    r"trouble viewing(?: this email)?)\?$",
    re.I,
)


def _found(markers: list[Marker], text: str) -> list[str]:
    return [label for pattern, label in markers if pattern.search(text)]


def direct_questions(body: str) -> list[str]:
    """Sentences of `body` that ask the reader something (boilerplate like "Questions?" aside)."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", body)
    return [
        s.strip()
        for s in sentences
        if s.strip().endswith("?") and not BOILERPLATE_QUESTION.match(s.strip())
    ]


def sender_kind(email: TriageEmail) -> SenderKind:
    """A person, or an organisation (a role or machine address, or bulk mail).

    A role address (pm@, marketing@) that greets the user by name, with no bulk-mail footer and
    no sales talk, is a person writing from a team address."""
    local = email_address(email.author).split("@", 1)[0]
    if BULK_FOOTER.search(email.body):
        return SenderKind.ORGANISATION
    if not ROLE_ADDRESS.search(local):
        return SenderKind.PERSON
    if personal_greeting(email) and not _found(COMMERCIAL, email.text):
        return SenderKind.PERSON
    return SenderKind.ORGANISATION


def personal_greeting(email: TriageEmail) -> bool:
    """The body opens by greeting one person by name ("Hi Lance,", "Dear Ms. Rivera,")."""
    first_line = next((line for line in email.body.splitlines() if line.strip()), "")
    return bool(PERSONAL_GREETING.match(first_line)) and not MASS_GREETING.match(first_line)


def _domain(address: str) -> str:
    """The last two labels of an address's domain: mail.shop.example → shop.example."""
    host = email_address(address).rpartition("@")[2]
    return ".".join(host.split(".")[-2:])


def internal(email: TriageEmail) -> bool:
    """Sent from the recipients' own organisation (same domain, not a public mail provider)."""
    sender = _domain(email.author)
    recipients = {_domain(a) for a in re.split(r"[,;]", email.to) if "@" in a}
    return bool(sender) and sender in recipients and sender not in PUBLIC_MAIL_DOMAINS


def mass_addressed(email: TriageEmail) -> bool:
    """Sent to a group (all@, team@, a list) or greeting a group ("Hi all", "Dear parents")."""
    first_line = next((line for line in email.body.splitlines() if line.strip()), "")
    return bool(MASS_RECIPIENT.search(email.to) or MASS_GREETING.match(first_line))


def _asks(email: TriageEmail) -> list[str]:
    """What the email asks of the reader: requests, questions, deadlines, problem reports."""
    asks = _found(RESPOND_MARKERS, email.text)
    questions = direct_questions(email.body) + (
        [email.subject] if email.subject.strip().endswith("?") else []
    )
    if questions:
        asks.append(f'a direct question ("{questions[0][:80]}")')
    return list(dict.fromkeys(asks))


def _joined(labels: list[str]) -> str:
    return ", ".join(dict.fromkeys(labels))


def classify_by_rules(email: TriageEmail) -> tuple[Classification, str]:
    """The general rules: a classification and the reason, in words."""
    text = email.text
    scam = _found(SCAM, text)
    if scam:
        return Classification.IGNORE, f"it looks like {_joined(scam)}"
    no_action = _found(NO_ACTION, text)
    if no_action:
        return Classification.NOTIFY, f"it {_joined(no_action)} but may be worth knowing"
    if sender_kind(email) is SenderKind.ORGANISATION:
        return _from_organisation(email)
    return _from_person(email)


def _from_person(email: TriageEmail) -> tuple[Classification, str]:
    text = email.text
    outreach = _found(OUTREACH, text)
    if outreach:
        return Classification.IGNORE, f"it is {_joined(outreach)}, unsolicited"
    asks, notify = _asks(email), _found(NOTIFY_MARKERS, text)
    if notify and mass_addressed(email):
        return Classification.NOTIFY, (
            f"it is {_joined(notify)} sent to a group: worth knowing, nobody waits for your reply"
        )
    if asks:
        return Classification.RESPOND, f"a person wrote it and it contains {_joined(asks)}"
    if notify:
        return Classification.NOTIFY, f"it is {_joined(notify)} with no question for the user"
    commercial = _found(COMMERCIAL, text)
    if commercial:
        return Classification.IGNORE, f"it looks like {_joined(commercial)}"
    if mass_addressed(email):
        return Classification.IGNORE, (
            "it is a mass mail to a group with no question, request or news that affects the user"
        )
    return Classification.NOTIFY, (
        "a person wrote it, but it has no question or request: worth a notification, not a reply"
    )


BULK_REASON = "it is bulk mail (a role sender, sent to many) and asks nothing"


def _from_organisation(email: TriageEmail) -> tuple[Classification, str]:
    text = email.text
    commercial = _found(COMMERCIAL, text) + _found(OUTREACH, text)
    transactional = _found(TRANSACTIONAL, text)
    if len(commercial) > len(transactional):
        return Classification.IGNORE, (
            f"it comes from an organisation's role address and looks like {_joined(commercial)}"
        )
    if EXPLICIT_REPLY.search(text):
        return Classification.RESPOND, "an organisation wrote it and explicitly asks for a reply"
    notify = _found(NOTIFY_MARKERS, text)
    if notify:
        return Classification.NOTIFY, (
            f"it is an automated or role message ({_joined(notify)}) worth knowing about, and "
            "nobody is waiting for a reply"
        )
    if commercial or BULK_FOOTER.search(text):
        return Classification.IGNORE, BULK_REASON
    if internal(email):
        return Classification.NOTIFY, (
            "it is an announcement from the user's own organisation: worth knowing, no reply needed"
        )
    if mass_addressed(email):
        return Classification.IGNORE, BULK_REASON
    if ABOUT_YOURS.search(text) and re.search(r"\d", text):
        return Classification.NOTIFY, (
            "it is an automated message about something of the user's own, with specifics: "
            "worth knowing, no reply needed"
        )
    return Classification.IGNORE, "it comes from an automated or role address and tells nothing new"

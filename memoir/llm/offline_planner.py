"""Offline planner skill: seed 002's PlannerNode as ordered, explainable rules.

Reads the rendered `PLANNER_SYSTEM_PROMPT` / `PLANNER_USER_PROMPT` (sections named in
`prompts.PLANNER_SECTIONS`). Rules, first match wins:

1. `Respond to the email …` → one email.send reply to the author (approval).
2. Short referential messages ("cancel it", "mark it done", "move it to 5pm", "do it") →
   the most recent plausible Latest Action (or the assistant's last proposal); otherwise
   intent_unclear, confidence 0.3, with a question.
3. Reminders: delete all (high risk), delete one (medium), complete, create (missing
   "what" / "when" → missing_fields and a question), list.
4. Email ("email Dan that …", "reply to …", "send an email to …") → email.send (approval).
5. Calendar: move → calendar.update, cancel → calendar.cancel, schedule/book →
   calendar.schedule (all approval), "am I free" → calendar.availability.
6. contacts.lookup, knowledge.search, notes.draft, handoff.draft.

Only connected capabilities where there is a choice: when the first matching rule's plan needs a
capability the "Connected Capabilities" section does not list and an alternative rule
(`_ALTERNATIVES`) serves the same request with connected ones, that plan wins. Otherwise the
plan stays, and the capability check gives its fixed "connect …" reply (seed 002).
7. Greetings, thanks, questions → intent_type conversation, no steps. Anything else →
   intent_unclear.

Feedback lines are applied first: a clarification that is a complete request on its own
replaces the request, otherwise it completes it ("remind me to call mom" + "at 5pm");
respond/approval feedback becomes the body of the email reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from langchain_core.messages import BaseMessage

from memoir.llm._text import (
    first_name,
    human_texts,
    normalize_subject,
    sentence,
    system_text,
    to_first_person,
)
from memoir.llm.offline_facts import extract_facts
from memoir.llm.offline_triage import RESPOND_MARKERS, direct_questions
from memoir.llm.prompts import (
    APPROVAL_FEEDBACK_RE,
    CLARIFICATION_FEEDBACK_RE,
    EMAIL_REQUEST_PREFIX,
    PLANNER_SECTIONS,
    RESPOND_FEEDBACK_RE,
    parse_latest_actions,
    split_sections,
)
from memoir.models import LatestAction, Plan, PlanStep
from memoir.models.plan import missing_capabilities
from memoir.timeparse import parse_when, strip_when

Risk = Literal["low", "medium", "high"]
I = re.I  # noqa: E741


@dataclass
class PlannerContext:
    """What the planner prompt says, parsed."""

    request: str
    now: datetime
    timezone: str
    name: str = ""
    capabilities: list[str] = field(default_factory=list)
    latest_actions: list[LatestAction] = field(default_factory=list)
    recent: list[tuple[str, str]] = field(default_factory=list)
    preferences: str = ""
    reply_to: str = ""
    clarifications: list[str] = field(default_factory=list)
    reply_feedback: list[str] = field(default_factory=list)


def parse_planner_prompt(messages: list[BaseMessage]) -> PlannerContext:
    """The planner prompt's sections, parsed into a `PlannerContext`."""
    text = system_text(messages) + "\n\n" + "\n\n".join(human_texts(messages))
    sec = split_sections(text, PLANNER_SECTIONS)
    now_block = sec.get("Now", "")
    tz_match = re.search(r"^Timezone:\s*(\S+)", now_block, re.M)
    timezone = tz_match.group(1) if tz_match else "UTC"
    iso = re.search(r"^ISO:\s*(\S+)", now_block, re.M)
    try:
        now = datetime.fromisoformat(iso.group(1)) if iso else datetime.now(UTC)
    except ValueError:
        now = datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=ZoneInfo(timezone))
    name_match = re.search(r"^Name:\s*(.+)$", sec.get("Profile", ""), re.M)
    recent = []
    for line in sec.get("Recent Messages", "").splitlines():
        m = re.match(r"^- (user|assistant|tool): (.*)$", line)
        if m:
            recent.append((m.group(1), m.group(2)))
    ctx = PlannerContext(
        request=sec.get("Request", "").strip(),
        now=now,
        timezone=timezone,
        name=name_match.group(1).strip() if name_match else "",
        capabilities=[
            line[2:].strip()
            for line in sec.get("Connected Capabilities", "").splitlines()
            if line.startswith("- ")
        ],
        latest_actions=parse_latest_actions(sec.get("Latest Actions", "")),
        recent=recent,
        preferences=sec.get("Preferences", ""),
        reply_to=sec.get("Replying To", ""),
    )
    for line in sec.get("Feedback", "").splitlines():
        item = line[2:].strip() if line.startswith("- ") else line.strip()
        if not item:
            continue
        if (m := RESPOND_FEEDBACK_RE.match(item)) or (m := APPROVAL_FEEDBACK_RE.match(item)):
            if m.group("feedback").strip():
                ctx.reply_feedback.append(m.group("feedback").strip())
        elif m := CLARIFICATION_FEEDBACK_RE.match(item):
            if m.group("answer").strip():
                ctx.clarifications.append(m.group("answer").strip())
        elif item.startswith(EMAIL_REQUEST_PREFIX):
            # Seed 000 puts "Respond to the email: <markdown>" in the messages; the request
            # already carries the email, so this line only matters when it does not.
            if not ctx.request.startswith(EMAIL_REQUEST_PREFIX):
                ctx.request = item
        else:
            ctx.clarifications.append(item)
    return ctx


# ------------------------------------------------------------------------------------------
# Plan builders
# ------------------------------------------------------------------------------------------


def _step(
    capability: str,
    args: dict[str, Any],
    description: str,
    step_id: str = "s1",
    depends_on: list[str] | None = None,
) -> PlanStep:
    return PlanStep(
        id=step_id,
        capability=capability,
        args=args,
        depends_on=depends_on or [],
        description=description,
    )


def _operation(
    intent: str,
    steps: list[PlanStep],
    reasoning: str,
    *,
    risk: Risk = "low",
    needs_approval: bool = False,
    confidence: float = 0.9,
) -> Plan:
    return Plan(
        intent=intent,
        intent_type="operation",
        confidence=confidence,
        risk=risk,
        needs_approval=needs_approval,
        steps=steps,
        reasoning=reasoning,
    )


def _missing(intent: str, fields: list[str], question: str, reasoning: str) -> Plan:
    return Plan(
        intent=intent,
        intent_type="operation",
        confidence=0.8,
        missing_fields=fields,
        question=question,
        reasoning=reasoning,
    )


def _unclear(reasoning: str, question: str, confidence: float = 0.3) -> Plan:
    return Plan(
        intent="intent_unclear",
        intent_type="operation",
        confidence=confidence,
        question=question,
        reasoning=reasoning,
    )


def _conversation(intent: str, reasoning: str, *, meta: bool = False) -> Plan:
    return Plan(
        intent=intent,
        intent_type="meta" if meta else "conversation",
        confidence=0.9,
        reasoning=reasoning,
    )


def _fmt(when: datetime, tz: str) -> str:
    return f"{when:%a %d %b %H:%M} ({tz})"


_QUERY_NOISE = re.compile(r"^(?:the|my|a|an|that|this|our)\s+|\s+(?:reminders?|please)$", I)
PRONOUNS = {"it", "that", "this", "them", "those", "these", "that one", "this one", "one"}


def _clean(text: str) -> str:
    text = text.strip().strip(" .,!?;:\"'")
    previous = None
    while previous != text:
        previous = text
        text = _QUERY_NOISE.sub("", text).strip().strip(" .,!?;:\"'")
    return text


# ------------------------------------------------------------------------------------------
# Email reply (seed 000 "Respond to the email")
# ------------------------------------------------------------------------------------------

_MEETING_RE = re.compile(
    r"\bmeet(?:ing)?\b|\bcall\b|\bsync\b|\bcatch up\b|\bavailable\b|\bare you free\b|"
    r"\bschedule\b|\binvite\b",
    I,
)


def _pref(preferences: str, pattern: str) -> str | None:
    found = re.findall(pattern, preferences, I)
    return found[-1] if found else None


def _signoff(ctx: PlannerContext) -> str:
    learned = _pref(ctx.preferences, r'signing off with "([^"]+)"')
    if learned:
        return learned.replace(", ", ",\n", 1) if "," in learned else learned
    return "Best regards," + (f"\n{ctx.name}" if ctx.name else "")


def _greeting(ctx: PlannerContext, who: str) -> str:
    learned = _pref(ctx.preferences, r'opening with "([^"]+)"')
    if learned:
        return learned.replace("<name>", who)
    return f"Hi {who},"


def _content_from_feedback(feedback: str) -> str:
    text = feedback.strip()
    text = re.sub(
        r"^(?:please\s+)?(?:tell|let)\s+(?:him|her|them|\w+)\s+(?:know\s+)?(?:that\s+)?",
        "",
        text,
        flags=I,
    )
    text = re.sub(
        r"^(?:please\s+)?(?:say|reply|respond|answer|write)\s+(?:back\s+)?(?:that\s+|with\s+)?",
        "",
        text,
        flags=I,
    )
    return sentence(text)


def _compose(ctx: PlannerContext, who: str, content: str) -> str:
    return f"{_greeting(ctx, who)}\n\n{content}\n\n{_signoff(ctx)}"


def _email_reply(ctx: PlannerContext, request: str) -> Plan:
    head = re.match(rf"^{re.escape(EMAIL_REQUEST_PREFIX)}(?:\s*\(id (?P<id>[^)]*)\))?:?", request)
    email_id = head.group("id") if head and head.group("id") else None

    def field_(name: str) -> str:
        m = re.search(rf"\*\*{name}\*\*:[ \t]*(.*?)[ \t]*(?=\*\*\w+\*\*:|$)", request, re.M)
        return m.group(1).strip() if m else ""

    author, subject = field_("From"), field_("Subject")
    to_line = re.search(r"^\*\*To\*\*:.*$", request, re.M)
    if to_line and to_line.group(0).count("**") > 2:  # flattened to one line
        to_line = re.search(r"\*\*To\*\*:[ \t]*\S+", request)
    body = request[to_line.end() :].strip() if to_line else ""
    body = re.sub(r"\n-{3,}\s*$", "", body).strip()
    who = first_name(author) if author else "there"
    reasons = [f"The request is an email from {author or 'an unknown sender'} to answer."]
    if ctx.reply_feedback:
        content = " ".join(_content_from_feedback(f) for f in ctx.reply_feedback)
        reasons.append(f"The user's feedback decides what the reply says: {ctx.reply_feedback}.")
    elif _MEETING_RE.search(f"{subject}\n{body}") and re.search(
        r"\?|\bwould like to\b|\bcan we\b|\blet'?s\b", body, I
    ):
        content = "Thanks for the invitation. I'll check my calendar and confirm a time shortly."
        reasons.append("It is a meeting request, so the reply acknowledges it and promises a time.")
    elif direct_questions(body) or any(p.search(body) for p, _ in RESPOND_MARKERS):
        content = "Thanks for your email. I'll look into this and get back to you shortly."
        reasons.append("It asks a question or a favour, so the reply acknowledges it politely.")
    else:
        content = "Thanks for your email, I've received it and will get back to you if needed."
        reasons.append("It asks nothing specific, so the reply is a short acknowledgement.")
    if re.search(r"\bdeadline\b", ctx.preferences, I):
        deadline = re.search(
            r"\b(?:deadline[^.?!\n]*|by (?:eod|end of (?:day|week)|monday|tuesday|wednesday|"
            r"thursday|friday|tomorrow)\b[^.?!\n]*)",
            body,
            I,
        )
        if deadline:
            content += f" I've noted the deadline ({deadline.group(0).strip()})."
            reasons.append("The response preferences ask to acknowledge deadlines.")
    reply_subject = subject if re.match(r"^\s*re\s*:", subject, I) else f"Re: {subject}"
    args: dict[str, Any] = {
        "to": author,
        "subject": reply_subject,
        "body": _compose(ctx, who, content),
    }
    if email_id:
        args["in_reply_to"] = email_id
    reasons.append("Sending email needs the user's approval.")
    step = _step("email.send", args, f'Reply to {author} about "{normalize_subject(subject)}"')
    return _operation(
        f"reply to {who}'s email",
        [step],
        " ".join(reasons),
        risk="medium",
        needs_approval=True,
    )


# ------------------------------------------------------------------------------------------
# Referential follow-ups (seed 002 Latest Actions)
# ------------------------------------------------------------------------------------------

_REF_WORDS = re.compile(
    r"\b(?:it|that|this|them|those|that one|this one|the last one|again|same)\b", I
)
_CONFIRM_ONLY = re.compile(
    r"^(?:yes|yeah|yep|sure|ok(?:ay)?|please|go ahead|go for it|please do|do it|do that|"
    r"that one|this one|yes please)(?:[\s,.!]+(?:please|do it|go ahead|thanks))*[\s.!]*$",
    I,
)
_REMOVE = re.compile(r"\b(?:cancel|delete|remove|undo|drop|scrap|get rid of|forget)\b", I)
_COMPLETE = re.compile(r"\b(?:done|complete|completed|finish|finished|mark|tick|check off)\b", I)
_MOVE = re.compile(r"\b(?:move|push|reschedule|postpone|shift|change|delay|bring)\b", I)
_PROPOSAL = re.compile(
    r"(?:want me to|should i|shall i|would you like me to|do you want me to)\s+(?P<p>[^?]+)\?", I
)


def _action_subject(action: LatestAction) -> str:
    quoted = re.search(r"[\"“']([^\"”']+)[\"”']", action.summary)
    if quoted:
        return quoted.group(1).strip()
    text = re.sub(
        r"^(?:created|set|scheduled|sent|added|booked|updated|moved)?\s*(?:a\s+)?"
        r"(?:reminder|event|meeting|email)?\s*(?:to|:|for|about)?\s*",
        "",
        action.summary,
        flags=I,
    )
    return _clean(strip_when(text)) or action.summary


def _tool_name(action: LatestAction) -> str:
    """'reminders' + 'create' → 'reminders.create' (tools record the family and the action)."""
    if "." in action.capability:
        return action.capability
    return f"{action.capability}.{action.action}"


def _describe(action: LatestAction) -> str:
    return f"{action.capability} “{action.summary}” ({action.created_at:%H:%M})"


def _referential(text: str, ctx: PlannerContext) -> Plan | None:
    words = re.findall(r"[\w']+", text)
    if len(words) > 8 or not (_REF_WORDS.search(text) or _CONFIRM_ONLY.match(text)):
        return None
    wanted: tuple[str, ...]
    if _REMOVE.search(text):
        verb, wanted = "remove", ("reminders.create", "calendar.schedule", "calendar.update")
    elif _MOVE.search(text):
        verb, wanted = "move", ("calendar.schedule", "calendar.update", "reminders.create")
    elif _COMPLETE.search(text):
        verb, wanted = "complete", ("reminders.create",)
    elif _CONFIRM_ONLY.match(text) or re.search(r"\b(?:do|send|again|same)\b", text, I):
        verb, wanted = "confirm", ()
    else:
        return None
    ref = f'"{text}" is referential ({verb})'
    if re.search(rf"\b{_NOUN}\b", text, I):  # "move that meeting": only calendar actions fit
        wanted = tuple(w for w in wanted if w.startswith("calendar."))
    elif re.search(r"\breminders?\b", text, I):
        wanted = tuple(w for w in wanted if w.startswith("reminders."))

    if verb == "confirm":
        for role, content in reversed(ctx.recent):
            if role != "assistant":
                continue
            m = _PROPOSAL.search(content)
            if m:
                proposal = to_first_person(m.group("p").strip())
                plan = _plan_text(proposal, ctx, allow_referential=False)
                if plan.steps:
                    plan.reasoning = (
                        f"{ref}: it accepts the assistant's last proposal “{m.group('p')}”. "
                        + plan.reasoning
                    )
                    plan.confidence = min(plan.confidence, 0.8)
                    return plan
            break
        if ctx.latest_actions:
            latest = ctx.latest_actions[0]
            return _unclear(
                f"{ref}, but repeating the most recent action {_describe(latest)} is not "
                "obviously meant, so ask.",
                f"Do you mean “{latest.summary}”? What would you like me to do with it?",
                confidence=0.5,
            )
        return _unclear(
            f"{ref} and there is no latest action or proposal it could refer to.",
            "Sorry, what would you like me to do?",
        )

    target = next((a for a in ctx.latest_actions if _tool_name(a) in wanted), None)
    if target is None:
        known = ", ".join(_describe(a) for a in ctx.latest_actions) or "none"
        return _unclear(
            f"{ref}, but no latest action can be the target (latest actions: {known}).",
            "Which one do you mean?",
        )
    subject = _action_subject(target)
    ids = dict(target.external_ids)
    why = (
        f"{ref}; the most recent plausible latest action is {_describe(target)}, the strongest "
        "candidate for “it”."
    )
    if verb == "complete":
        step = _step("reminders.complete", {"query": subject, **ids}, f"Mark “{subject}” done")
        return _operation(f"complete reminder {subject}", [step], why)
    if verb == "remove":
        if _tool_name(target) == "reminders.create":
            step = _step("reminders.delete", {"query": subject, **ids}, f"Delete “{subject}”")
            return _operation(
                f"delete reminder {subject}",
                [step],
                why + " Deleting needs approval.",
                risk="medium",
                needs_approval=True,
            )
        step = _step("calendar.cancel", {"query": subject, **ids}, f"Cancel “{subject}”")
        return _operation(
            f"cancel event {subject}",
            [step],
            why + " Calendar changes need approval.",
            risk="medium",
            needs_approval=True,
        )
    when = parse_when(text, ctx.now, ctx.timezone)
    if when is None:
        return _missing(
            f"move {subject}",
            ["when"],
            f"When should I move “{subject}” to?",
            why + " No new time was given.",
        )
    if _tool_name(target) == "reminders.create":
        steps = [
            _step("reminders.delete", {"query": subject, **ids}, f"Delete “{subject}”"),
            _step(
                "reminders.create",
                {"text": subject, "due_at": when.isoformat()},
                f"Remind you to {subject} at {_fmt(when, ctx.timezone)}",
                step_id="s2",
                depends_on=["s1"],
            ),
        ]
        return _operation(
            f"move reminder {subject}",
            steps,
            why + " There is no reminders.update, so the reminder is replaced (delete, then "
            "create); deleting needs approval.",
            risk="medium",
            needs_approval=True,
        )
    step = _step(
        "calendar.update",
        {"query": subject, "start": when.isoformat(), **ids},
        f"Move “{subject}” to {_fmt(when, ctx.timezone)}",
    )
    return _operation(
        f"move event {subject}",
        [step],
        why + " Calendar changes need approval.",
        risk="medium",
        needs_approval=True,
    )


# ------------------------------------------------------------------------------------------
# Reminders
# ------------------------------------------------------------------------------------------

_DELETE_ALL = re.compile(
    r"\b(?:delete|remove|clear|cancel|erase|wipe|drop)\s+(?:out\s+)?(?:all|every|each)\b[^.?!]*"
    r"\breminders?\b|\b(?:delete|remove|clear|wipe|erase)\s+(?:out\s+)?my\s+reminders\b",
    I,
)
_DELETE_ONE = re.compile(
    r"\b(?:delete|remove|cancel|drop|get rid of|scrap)\s+(?:the\s+|my\s+|that\s+)?"
    r"(?:reminder\s+(?:to|about|for|of)?\s*(?P<q2>[^.?!]+)|(?P<q1>[^.?!]+?)\s+reminder\b)",
    I,
)
_COMPLETE_PATTERNS = [
    re.compile(
        r"^(?:ok(?:ay)?,?\s+)?(?:i'?m\s+|i\s+am\s+)?(?:done|finished)\s+with\s+(?P<q>.+?)\s*[.!]*$",
        I,
    ),
    re.compile(
        r"\bmark\s+(?P<q>.+?)\s+(?:reminder\s+)?(?:as\s+)?(?:done|complete|completed|finished)\b",
        I,
    ),
    re.compile(r"^(?:please\s+)?(?:complete|finish|check off|tick off)\s+(?P<q>.+?)\s*[.!]*$", I),
]
_REMIND = re.compile(
    r"\bremind\s+me\b(?P<rest>.*)$|\b(?:set|add|create|make)\s+(?:me\s+)?(?:a\s+)?reminder\b"
    r"(?P<rest2>.*)$|^reminder\s*:\s*(?P<rest3>.*)$",
    I | re.S,
)
_LIST = re.compile(
    r"\b(?:what(?:'s|\s+are|\s+is)?|show|list|see|check|read|tell me|get|give me|any|which)\b"
    r"[^.?!]*\breminders?\b|^(?:my\s+)?reminders\s*\??$",
    I,
)


def _reminder_create(rest: str, ctx: PlannerContext) -> Plan:
    when = parse_when(rest, ctx.now, ctx.timezone)
    what = strip_when(rest)
    what = re.sub(r"^(?:please\s+)?(?:to|about|that|of|for|me to)\s+", "", what.strip(), flags=I)
    what = what.strip().rstrip(" .!?,;")
    if what.lower() in PRONOUNS:
        what = ""
    missing = [f for f, ok in (("what", bool(what)), ("when", when is not None)) if not ok]
    if missing == ["what", "when"]:
        return _missing(
            "create reminder",
            missing,
            "What should I remind you about, and when?",
            "A reminder needs a text and a time; the request gives neither.",
        )
    if missing == ["what"]:
        assert when is not None
        return _missing(
            "create reminder",
            missing,
            f"What should I remind you about at {_fmt(when, ctx.timezone)}?",
            f"The time is clear ({when.isoformat()}) but not what to be reminded of.",
        )
    if missing == ["when"]:
        return _missing(
            "create reminder",
            missing,
            f"When should I remind you to {what}?",
            f"The reminder text is clear (“{what}”) but no time was given.",
        )
    assert when is not None
    if when <= ctx.now:
        return _missing(
            "create reminder",
            ["when"],
            f"That time ({_fmt(when, ctx.timezone)}) has already passed — when should I remind "
            f"you to {what}?",
            f"The time {when.isoformat()} is in the past.",
        )
    step = _step(
        "reminders.create",
        {"text": what, "due_at": when.isoformat()},
        f"Remind you to {what} at {_fmt(when, ctx.timezone)}",
    )
    return _operation(
        f"create reminder: {what}",
        [step],
        f"“remind me …” is a reminder: text “{what}”, due {when.isoformat()} computed in "
        f"{ctx.timezone} from now ({ctx.now.isoformat()}).",
    )


def _reminders(text: str, ctx: PlannerContext) -> Plan | None:
    if _DELETE_ALL.search(text):
        step = _step("reminders.delete", {"all": True}, "Delete all your reminders")
        return _operation(
            "delete all reminders",
            [step],
            "The user asks to delete every reminder: one bulk delete, high risk, needs approval.",
            risk="high",
            needs_approval=True,
        )
    if m := _DELETE_ONE.search(text):
        query = _clean(m.group("q1") or m.group("q2") or "")
        if query.lower() in PRONOUNS or not query:
            return None
        step = _step("reminders.delete", {"query": query}, f"Delete the reminder “{query}”")
        return _operation(
            f"delete reminder {query}",
            [step],
            f"The user asks to delete the reminder matching “{query}”: needs approval.",
            risk="medium",
            needs_approval=True,
        )
    for pattern in _COMPLETE_PATTERNS:
        if m := pattern.search(text):
            query = _clean(m.group("q"))
            if not query or query.lower() in PRONOUNS:
                return None
            step = _step("reminders.complete", {"query": query}, f"Mark “{query}” as done")
            return _operation(
                f"complete reminder {query}",
                [step],
                f"“{text}” says a reminder is done: complete the one matching “{query}”.",
            )
    if m := _REMIND.search(text):
        rest = m.group("rest") or m.group("rest2") or m.group("rest3") or ""
        return _reminder_create(rest, ctx)
    if _LIST.search(text):
        return _operation(
            "list reminders",
            [_step("reminders.list", {}, "List your reminders")],
            "The user asks which reminders they have.",
        )
    return None


# ------------------------------------------------------------------------------------------
# Email
# ------------------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?(?:(?:send|write|shoot|draft)\s+(?:an?\s+)?"
    r"(?:e-?mail|message|note|mail)\s+to|e-?mail|mail|write\s+to|reply\s+to|respond\s+to|"
    r"send)\s+(?P<to>[\w.+-]+@[\w.-]+|[A-Za-z][\w'-]*)(?P<rest>.*)$",
    I | re.S,
)
_NOT_NAMES = {"the", "a", "an", "my", "our", "this", "that", "it", "back", "me", "all", "every"}
_PRONOUN_TO = {"him", "her", "them"}
_KEYWORDS = {"about", "regarding", "saying", "that", "to", "and", "with", "asking", "re"}


def _email(text: str, ctx: PlannerContext) -> Plan | None:
    m = _EMAIL.match(text.strip())
    if not m:
        return None
    to = re.sub(r"'s$", "", m.group("to"))
    rest = m.group("rest")
    if to.lower() in _NOT_NAMES:
        return None
    second = re.match(r"^\s+([A-Z][a-z'-]+)\b", rest)
    if second and second.group(1).lower() not in _KEYWORDS:
        to = f"{to} {second.group(1)}"
        rest = rest[second.end() :]
    rest = re.sub(r"^\s*(?:'s\s+)?(?:an?\s+)?(?:e-?mail|message|note|mail)\b", "", rest, flags=I)
    rest = rest.strip()
    subject: str | None = None
    body: str | None = None
    about = re.match(
        r"^(?:about|regarding|re:?|on)\s+(?P<subj>.+?)(?:\s*(?::|,|—|\s-\s|\bsaying\b|\bthat\b|"
        r"\bto say\b|\band say\b|\band tell (?:him|her|them)\b)\s*(?P<body>.*))?$",
        rest,
        I | re.S,
    )
    if about:
        subject = about.group("subj").strip()
        body = (about.group("body") or "").strip() or None
    else:
        said = re.match(
            r"^(?::|,|saying|that|to say|and say|and tell (?:him|her|them)|telling (?:him|her|"
            r"them)|with)\s*(?:that\s+)?(?P<body>.+)$",
            rest,
            I | re.S,
        )
        asking = re.match(r"^(?:and\s+)?ask(?:ing)?\s+(?:him|her|them\s+)?(?P<q>.+)$", rest, I)
        if said:
            body = said.group("body").strip()
        elif asking:
            body = f"Could you let me know {asking.group('q').strip().rstrip('?')}?"
    if to.lower() in _PRONOUN_TO:
        return _missing(
            "send email",
            ["to"],
            "Who should I send the email to?",
            f"“{to}” does not say who the email is for.",
        )
    feedback_used = ""
    if ctx.reply_feedback:
        body = " ".join(_content_from_feedback(f) for f in ctx.reply_feedback)
        feedback_used = f" The user's feedback sets the body: {ctx.reply_feedback}."
    if not body:
        return _missing(
            f"email {to}",
            ["body"],
            f"What should the email to {to} say?",
            f"The recipient is {to} but the email's content is missing.",
        )
    if not subject:
        words = re.sub(r"[^\w\s'-]", "", body).split()
        subject = " ".join(words[:6]) or "Hello"
    subject = sentence(subject).rstrip(".")
    who = to.split()[0] if "@" not in to else first_name(to)
    args = {"to": to, "subject": subject, "body": _compose(ctx, who, sentence(body))}
    step = _step("email.send", args, f"Email {to}: “{subject}”")
    return _operation(
        f"email {to}",
        [step],
        f"The user asks to email {to}; subject “{subject}”. Sending email needs approval."
        + feedback_used,
        risk="medium",
        needs_approval=True,
    )


# ------------------------------------------------------------------------------------------
# Calendar
# ------------------------------------------------------------------------------------------

_NOUN = (
    r"(?:meeting|call|sync|1:1|one[- ]on[- ]one|catch[- ]?up|appointment|lunch|coffee|interview|"
    r"stand-?up|session|event|demo)s?"
)
_CAL_MOVE = re.compile(
    rf"\b(?:move|reschedule|push|postpone|shift|bring forward|change)\b(?P<q>[^.?!]*?\b{_NOUN}\b"
    rf"[^.?!]*)",
    I,
)
_CAL_CANCEL = re.compile(
    rf"\b(?:cancel|delete|remove|call off|drop|scrap)\b(?P<q>[^.?!]*?\b{_NOUN}\b[^.?!]*)", I
)
_CAL_SCHEDULE = re.compile(
    rf"\b(?:schedule|book|set\s+up|arrange|organi[sz]e|put|add|plan)\b[^.?!]*?\b{_NOUN}\b", I
)
_AVAIL = re.compile(
    r"\b(?:am i (?:free|available|busy)|my availability|when am i free|free slots?|"
    r"what'?s on my calendar|what do i have (?:on|scheduled)|my schedule|my calendar)\b",
    I,
)
_DURATION = re.compile(
    r"\bfor\s+(?P<n>\d+|an?|one|two|half an)\s*(?P<u>minutes?|mins?|hours?|hrs?|h)\b", I
)


def _duration(text: str, ctx: PlannerContext) -> tuple[int, str]:
    m = _DURATION.search(text)
    if m:
        n_word = m.group("n").lower()
        n = {"a": 1.0, "an": 1.0, "one": 1.0, "two": 2.0, "half an": 0.5}.get(n_word)
        amount = n if n is not None else float(n_word)
        minutes = int(amount * 60) if m.group("u").lower().startswith("h") else int(amount)
        return minutes, "asked for in the request"
    learned = _pref(ctx.preferences, r"\b(\d+)[- ]minute meetings\b")
    if learned:
        return int(learned), "from the calendar preferences"
    return 30, "the default"


def _query_of(fragment: str) -> str:
    head = re.split(r"\s+to\s+|\s+(?=(?:on|at|by|until|from|for)\b)", fragment.strip(), maxsplit=1)
    return _clean(strip_when(head[0])) or _clean(fragment)


def _calendar(text: str, ctx: PlannerContext) -> Plan | None:
    if m := _CAL_MOVE.search(text):
        query = _query_of(m.group("q"))
        if query.lower() in PRONOUNS:
            return None
        after_to = re.split(r"\s+to\s+", m.group("q"), maxsplit=1)
        when = parse_when(after_to[-1], ctx.now, ctx.timezone)
        shift = re.search(r"\bby\s+(\d+|an?|half an)\s*(minutes?|mins?|hours?|hrs?)\b", text, I)
        args: dict[str, Any] = {"query": query}
        if when is not None:
            args["start"] = when.isoformat()
        elif shift:
            word = shift.group(1).lower()
            amount = {"a": 1.0, "an": 1.0, "half an": 0.5}.get(word) or float(word)
            factor = 60 if shift.group(2).lower().startswith("h") else 1
            args["shift_minutes"] = int(amount * factor)
        else:
            return _missing(
                f"move {query}",
                ["when"],
                f"When should I move the {query} to?",
                f"The user wants to move “{query}” but gives no new time.",
            )
        step = _step("calendar.update", args, f"Move the {query}")
        return _operation(
            f"move {query}",
            [step],
            f"The user asks to move “{query}”: calendar.update, which needs approval.",
            risk="medium",
            needs_approval=True,
        )
    if m := _CAL_CANCEL.search(text):
        query = _query_of(m.group("q"))
        if query.lower() in PRONOUNS:
            return None
        args = {"query": query}
        when = parse_when(m.group("q"), ctx.now, ctx.timezone)
        if when is not None:
            args["start"] = when.isoformat()
        step = _step("calendar.cancel", args, f"Cancel the {query}")
        return _operation(
            f"cancel {query}",
            [step],
            f"The user asks to cancel “{query}”: calendar.cancel, which needs approval.",
            risk="medium",
            needs_approval=True,
        )
    if _CAL_SCHEDULE.search(text):
        cleaned = _DURATION.sub("", text)
        minutes, duration_source = _duration(text, ctx)
        noun_match = re.search(_NOUN, cleaned, I)
        noun = noun_match.group(0).lower() if noun_match else "meeting"
        who = re.search(
            r"\bwith\s+(?P<who>[A-Z][\w'-]*(?:(?:\s*,\s*|\s+and\s+|\s+&\s+)[A-Z][\w'-]*)*)",
            cleaned,
        )
        attendees = re.split(r"\s*,\s*|\s+and\s+|\s+&\s+", who.group("who")) if who else []
        about = re.search(
            r"\b(?:about|to discuss|regarding|re:?|on the topic of)\s+(.+)$", cleaned, I
        )
        title = _clean(strip_when(about.group(1))) if about else ""
        if not title:
            title = f"{noun.capitalize()} with {' and '.join(attendees)}" if attendees else noun
        title = sentence(title).rstrip(".")
        when = parse_when(cleaned, ctx.now, ctx.timezone)
        if when is None:
            return _missing(
                f"schedule {title}",
                ["when"],
                f"When should I schedule “{title}”?",
                f"The user wants to schedule “{title}” but gives no time.",
            )
        args = {
            "title": title,
            "start": when.isoformat(),
            "duration_minutes": minutes,
            "attendees": attendees,
        }
        step = _step("calendar.schedule", args, f"Schedule “{title}” at {_fmt(when, ctx.timezone)}")
        return _operation(
            f"schedule {title}",
            [step],
            f"The user asks to schedule “{title}” at {when.isoformat()} for {minutes} minutes "
            f"({duration_source}); calendar changes need approval.",
            risk="medium",
            needs_approval=True,
        )
    if _AVAIL.search(text):
        when = parse_when(text, ctx.now, ctx.timezone)
        zone = ZoneInfo(ctx.timezone)
        local_now = ctx.now.astimezone(zone)
        day = when.date() if when else local_now.date()
        start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
        start = max(start, local_now.replace(second=0, microsecond=0))
        end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone)
        step = _step(
            "calendar.availability",
            {"start": start.isoformat(), "end": end.isoformat()},
            f"Check your calendar on {day:%a %d %b}",
        )
        return _operation(
            "check availability",
            [step],
            f"The user asks about their calendar on {day.isoformat()}.",
        )
    return None


# ------------------------------------------------------------------------------------------
# Other tools and conversation
# ------------------------------------------------------------------------------------------

_CONTACT = re.compile(
    r"\b(?:what(?:'s|\s+is)|find|look\s*up|get|give me)\s+(?P<name>[\w' ]+?)'s\s+"
    r"(?:e-?mail(?:\s+address)?|address|phone(?:\s+number)?|number|contact(?:\s+details)?)",
    I,
)
_KNOWLEDGE = re.compile(
    r"\b(?:search|look\s+(?:in|through)|check|find in)\s+(?:the\s+|my\s+|our\s+)?(?:docs?|"
    r"documents?|knowledge\s*base|kb|wiki|handbook|files)\b(?:\s+(?:for|about)\s+(?P<q>.+))?|"
    r"\b(?:according to|in)\s+(?:the\s+|our\s+)(?:docs?|documents?|handbook|wiki|policy|manual|"
    r"knowledge\s*base)\b|\bwhat does (?:the|our)\s+(?:docs?|handbook|policy|wiki|manual|"
    r"contract)\b",
    I,
)
_NOTES = re.compile(
    r"\b(?:draft|write|make|take|prepare)\s+(?:up\s+)?(?:a\s+|some\s+|the\s+)?(?:meeting\s+)?"
    r"notes?\b|\bsummari[sz]e\s+(?:this|our|the)\s+(?:conversation|chat|thread|discussion)\b",
    I,
)
_HANDOFF = re.compile(
    r"\bhand\s*-?\s*off\b|\bhand\s+(?:this|it)\s+(?:over|off)\b|\bescalate\b|"
    r"\bpass (?:this|it) (?:on|over) to\b",
    I,
)


def _topic(text: str, default: str) -> str:
    m = re.search(r"\b(?:about|on|regarding|for)\s+(.+)$", text, I)
    return _clean(m.group(1)) if m else default


def _contacts(text: str, ctx: PlannerContext) -> Plan | None:
    if m := _CONTACT.search(text):
        name = m.group("name").strip()
        step = _step("contacts.lookup", {"name": name}, f"Look up {name}")
        return _operation(f"look up {name}", [step], f"The user asks for {name}'s contact details.")
    return None


def _knowledge(text: str, ctx: PlannerContext) -> Plan | None:
    if m := _KNOWLEDGE.search(text):
        query = (m.group("q") or text).strip().rstrip("?")
        step = _step("knowledge.search", {"query": query}, "Search your documents")
        return _operation(
            "search documents", [step], "The user asks what their documents say: search them."
        )
    return None


def _drafts(text: str, ctx: PlannerContext) -> Plan | None:
    if _HANDOFF.search(text):
        topic = _topic(text, "this conversation")
        step = _step("handoff.draft", {"topic": topic}, "Draft a handoff for review")
        return _operation(
            "draft handoff", [step], "The user asks for a handoff: draft one from the session."
        )
    if _NOTES.search(text):
        topic = _topic(text, "this conversation")
        step = _step("notes.draft", {"topic": topic}, "Draft notes for review")
        return _operation(
            "draft notes", [step], "The user asks for notes: draft them from the session."
        )
    return None


_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening))\b", I
)
_THANKS = re.compile(r"\b(?:thanks|thank you|thx|ty|cheers|appreciate it|much appreciated)\b", I)
_BYE = re.compile(r"^(?:bye|goodbye|see you|see ya|good night|later|ciao)\b", I)
_ACK = re.compile(
    r"^(?:ok(?:ay)?|cool|great|nice|awesome|got it|sounds good|perfect|alright|no|nope|"
    r"no thanks)[.!]*$",
    I,
)
_META = re.compile(r"\bwhat can you do\b|^help\W*$|\bwho are you\b|\bwhat are you\b", I)
_QUESTION = re.compile(
    r"\?\s*$|^(?:what|who|when|where|why|how|is|are|do|does|did|can|could|should|will|would)\b", I
)


def _conversation_rules(text: str) -> Plan | None:
    short = len(text.split()) <= 8
    if _META.search(text):
        return _conversation(
            "ask what the assistant can do", "A question about the assistant.", meta=True
        )
    if short and _GREETING.search(text):
        return _conversation("greeting", "A greeting; no tool is needed.")
    if short and _THANKS.search(text):
        return _conversation("thanks", "The user says thanks; no tool is needed.")
    if short and _BYE.search(text):
        return _conversation("goodbye", "The user says goodbye; no tool is needed.")
    if _ACK.match(text):
        return _conversation("acknowledgement", "An acknowledgement; no tool is needed.")
    if _QUESTION.search(text):
        plan = _conversation("question", "A question that none of the tools answers.")
        plan.confidence = 0.7
        return plan
    if extract_facts(text):
        plan = _conversation(
            "share a fact", "The user tells something about themselves; memory keeps it."
        )
        plan.confidence = 0.8
        return plan
    return None


Rule = Callable[[str, PlannerContext], Plan | None]
_RULES: tuple[Rule, ...] = (_reminders, _email, _calendar, _contacts, _knowledge, _drafts)
# Where the planner has a choice: a later rule that serves the same request with another
# capability ("find Dan's address in our docs": contacts.lookup or knowledge.search).
_ALTERNATIVES: dict[Rule, tuple[Rule, ...]] = {_contacts: (_knowledge,)}


def _unconnected(plan: Plan, ctx: PlannerContext) -> list[str]:
    """The families the plan needs that the prompt does not list as connected (none when the
    prompt lists no capabilities at all: then there is nothing to choose between)."""
    return missing_capabilities(plan.steps, ctx.capabilities) if ctx.capabilities else []


def _prefer_connected(plan: Plan, rule: Rule, text: str, ctx: PlannerContext) -> Plan:
    """The rule's plan, unless it needs an unconnected capability and an alternative rule serves
    the same request with connected ones. With no alternative the plan stays as it is, so the
    capability check answers with its fixed "connect …" reply (seed 002)."""
    missing = _unconnected(plan, ctx)
    if not missing:
        return plan
    for alternative in _ALTERNATIVES.get(rule, ()):
        other = alternative(text, ctx)
        if other is not None and other.steps and not _unconnected(other, ctx):
            used = ", ".join(sorted({s.capability for s in other.steps}))
            other.reasoning = (
                f"{plan.steps[0].capability} would need {', '.join(missing)}, which is not "
                f"connected; {used} is connected and serves the request. " + other.reasoning
            )
            return other
    return plan


def _plan_text(text: str, ctx: PlannerContext, *, allow_referential: bool = True) -> Plan:
    """Plan one request text with the ordered rules."""
    text = text.strip()
    if not text:
        return _unclear("The request is empty.", "What would you like me to do?")
    if text.startswith(EMAIL_REQUEST_PREFIX):
        return _email_reply(ctx, text)
    if allow_referential and (plan := _referential(text, ctx)):
        return plan
    for rule in _RULES:
        plan = rule(text, ctx)
        if plan is not None:
            return _prefer_connected(plan, rule, text, ctx)
    conversation = _conversation_rules(text)
    if conversation is not None:
        return conversation
    return _unclear(
        f"“{text}” matches no tool the planner knows and is not a question or a greeting.",
        "Sorry, I didn't get that — what would you like me to do?",
    )


def _complete(plan: Plan) -> bool:
    return bool(plan.steps) and not plan.missing_fields and plan.intent != "intent_unclear"


def plan_offline(messages: list[BaseMessage]) -> Plan:
    """The plan for the request in `messages`, with the feedback applied."""
    ctx = parse_planner_prompt(messages)
    text = ctx.request
    notes: list[str] = []
    for answer in ctx.clarifications:
        alone = _plan_text(answer, ctx)
        current = _plan_text(text, ctx)
        if _complete(alone) or (current.intent == "intent_unclear" and alone.steps):
            notes.append(
                f"The clarification “{answer}” is a complete request: it replaces “{text}”."
            )
            text = answer
        else:
            merged = f"{text} {answer}"
            notes.append(f"The clarification “{answer}” completes the request: “{merged}”.")
            text = merged
    plan = _plan_text(text, ctx)
    missing_tools = _unconnected(plan, ctx)
    if missing_tools:
        notes.append(
            f"Not connected for this user: {', '.join(missing_tools)} (the capability check "
            "will say so)."
        )
    if notes:
        plan.reasoning = (plan.reasoning + " " + " ".join(notes)).strip()
    return plan

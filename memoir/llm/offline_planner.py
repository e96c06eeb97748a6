"""Offline planner: seed 002's PlannerNode from declarative tables, on a typed `PlannerRequest`.

An email gets a reply drafted from `memoir/data/planner_drafts.yaml` (kind of email, sign-off
and tone, feedback revising the draft), or for a meeting request with a time and the calendar
connected, an availability check and a proposed event. A short follow-up ("cancel it") applies
to the latest action. Any other request gets the intent of `planner_intents.yaml` whose rule
fires first, else of its nearest example (MiniLM), named in the reasoning; the intent's template
or builder fills the args, calendar steps following the calendar preferences.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from memoir.emails import email_address, first_name, normalize_subject
from memoir.embeddings import Embedder
from memoir.llm.offline_preferences import (
    WEEKDAYS,
    clauses,
    read_calendar_rules,
    read_response_style,
)
from memoir.llm.tables import Examples, table
from memoir.models import EmailMessage, LatestAction, Plan, PlanStep
from memoir.models.plan import missing_capabilities
from memoir.text import sentence, to_first_person
from memoir.timeparse import duration_minutes, find_time_phrases, parse_when, strip_when

if TYPE_CHECKING:
    from memoir.planner import PlannerRequest

I = re.I  # noqa: E741
PRONOUNS = {"", "it", "that", "this", "them", "those", "these", "that one", "this one", "one"}
DEFAULT_MINUTES = 30
APPROVAL = ("email.", "calendar.schedule", "calendar.update", "calendar.cancel", "reminders.delete")


_INTENTS: dict[str, Any] = table("planner_intents")
_DRAFTS: dict[str, Any] = table("planner_drafts")
_EXAMPLE_INTENTS = [n for n, s in _INTENTS["intents"].items() for _ in s["examples"]]
_EXAMPLES = Examples(e for s in _INTENTS["intents"].values() for e in s["examples"])


class Match(NamedTuple):
    """The intent of a request text, its slots, and the rule or example that fired."""

    intent: str
    groups: dict[str, str]
    why: str


def _step(cap: str, args: dict[str, Any], text: str, sid: str = "s1", deps: Any = ()) -> PlanStep:
    return PlanStep(id=sid, capability=cap, args=args, depends_on=list(deps), description=text)


def _operation(intent: str, steps: list[PlanStep], why: str, risk: str = "low") -> Plan:
    """An operation; side-effecting tools need approval at medium risk or more."""
    ok = any(s.capability.startswith(APPROVAL) for s in steps)
    risk = "medium" if ok and risk == "low" else risk
    fields = {"intent": intent, "risk": risk, "needs_approval": ok, "steps": steps}
    return Plan.model_validate({**fields, "confidence": 0.9, "reasoning": why})


def _missing(intent: str, fields: list[str], question: str, why: str) -> Plan:
    return Plan(
        intent=intent, confidence=0.8, missing_fields=fields, question=question, reasoning=why
    )


def _unclear(why: str, question: str, confidence: float = 0.3) -> Plan:
    return Plan(intent="intent_unclear", confidence=confidence, question=question, reasoning=why)


def _fmt(when: datetime, tz: Any = None) -> str:
    return f"{when:%a %d %b %H:%M} ({tz or when.tzinfo})"


def _clean(text: str) -> str:
    """`text` without surrounding punctuation, leading articles and a trailing 'reminder'."""
    previous = None
    while previous != text:
        previous, text = text, text.strip().strip(" .,!?;:\"'")
        text = re.sub(
            r"^(?:the|my|a|an|that|this|our)\s+|\s+(?:reminders?|please)$", "", text, flags=I
        )
    return text


def _at(day: datetime, moment: Any) -> datetime:
    """`day` at the clock time of `moment` (a time or a datetime)."""
    return day.replace(hour=moment.hour, minute=moment.minute, second=0, microsecond=0)


class OfflinePlanner:
    """The plan for one `PlannerRequest` (see the module docstring)."""

    def __init__(self, request: PlannerRequest, embedder: Embedder) -> None:
        self.req, self.embedder = request, embedder
        self.now, self.tz = request.now, request.timezone
        self.style = read_response_style(request.response_preferences)
        self.cal = read_calendar_rules(request.cal_preferences)
        self.revisions = [f.text for f in request.feedback if f.kind == "draft"]

    def _when(self, text: str) -> datetime | None:
        return parse_when(text, self.now, self.tz)

    # ----- the request -------------------------------------------------------------------------

    def plan(self) -> Plan:
        """The plan for the request, with the clarifications applied."""
        if self.req.email is not None:
            return self._email_reply()
        text, notes = self.req.request.strip(), []
        for answer in (f.text for f in self.req.feedback if f.kind == "clarification"):
            alone, current = self._plan_text(answer), self._plan_text(text)
            complete = alone.steps and not alone.missing_fields and alone.intent != "intent_unclear"
            if complete or (current.intent == "intent_unclear" and alone.steps):
                notes.append(f"The clarification “{answer}” replaces “{text}”.")
                text = answer
            else:
                notes.append(f"The clarification “{answer}” completes the request.")
                text = f"{text} {answer}"
        plan = self._plan_text(text)
        if missing := self._unconnected(plan):
            notes.append(f"Not connected for this user: {', '.join(missing)}.")
        plan.reasoning = " ".join([plan.reasoning, *notes]).strip()
        return plan

    def _plan_text(self, text: str, *, referential: bool = True) -> Plan:
        text = text.strip()
        if not text:
            return _unclear("The request is empty.", "What would you like me to do?")
        if referential and (plan := self._referential(text)):
            return plan
        if (match := self._match(text)) and (plan := self._build(match, text)):
            for other in _INTENTS["alternatives"].get(match.intent, []):
                plan = self._prefer_connected(plan, other, text)
            plan.reasoning = f"{match.why}. {plan.reasoning}"
            return plan
        return _unclear(
            f"“{text}” matches no intent rule or example closely enough.",
            "Sorry, I didn't get that — what would you like me to do?",
        )

    def _match(self, text: str, only: str | None = None) -> Match | None:
        """The first intent whose rule fires, else the nearest example's, else a fallback rule's."""
        if match := self._rule(text, only, fallback=False):
            return match
        if only:  # a re-read as one intent (`fuzzy_as`) takes no nearest example
            return self._rule(text, only, fallback=True)
        best, score = _EXAMPLES.nearest(text, self.embedder)
        name, example = _EXAMPLE_INTENTS[best], _EXAMPLES.texts[best]
        spec = _INTENTS["intents"][name]
        too_long = len(text.split()) > spec.get("max_words", 99)
        if score < _INTENTS["fuzzy_threshold"] or too_long:
            return self._rule(text, only, fallback=True)
        rest = re.sub(spec.get("lead", "^$"), "", text, count=1, flags=I).strip()
        groups = {"rest": rest} if "lead" in spec else {}
        if "fuzzy_as" in spec and (again := self._match(spec["fuzzy_as"].format(rest=rest), name)):
            groups = again.groups
        return Match(name, groups, f"Intent {name}: nearest example “{example}” ({score:.2f})")

    def _rule(self, text: str, only: str | None, *, fallback: bool) -> Match | None:
        """The first intent (of the fallback ones, or the others) whose rule fires."""
        words = len(text.split())
        for name, spec in _INTENTS["intents"].items():
            if only not in (None, name) or spec.get("fallback", False) != fallback:
                continue
            for rule in spec["rules"] if words <= spec.get("max_words", words) else []:
                if m := re.search(rule, text, I):
                    groups = {k: v for k, v in m.groupdict().items() if v is not None}
                    return Match(name, groups, f"Intent {name}: a rule fired on “{m[0].strip()}”")
        return None

    def _build(self, match: Match, text: str) -> Plan | None:
        spec = _INTENTS["intents"][match.intent]
        if kind := spec.get("kind"):
            why = "About the assistant." if kind == "meta" else "No tool is needed."
            confidence = spec.get("confidence", 0.9)
            return Plan(intent=match.intent, intent_type=kind, confidence=confidence, reasoning=why)
        if "plan" in spec:
            return self._templated(spec["plan"], text, match.groups)
        build = getattr(self, "_" + match.intent.replace(".", "_"))
        return cast(Plan | None, build(text, match.groups))

    def _unconnected(self, plan: Plan) -> list[str]:
        """The families the plan needs that are not connected (none when none are listed)."""
        caps = self.req.capabilities
        return missing_capabilities(plan.steps, caps) if caps else []

    def _prefer_connected(self, plan: Plan, other: str, text: str) -> Plan:
        """`plan`, unless it needs an unconnected capability that intent `other` does without."""
        match = self._match(text, only=other) if (missing := self._unconnected(plan)) else None
        alt = self._build(match, text) if match else None
        if alt is None or not alt.steps or self._unconnected(alt):
            return plan
        alt.reasoning = (
            f"{plan.steps[0].capability} would need {', '.join(missing)}, which is not "
            f"connected; {other} is connected and serves the request. {alt.reasoning}"
        )
        return alt

    # ----- referential follow-ups (seed 002 Latest Actions) ------------------------------------

    def _referential(self, text: str) -> Plan | None:
        spec = _INTENTS["referential"]
        confirm, verbs = re.match(spec["confirm"], text, I), spec["verbs"].items()
        refers = confirm or re.search(spec["refers"], text, I)
        if len(text.split()) > spec["max_words"] or not refers:
            return None
        found = [(v, s["targets"]) for v, s in verbs if re.search(s["pattern"], text, I)]
        verb, targets = found[0] if found else ("confirm" if confirm else "", {})
        ref = f"“{text}” is referential ({verb})"
        if verb in ("", "confirm"):
            return self._accept_proposal(ref, spec["proposal"]) if verb else None
        for family in ("calendar", "reminders"):  # "move that meeting": calendar actions only
            if re.search(spec[family], text, I):
                targets = {k: v for k, v in targets.items() if k.startswith(family)}
                break
        actions = self.req.latest_actions
        if (target := next((a for a in actions if _tool(a) in targets), None)) is None:
            known = ", ".join(_describe(a) for a in actions) or "none"
            why = f"{ref}, but no latest action can be the target (latest actions: {known})."
            return _unclear(why, "Which one do you mean?")
        subject, cap = _subject(target), targets[_tool(target)]
        why = (
            f"{ref}; the latest plausible action, {_describe(target)}, is the strongest candidate."
        )
        args = {"query": subject, **target.external_ids}
        step = _step(cap, args, f"{verb.capitalize()} “{subject}”")
        if verb != "move":
            return _operation(f"{verb} {subject}", [step], why)
        if (when := self._when(text)) is None:
            return _missing(f"move {subject}", ["when"], f"When should I move “{subject}” to?", why)
        if cap != "reminders.create":
            step.args["start"] = when.isoformat()
            return _operation(f"move {subject}", [step], why)
        again = {"text": subject, "due_at": when.isoformat()}
        create = _step(cap, again, f"Remind you to {subject} at {_fmt(when)}", "s2", ["s1"])
        steps = [step.model_copy(update={"capability": "reminders.delete"}), create]
        why += " There is no reminders.update: the reminder is replaced (delete, then create)."
        return _operation(f"move reminder {subject}", steps, why)

    def _accept_proposal(self, ref: str, proposal: str) -> Plan:
        said = [m.content for m in self.req.recent_messages if m.role == "assistant"]
        if said and (m := re.search(proposal, said[-1], I)):
            plan = self._plan_text(to_first_person(m["p"].strip()), referential=False)
            if plan.steps:
                plan.reasoning = f"{ref}: it accepts the proposal “{m['p']}”. {plan.reasoning}"
                plan.confidence = min(plan.confidence, 0.8)
                return plan
        if not self.req.latest_actions:
            why = f"{ref} and there is no latest action or proposal it could refer to."
            return _unclear(why, "Sorry, what would you like me to do?")
        latest = self.req.latest_actions[0]
        why = f"{ref}, but repeating the latest action {_describe(latest)} may not be meant: ask."
        return _unclear(why, f"Do you mean “{latest.summary}”? What should I do with it?", 0.5)

    # ----- intents with a `plan` template ------------------------------------------------------

    def _slot(self, how: dict[str, Any], raw: str) -> Any:
        """A slot's value from its raw text: a moment, minutes, or cleaned words."""
        if "after" in how:
            raw = re.split(how["after"], raw, maxsplit=1)[-1]
        if how.get("time"):
            when = self._when(raw)
            return when.isoformat() if when and (when > self.now or not how.get("future")) else ""
        if how.get("minutes"):
            return duration_minutes(raw) or ""
        if "cut" in how:
            raw = strip_when(re.split(how["cut"], raw.strip(), maxsplit=1)[0]) or raw
        raw = strip_when(raw) if how.get("time_free") else raw
        return _clean(re.sub(how.get("strip", "^$"), "", raw.strip(), flags=I))

    def _templated(self, tpl: dict[str, Any], text: str, groups: dict[str, str]) -> Plan | None:
        """The intent's step: slots from the rule's groups (or patterns, defaults) into args."""
        values: dict[str, Any] = {"now": self.now.isoformat()}
        for slot, how in tpl.get("slots", {}).items():
            found = re.search(how["pattern"], text, I) if "pattern" in how else None
            key = how.get("from", slot)
            raw = groups[key] if key in groups else groups.get("rest", found and found[1])
            if raw is None:
                raw = text if how.get("or_text") else how.get("default", "")
            value = self._slot(how, raw)
            values[slot] = "" if str(value).lower() in PRONOUNS else value
            if how.get("time"):
                values[f"{slot}_text"] = value and _fmt(datetime.fromisoformat(value), self.tz)
            if how.get("required") and not values[slot]:
                return None
        fill = {k: v.format(**values) for k, v in tpl.items() if isinstance(v, str)}
        for ask in tpl.get("asks", []):
            if not any(values[s] for s in ask["empty"]):
                question, why = ask["question"].format(**values), f"Missing: {ask['fields']}."
                return _missing(fill["intent"], ask["fields"], question, why)
        args = {
            k: values[v[1:-1]] if re.fullmatch(r"\{\w+\}", str(v)) else v
            for k, v in tpl.get("args", {}).items()
        }
        step = _step(fill["capability"], {k: v for k, v in args.items() if v != ""}, fill["say"])
        return _operation(fill["intent"], [step], fill["why"], tpl.get("risk", "low"))

    # ----- reminders and email -----------------------------------------------------------------

    def _email_send(self, text: str, groups: dict[str, str]) -> Plan | None:
        spec = _INTENTS["email"]
        to, rest = re.sub(r"'s$", "", groups.get("to", "")), groups.get("rest", "")
        if not to or to.lower() in spec["not_recipients"]:
            return None
        surname = re.match(r"^\s+([A-Z][a-z'-]+)\b", rest)
        if surname and surname[1].lower() not in spec["not_surnames"]:
            to, rest = f"{to} {surname[1]}", rest[surname.end() :]
        rest, said = re.sub(spec["medium"], "", rest, flags=I).strip(), {}
        for part in spec["parts"]:
            if m := re.match(part["pattern"], rest, I | re.S):
                said = {k: (v or "").strip() for k, v in m.groupdict().items()}
                said["body"] = part.get("body", "{body}").format(**said)
                break
        if to.lower() in {"him", "her", "them"}:
            return _missing("send email", ["to"], "Who should I send the email to?", f"To {to}?")
        who = to.split()[0] if "@" not in to else first_name(to)
        body = said.get("body", "")
        draft, notes, content = self._draft(who, "", [sentence(body)] if body else [])
        if draft is None:
            ask = f"What should the email to {to} say?"
            return _missing(f"email {to}", ["body"], ask, "The email's content is missing.")
        words = re.sub(r"[^\w\s'-]", "", " ".join(content)).split()
        subject = sentence(said.get("subject") or " ".join(words[:6]) or "Hello").rstrip(".")
        args = {"to": to, "subject": subject, "body": draft}
        step = _step("email.send", args, f"Email {to}: “{subject}”")
        return _operation(f"email {to}", [step], f"Email {to}, “{subject}”. {notes}".strip())

    def _email_reply(self) -> Plan:
        email = self.req.email
        assert email is not None
        text, who = f"{email.subject}\n{email.body}", first_name(email.author) or "there"
        kind = next(k for k in _DRAFTS["replies"] if all(re.search(p, text, I) for p in k["when"]))
        why = f"An email from {email.author} to answer; the drafts table reads a {kind['kind']}."
        calendar = "calendar" in {c.split(".")[0] for c in self.req.capabilities}
        scheduled = kind.get("schedule") and calendar and not self.revisions
        if scheduled and (plan := self._schedule_from_email(email, text, why)):
            return plan
        content, deadline = [kind["content"]], _DRAFTS["deadline"]
        m = re.search(deadline["email"], email.body, I)
        if m and re.search(deadline["preference"], self.req.response_preferences, I):
            content.append(deadline["say"].format(deadline=m[0].strip()))
            why += " The response preferences ask to acknowledge deadlines."
        body, notes, _ = self._draft(who, kind["thanks"], content)
        subject = f"Re: {normalize_subject(email.subject)}"
        args = {"to": email.author, "subject": subject, "body": body, "in_reply_to": email.email_id}
        step = _step("email.send", args, f"Reply to {email.author} about “{subject[4:]}”")
        return _operation(f"reply to {who}'s email", [step], f"{why} {notes}".strip())

    def _draft(
        self, who: str, thanks: str, content: list[str]
    ) -> tuple[str | None, str, list[str]]:
        """(body, notes, content) of the email, body None without content: the response preferences,
        then feedback on the draft (style instructions restyle it, the rest is said in it)."""
        style, said, notes = self.style.model_copy(), [], []
        for clause in (c for revision in self.revisions for c in clauses(revision)):
            read = read_response_style(clause)  # the fields set are the ones read in the clause
            if asked := read.model_dump(exclude_unset=True, exclude={"other"}):
                style = style.model_copy(update=asked)
                notes.append(f"the feedback “{clause}” changes the style")
            else:
                said.append(_say(clause))
                notes.append(f"the feedback “{clause}” goes into the draft")
        if not (content := said or content):
            return None, "", []
        parts = dict(_DRAFTS["default"], thanks=thanks)
        for tone in (style.tone or "").split(" and "):
            parts.update(_DRAFTS["tones"].get(tone, {}))
        greeting = (style.greeting or parts["greeting"]).replace("<name>", who)
        sign_off = style.sign_off or parts["sign_off"]
        if sign_off.endswith(","):  # "Best regards," and the name; "Cheers, Ana" on two lines
            sign_off = f"{sign_off}\n{self.req.name}".strip()
        else:
            sign_off = sign_off.replace(", ", ",\n", 1)
        middle = " ".join(filter(None, [parts["thanks"], *content]))
        body = "\n\n".join(
            filter(None, [greeting, parts.get("opening"), middle, parts.get("closing"), sign_off])
        )
        if style.sign_off or style.greeting or style.tone:
            notes.insert(0, f"style {style.model_dump(exclude={'other'}, exclude_none=True)}")
        return body, ("Draft: " + "; ".join(notes) + ".") if notes else "", content

    # ----- calendar ----------------------------------------------------------------------------

    def _fit(self, start: datetime, minutes: int, explicit: bool) -> tuple[datetime, str]:
        """The first start at or after `start` that the calendar preferences allow (moving to
        another day skips weekends unless the day asked for was one)."""
        rules, moved, weekend = self.cal, [], start.weekday() >= 5
        first, last = rules.avoid_before, rules.avoid_after
        for _ in range(14):
            day, end = WEEKDAYS[start.weekday()], start + timedelta(minutes=minutes)
            late = last and (end.date() > start.date() or end.time() > last)
            earlier = _at(start, last) - timedelta(minutes=minutes) if last else start
            if day in rules.avoid_days or (not weekend and start.weekday() >= 5):
                avoided = day in rules.avoid_days
                reason = f"you avoid meetings on {day}s" if avoided else "not on a weekend"
                start = start + timedelta(days=1)
            elif first and start.time() < first:
                start, reason = _at(start, first), f"you avoid meetings before {first:%H:%M}"
            elif late:
                fits = earlier > self.now and not (first and earlier.time() < first)
                start = earlier if fits else _at(start + timedelta(days=1), first or start)
                reason = f"you avoid meetings after {last:%H:%M}"
            else:
                break
            moved.append(reason)
        asked = "the time asked for" if explicit else "the default time"
        why = f" Moved from {asked} to {_fmt(start)}: {', '.join(dict.fromkeys(moved))}."
        return start, why if moved else ""

    def _schedule(
        self, title: str, when: datetime, text: str, attendees: list[str], why: str = ""
    ) -> Plan:
        """The calendar.schedule plan; for an email's request (`why`), after a calendar check."""
        minutes, source = duration_minutes(text), "asked for in the request"
        if minutes is None:
            minutes = self.cal.meeting_minutes or DEFAULT_MINUTES
            source = "from the calendar preferences" if self.cal.meeting_minutes else "the default"
        explicit = any(m.kind in ("ampm", "hhmm", "named", "bare") for m in find_time_phrases(text))
        start, moved = self._fit(when, minutes, explicit)
        extra = [a for a in self.cal.default_attendees if a not in attendees]
        args = {
            "title": title,
            "start": start.isoformat(),
            "duration_minutes": minutes,
            "attendees": attendees + extra,
        }
        how = f"“{title}” at {start.isoformat()} for {minutes} minutes ({source}).{moved}"
        if extra:
            how += f" Default attendees from the calendar preferences: {', '.join(extra)}."
        step = _step("calendar.schedule", args, f"Schedule “{title}” at {_fmt(start)}")
        if not why:
            return _operation(f"schedule {title}", [step], how + " Calendar changes need approval.")
        step = step.model_copy(update={"id": "s2", "depends_on": ["s1"]})
        why += f" It asks for a meeting at a time and the calendar is connected: {how}"
        why += " The calendar is checked first; the event needs approval."
        return _operation(f"schedule {title}", [self._availability(start), step], why)

    def _availability(self, day: datetime) -> PlanStep:
        """A calendar.availability step over the day of `day`, from now on."""
        day = day.replace(hour=0, minute=0, second=0, microsecond=0)
        start = max(day, self.now.replace(second=0, microsecond=0))
        window = {"start": start.isoformat(), "end": (day + timedelta(days=1)).isoformat()}
        return _step("calendar.availability", window, f"Check your calendar on {day:%a %d %b}")

    def _schedule_from_email(self, email: EmailMessage, text: str, why: str) -> Plan | None:
        if (when := self._when(email.body) or self._when(email.subject)) is None:
            return None
        found = (m[1] for p in _DRAFTS["purpose"] if (m := re.search(p, text, I)))
        topic = _clean(next(found, "")) or normalize_subject(email.subject) or "Meeting"
        title = sentence(topic).rstrip(".")
        return self._schedule(title, when, email.body, [email_address(email.author)], why)

    def _calendar_schedule(self, text: str, groups: dict[str, str]) -> Plan:
        spec = _INTENTS["calendar"]
        cleaned = re.sub(spec["length"], "", text, flags=I)
        noun, about = re.search(spec["noun"], cleaned, I), re.search(spec["about"], cleaned, I)
        who = re.search(spec["with"], cleaned)  # names are capitalised: case-sensitive
        attendees = re.split(spec["and"], who["w"]) if who else []
        name = noun[0].lower() if noun else "meeting"
        title = (_clean(strip_when(about[1])) if about else "") or (
            f"{name.capitalize()} with {' and '.join(attendees)}" if attendees else name
        )
        title = sentence(title).rstrip(".")
        if (when := self._when(cleaned)) is None:
            ask = f"When should I schedule “{title}”?"
            return _missing(f"schedule {title}", ["when"], ask, f"“{title}” has no time.")
        return self._schedule(title, when, text, attendees)

    def _calendar_availability(self, text: str, groups: dict[str, str]) -> Plan:
        day = self._when(text) or self.now
        why = f"The user asks about their calendar on {day:%Y-%m-%d}."
        return _operation("check availability", [self._availability(day)], why)


def _say(clause: str) -> str:
    """What a content clause of feedback on a draft says in the email."""
    for rule in _DRAFTS["feedback"]["content"]:
        if m := re.match(rule["pattern"], clause, I):
            return sentence(rule["say"].format(rest=(m.groupdict().get("rest") or "").strip()))
    return sentence(clause)


def _tool(action: LatestAction) -> str:
    """'reminders' + 'create' → 'reminders.create' (tools record the family and the action)."""
    return action.capability if "." in action.capability else f"{action.capability}.{action.action}"


def _describe(action: LatestAction) -> str:
    return f"{action.capability} “{action.summary}” ({action.created_at:%H:%M})"


def _subject(action: LatestAction) -> str:
    """What a latest action is about: its quoted text, or its summary without the verb."""
    if quoted := re.search(r"[\"“']([^\"”']+)[\"”']", action.summary):
        return quoted[1].strip()
    verb = _INTENTS["referential"]["summary_verb"]
    return _clean(strip_when(re.sub(verb, "", action.summary, flags=I))) or action.summary


def plan_offline(request: PlannerRequest, embedder: Embedder) -> Plan:
    """The offline plan for a typed planner request."""
    return OfflinePlanner(request, embedder).plan()

"""Every prompt Memoir sends to a chat model, and the exact text formats inside them.

Both providers get the same rendered messages: `ChatOpenAI` reads them as prose, and
`OfflineChatModel` parses them. So the formats below are a contract; the offline skills rely on:

Triage (seed 000 router): `TRIAGE_SYSTEM_PROMPT` / `TRIAGE_USER_PROMPT`, rendered from a typed
request by `memoir.triage` (the offline triage reads the request, not the prompt).

Planner (seed 002 PlannerNode)
    system: `PLANNER_SYSTEM_PROMPT`: rules, the tool list, then `## ` sections: Connected
    Capabilities, Profile ("Name:", "Language:", profile line), Memory (bullets), Preferences
    (response and calendar preference texts), Latest Actions (`render_latest_actions`, newest
    first), Now (now line, "ISO:", "Timezone:").
    user: `PLANNER_USER_PROMPT`: `## Recent Messages` ("- user: …"), `## Replying To`,
    `## Feedback` (one "- …" line per human answer, see `respond_feedback`,
    `clarification_feedback`, `approval_feedback`), and last `## Request` (the message, or
    `EMAIL_REQUEST_PREFIX` + the email's markdown when an email must be answered).

Preference update (seed 000 `update_memory`), reply writer (seed 002 Join → Formatter → Writer)
and drafts (seed 004): rendered from typed requests by `memoir.preference_update`,
`memoir.responder` and `memoir.drafting`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memoir.models import EmailMessage, LatestAction, RecentMessage

# --------------------------------------------------------------------------------------------
# Default preference profiles (seed 000 defaults; written by `get_memory` on first read)
# --------------------------------------------------------------------------------------------

DEFAULT_BACKGROUND = (
    "The user is a busy professional. Memoir, their assistant, reads their email and manages "
    "their calendar and reminders for them."
)

DEFAULT_TRIAGE_INSTRUCTIONS = """Emails that are not worth responding to:
- Marketing newsletters and promotional emails
- Spam or suspicious emails
- CC'd on FYI threads with no direct questions

There are also other things that should be known about, but don't require an email response. \
For these, you should notify (using the `notify` response). Examples of this include:
- Team member out sick or on vacation
- Build system notifications or deployments
- Project status updates without action items
- Important company announcements
- FYI emails that mention you but don't require a response
- Receipts, shared documents and other notifications

Emails that are worth responding to:
- Direct questions from team members requiring expertise
- Meeting requests requiring confirmation
- Critical bug reports related to team's projects
- Requests from management requiring acknowledgment
- Client inquiries about project status or features
- Personal reminders related to family or self-care (doctor appointments, etc.)"""

DEFAULT_RESPONSE_PREFERENCES = """Use professional and concise language. If the e-mail mentions \
a deadline, make sure to explicitly acknowledge and reference the deadline in your response.

When responding to meeting scheduling requests:
- If times are proposed, check availability and commit to one of them, or say you can't make it.
- If no times are proposed, propose several options.
- Reference the meeting's purpose in your response."""

DEFAULT_CAL_PREFERENCES = """30 minute meetings are preferred, but 15 minute meetings are also \
acceptable."""

DEFAULT_PREFERENCES: dict[str, str] = {
    "triage_preferences": DEFAULT_TRIAGE_INSTRUCTIONS,
    "response_preferences": DEFAULT_RESPONSE_PREFERENCES,
    "cal_preferences": DEFAULT_CAL_PREFERENCES,
}

# --------------------------------------------------------------------------------------------
# Triage (seed 000)
# --------------------------------------------------------------------------------------------

TRIAGE_SYSTEM_PROMPT = """< Role >
Your role is to triage incoming emails based upon the instructions and background information \
below.
</ Role >

< Background >
{background}
</ Background >

< Instructions >
Categorize each email into one of three categories:
1. IGNORE - Emails that are not worth responding to or tracking
2. NOTIFY - Important information that is worth a notification but doesn't require a response
3. RESPOND - Emails that need a direct response
Lines in the rules below of the form `- Ignore: emails ...`, `- Notify: emails ...` or \
`- Respond: emails ...` are lessons learned from the user's own decisions. Each names its scope \
(a sender address, anyone at a domain, subjects like a pattern where * stands for anything, or \
a topic): for an email in that scope the lesson takes precedence over the general rules, and \
the most specific lesson wins; an email outside every scope is decided by the general rules \
alone.
In your reasoning, say step by step which rule or learned preference decided, then classify the \
email below.
</ Instructions >

< Rules >
{triage_instructions}
</ Rules >"""

TRIAGE_USER_PROMPT = """Please determine how to handle the below email thread:

From: {author}
To: {to}
Subject: {subject}
{email_thread}"""

# The message that hands a triage lesson (`memoir.llm.triage_lessons.Lesson.line`) to the updater.
LESSON_MESSAGE = (
    'Lesson to record: put this line under the "{heading}" heading of the profile, word for word, '
    "replacing a line about exactly the same emails if there is one; change nothing else:\n{line}"
)

# --------------------------------------------------------------------------------------------
# Planner (seed 002)
# --------------------------------------------------------------------------------------------

# Every tool the planner may use, with the args it fills. `memoir.planner.KNOWN_CAPABILITIES`
# lists the same names.
CAPABILITY_ARGS: dict[str, str] = {
    "reminders.create": "{text, due_at: ISO 8601 with offset}",
    "reminders.list": "{}",
    "reminders.complete": "{query} (words of the reminder's text, or reminder_id)",
    "reminders.delete": "{query} or {all: true}; needs approval",
    "email.send": "{to, subject, body, in_reply_to?}; needs approval",
    "calendar.availability": "{start, end: ISO 8601}",
    "calendar.schedule": "{title, start: ISO 8601, duration_minutes, attendees: [names]}; "
    "needs approval",
    "calendar.update": "{query, start?, duration_minutes?}; needs approval",
    "calendar.cancel": "{query}; needs approval",
    "contacts.lookup": "{name}",
    "knowledge.search": "{query}",
    "notes.draft": "{topic}",
    "handoff.draft": "{topic}",
}

PLANNER_SYSTEM_PROMPT = """You are the planner of Memoir, a personal assistant. Turn the user's \
request into a plan of tool steps; you do not execute anything yourself.

# Rules
- Use only the tools listed under Tools, with their args. Steps get unique ids (s1, s2, ...);
  depends_on lists the ids of earlier steps whose results a step needs. No cycles.
- Sending email, any calendar change and deleting reminders need approval (needs_approval=true,
  risk medium); deleting all reminders is risk high.
- Reminders: "remind me to X <when>" → reminders.create with the text X and due_at in the user's
  timezone. Without a text or a time, list "what" / "when" in missing_fields and ask a question.
- Referential language ("it", "that", "do it", "that one") refers to the Latest Actions, most
  recent first; copy the action's ids (e.g. reminder_id) into the step's args. Only when none
  is plausible: intent "intent_unclear", confidence 0.3, a question.
- Greetings, thanks and questions that need no tool: intent_type "conversation", no steps.
- A request starting with "{email_request_prefix}" asks for a reply to that email: one
  email.send step to its author, subject "Re: <subject>", a short polite body following the
  response preferences (sign-off, tone), needing approval. When it asks for a meeting at a
  given time and the calendar is connected: calendar.availability for that day, then
  calendar.schedule (depends_on it) at that time with the sender as attendee, needing approval.
- Calendar steps follow the calendar preferences: meeting length (duration_minutes), hours and
  days to avoid (move the slot and say so in reasoning), default attendees.
- Feedback lines are the human's answers to earlier questions: a clarification completes or
  replaces the request; feedback on a draft revises it (what it asks to say goes into the
  draft, style instructions such as "shorter" change it): never paste it as the body.
- Explain every decision in reasoning.

# Tools
{tools}

## Connected Capabilities
{capabilities}

## Profile
{profile}

## Memory
{memory}

## Preferences
{preferences}

## Latest Actions
{latest_actions}

## Now
{now_line}
ISO: {now_iso}
Timezone: {timezone}"""

PLANNER_USER_PROMPT = """## Recent Messages
{recent_messages}

## Replying To
{reply_to}

## Feedback
{feedback}

## Request
{request}"""

EMAIL_REQUEST_PREFIX = "Respond to the email"
NONE = "(none)"

# Feedback lines (PlanRequest.feedback). The first is seed 000's notify → respond message.
RESPOND_FEEDBACK = "User wants to reply to the email. Use this feedback to respond: {feedback}"
CLARIFICATION_FEEDBACK = "Clarification from the user: {answer}"
APPROVAL_FEEDBACK = "User gave feedback on the proposed {action}: {feedback}"


def respond_feedback(feedback: str) -> str:
    """Feedback line for a notify email the user chose to respond to (seed 000)."""
    return RESPOND_FEEDBACK.format(feedback=feedback.strip())


def clarification_feedback(answer: str) -> str:
    """Feedback line for an answer to a clarification / intent_unclear / missing_fields ask."""
    return CLARIFICATION_FEEDBACK.format(answer=answer.strip())


def approval_feedback(action: str, feedback: str) -> str:
    """Feedback line for an Agent Inbox `response` on an approval (e.g. on email.send)."""
    return APPROVAL_FEEDBACK.format(action=action, feedback=feedback.strip())


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_bullets(items: Iterable[str]) -> str:
    """'- item' lines, or (none)."""
    lines = [f"- {one_line(i)}" for i in items if i and i.strip()]
    return "\n".join(lines) if lines else NONE


def render_tools(names: Iterable[str]) -> str:
    """The tool list of the planner prompt."""
    return "\n".join(f"- {name} {CAPABILITY_ARGS.get(name, '{}')}" for name in names)


def render_latest_actions(actions: Sequence[LatestAction], limit: int = 3) -> str:
    """The tiny `## Latest Actions` block: newest first, one line each.

    `- {created_at ISO} | {capability} | {action} | {summary} | when={when} | ids: k=v, k=v`
    """
    ordered = sorted(actions, key=lambda a: a.created_at, reverse=True)[:limit]
    lines = []
    for a in ordered:
        parts = [a.created_at.isoformat(), a.capability, a.action, one_line(a.summary, 200)]
        if a.when:
            parts.append(f"when={a.when}")
        if a.external_ids:
            parts.append("ids: " + ", ".join(f"{k}={v}" for k, v in a.external_ids.items()))
        lines.append("- " + " | ".join(parts))
    return "\n".join(lines) if lines else NONE


def render_recent_messages(messages: Sequence[RecentMessage], limit: int = 8) -> str:
    """The last `limit` messages, oldest first: '- user: …' / '- assistant: …'."""
    lines = [f"- {m.role}: {one_line(m.content)}" for m in messages[-limit:]]
    return "\n".join(lines) if lines else NONE


def render_email_request(email: EmailMessage) -> str:
    """The `## Request` of a turn that answers an email (seed 000 "Respond to the email")."""
    return f"{EMAIL_REQUEST_PREFIX} (id {email.email_id}):\n\n{email.markdown()}"


# --------------------------------------------------------------------------------------------
# Preference memory update (seed 000 update_memory)
# --------------------------------------------------------------------------------------------

MEMORY_UPDATE_RULES = """- NEVER overwrite the entire memory profile
- ONLY make targeted additions of new information
- ONLY update specific facts that are directly contradicted by feedback messages
- PRESERVE all other existing information in the profile
- Format the profile consistently with the original style
- Generate the profile as a string"""
MEMORY_UPDATE_INSTRUCTIONS_REINFORCEMENT = "Remember:\n" + MEMORY_UPDATE_RULES

MEMORY_UPDATE_INSTRUCTIONS = """# Role and Objective
You are a memory profile manager for an email assistant agent that selectively updates user \
preferences based on feedback messages from human-in-the-loop interactions with the email \
assistant.

# Instructions
{rules}
- A decision about one email (ignore / notify / respond): write the lesson line handed over,
  word for word, under the heading of its action.
- Feedback on or an edit of a draft: keep ONLY what holds for every future email or meeting
  ("keep it shorter", a replaced sign-off, a changed meeting length), never what belongs to
  this draft ("propose Thursday 3pm", "tell him yes", its wording). One line each, replacing
  an older line of the same form: `- Sign off emails with "Best, Sam".`, `- Keep emails short.`,
  `- Open emails with "Hey <name>,".`, `- Write emails in a warm tone.`,
  `- Meetings last 45 minutes.`, `- Avoid meetings before 10:00.` (or after),
  `- Avoid meetings on Fridays.`, `- Invite dana@example.com to meetings by default.`;
  other general habits in the user's words.

# Process current profile for {namespace}
<memory_profile>
{current_profile}
</memory_profile>

Think step by step about what specific feedback is given, then update the memory profile, \
preserving everything else, based upon these user messages:"""

# The decision message of each human decision (seed 000 section 4).
DECISION_MESSAGES: dict[str, str] = {
    "notify.ignore": "The user ignored the email even though it was classified as notify.",
    "notify.respond": "The user decided to respond to the email.",
    "notify.acknowledge": "The user acknowledged the notification (seen, thanks): notifying "
    "was right for emails like it; it does not mean they should be ignored.",
    "email.ignore": "The user ignored the email draft for this email: ignore emails like it.",
    "calendar.ignore": "The user ignored the invitation for this email: ignore emails like it.",
    "question.ignore": "The user ignored the question about this email: ignore emails like it.",
    "email.edit": "User edited the email response. Here is the initial email generated:",
    "calendar.edit": "User edited the calendar invitation. Here is the initial invitation:",
    "email.feedback": "User gave feedback on the email draft.",
    "calendar.feedback": "User gave feedback on the calendar invitation.",
}


def normalize_decision(decision: str) -> str:
    """A decision of `DECISION_MESSAGES` from a capability spelling: "email.send.edit" →
    "email.edit", "calendar.schedule.response" → "calendar.feedback"."""
    name = re.sub(
        r"^(?:(email)\.send|(calendar)\.(?:schedule|update|cancel))\.", r"\1\2.", decision.strip()
    )
    return re.sub(r"(^|\.)response$", r"\1feedback", name)


# --------------------------------------------------------------------------------------------
# Reply writer (seed 002 ResponseWriterNode)
# --------------------------------------------------------------------------------------------

REPLY_SYSTEM_PROMPT = """You are Memoir, a personal assistant, writing the final message of a \
turn to {name}.
- Say plainly what was done, from the Results only; never claim that a failed step worked.
- When some steps failed, say which ones and why, in plain words.
- Keep dates and times exactly as they are written in the Results (already in the user's
  timezone, {timezone}).
- When a Note is given, say it.
- Conversation (no tools): answer briefly and politely, using the Memory when it helps.
- Follow the tone the Preferences ask for.
- One or two short sentences, or bullets for lists. Reply in {language}.

## Profile
{profile}

## Memory
{memory}

## Preferences
{preferences}

## Now
{now_line}"""

REPLY_USER_PROMPT = """## Request
{request}

## Intent
{intent}

## Status
{status}

## Note
{note}

## Results
{results}"""


def render_preferences(response: str, calendar: str) -> str:
    """The `## Preferences` block: the response and calendar preference texts, or (none)."""
    parts = [
        f"{label}:\n{text.strip()}"
        for label, text in (("Response preferences", response), ("Calendar preferences", calendar))
        if text.strip()
    ]
    return "\n\n".join(parts) or NONE


# --------------------------------------------------------------------------------------------
# Drafts (seed 004 notes and handoff reports; rendered by `memoir.drafting.draft_messages`)
# --------------------------------------------------------------------------------------------

DRAFT_SYSTEM_PROMPT = """You draft {what} for review from a conversation session.

# Rules
- Use ONLY information explicitly stated in the Session below. Do not invent, infer, or add
  anything that is not there; no outside knowledge, no assumptions, no records.
- Put each stated fact under the one section of the template where it belongs; keep the
  wording of the session (light trimming only).
- A section with nothing stated in the session stays empty (an empty list of sentences).
- Ignore the request to write the draft itself, greetings and questions.

## Sections
{sections}

## Topic
{topic}"""

DRAFT_USER_PROMPT = """## Session
{session}"""


# ============================================================================================
# Long-term memory (seeds 001, 003): gate, extraction, same fact, compose, episodic summary,
# profile update, rendered from typed requests by `memoir.memory.llm_calls`.
# ============================================================================================

MEMORY_GATE_SYSTEM_PROMPT = """You decide whether the latest message should become long-term \
semantic memories.

CREATE (should_create = true) when it states at least one of:
- a stable fact about the speaker or someone close to them: name, where they live, age, job,
  employer, language, diet, what they have, drive, play or do regularly;
- lasting preferences ("I prefer short replies", "never book meetings before 10am");
- identity, relationships, goals and interests;
- attributes of close people and pets (a pet's name or age, a sister's job), including
  corrections and updates of facts already known ("Luna turned 4");
- an event that happened: went, lost, adopted, started, moved, bought, visited, finished,
  joined, quit, got married, met … ("I lost my job yesterday").

DO NOT create for:
- questions of any kind, including about the assistant or its memory ("what can you do?");
- one-off requests ("remind me to …", "send an email to …", "schedule …");
- plans and appointments still to come ("I have a dentist appointment tomorrow");
- greetings, thanks, encouragement and small talk ("you can do it!", "never give up",
  "good luck", "that's great") — words to the listener, not facts.

Earlier turns are context only (who "she" is); decide on the latest message.
In reasoning, name the rule that decided."""

MEMORY_EXTRACTION_SYSTEM_PROMPT = """List every memory the latest message states: one item per \
stable fact or past event (a message with two facts gives two items).

For each item:
- subject: whom it is about. First-person statements are about the Speaker ("User" when the
  Speaker is the user); keep other people and pets as said: "Maya's sister Ngozi", "Luna
  (Maya's dog)". Never merge two people into one item.
- kind: "fact" (stable: identity, attributes, relationships, preferences, habits) or "event"
  (something that happened).
- summary: one short third-person sentence that starts with the subject ("User lives in
  Lisbon.", "Maya drives a Prius.", "Maya's sister Ngozi is a nurse."). An event's summary
  starts with its resolved date: "On 2023-05-07 Maya lost their job as a banker."
- date_iso: for an event, its date resolved against the Message Time ("yesterday" in a message
  of 2023-05-08 is 2023-05-07; a span such as "last week" gives its first day); null when
  the message gives no time. time_phrase: the time expression as said, or null.
- category: one of profile, preference, goal, interest, relationship, pet, work, event.
- importance: 0..1 (identity and close entities 0.8-0.9, events 0.6, preferences 0.6-0.7,
  passing likes 0.5).
- key: a deterministic key when the fact has one, else null (always null for events):
  profile:name, profile:city, profile:age, profile:job, profile:employer, profile:language,
  profile:timezone, profile:diet, profile:allergy:<thing>, profile:partner,
  profile:family:<relation>:<name>, profile:pet:<name>:age, profile:pet:<name>:kind,
  preference:reply_length, preference:tone, preference:language. Names inside keys are
  lowercase (profile:pet:luna:age). For a named Speaker other than the user, replace the
  leading "profile:" with "person:<speaker>:" (person:maya:city).

Leave out questions, requests, plans still to come, greetings, thanks, encouragement and
small talk: an empty list is a valid answer. Earlier turns are context only."""

MEMORY_TURNS_PROMPT = """## Earlier User Turns
{earlier}

## Speaker
{speaker}

## Message Time
{time}

## Latest User Message
{message}"""

SAME_FACT_SYSTEM_PROMPT = """Decide whether the candidate memory and the existing memory state \
the same fact about the user: the same entity and the same attribute, even when the value
changed (a correction or an update, e.g. "User's dog Luna is 3 years old." and "Luna is 4 years
old."). Different attributes of one entity (a pet's age and its breed) are different facts.
Equal keys always mean the same fact; different keys mean different facts. Explain briefly."""

SAME_FACT_USER_PROMPT = """## Existing Memory
{existing}

## Candidate
{candidate}"""

COMPOSE_SYSTEM_PROMPT = """Merge two memories about the same fact into one short third-person \
sentence about "User". When they conflict, the newer memory wins (it is a correction or an
update); keep details of the older one that the newer does not contradict (e.g. older "User's
dog Luna is 3 years old." and newer "Luna is 4 years old." → "User's dog Luna is 4 years old.")."""

COMPOSE_USER_PROMPT = """## Existing Memory (older)
{existing}

## New Memory (newer)
{new}"""

USER_SPEAKER = "User"  # the `## Speaker` of a message the user wrote as themself

EPISODIC_SYSTEM_PROMPT = """Summarize one turn of the conversation between the user and their \
assistant for an episodic memory.
- topic: what was discussed, a short noun phrase ("a reminder to call your mom").
- approach: what was done or decided, one short clause in the past tense, from the Actions and
  the Reply only ("set a reminder for 2025-01-15 17:00").
- notable: true only when the turn had an outcome: a tool result (success or failure), a
  decision, a human approval, or a recap of earlier conversations the user asked for; false
  for routine turns (small talk, a stated fact, a question answered from memory).
Address the user as "you". Ignore boilerplate and tool traces."""

EPISODIC_USER_PROMPT = """## Conversation
{conversation}

## Status
{status}

## Actions
{actions}

## Reply
{reply}

## Request
{request}"""

PROFILE_UPDATE_SYSTEM_PROMPT = """Propose updates to the user's profile implied by one new or \
updated memory. Fields: name, tone (how replies should sound, e.g. "concise", "casual"),
language (ISO 639-1 code, e.g. "pt"), city, timezone (IANA, only when the user states it),
goals (list), interests (list). For lists, return the whole new list (current items kept).
Return only fields that change; an empty `changes` when nothing does."""

PROFILE_UPDATE_USER_PROMPT = """## Current Profile
{profile}

## Memory
{memory}"""

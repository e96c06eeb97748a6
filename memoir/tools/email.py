"""The `email.send` capability: one message over SMTP (aiosmtplib).

Idempotency (DESIGN "Idempotency without a ledger"): the `Message-ID` is derived from the step's
idempotency key, so a retried attempt sends the very same message id and the receiving side
(a real mail system, or Memoir's local sink) keeps one copy.

Errors: an address or a message the server refuses for good (5xx) is a failed step, said
plainly; anything transient (connection refused, timeout, 4xx) raises, and Temporal retries the
activity with the same key.
"""

import hashlib
import re
from email.message import EmailMessage
from email.utils import formataddr, formatdate

import aiosmtplib

from memoir.models import (
    Candidate,
    ExecuteRequest,
    ExecutionResult,
    ResolveRequest,
    StepResolution,
)
from memoir.settings import Settings
from memoir.stores.contacts import Contact, ContactStore
from memoir.tools.base import failure, not_found, success

_ADDRESS = r"[^\s<>@\",;:()\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+"
_PLAIN = re.compile(rf"^({_ADDRESS})$")
_NAMED = re.compile(rf"^\"?([^\"<>]*?)\"?\s*<({_ADDRESS})>$")


def message_id_for(idempotency_key: str) -> str:
    """The `Message-ID` of the email a step sends: the same for every attempt of that step."""
    return f"<{hashlib.sha256(idempotency_key.encode()).hexdigest()[:32]}@memoir>"


def parse_recipient(raw: str) -> tuple[str, str] | None:
    """`(display name, address)` of 'addr@example.com' or 'Name <addr@example.com>', else None."""
    text = raw.strip()
    plain = _PLAIN.match(text)
    if plain:
        return "", plain.group(1)
    named = _NAMED.match(text)
    if named:
        return named.group(1).strip(), named.group(2)
    return None


class EmailTool:
    """`contacts` lets a bare name ("Dan") resolve to an address of the user's contacts."""

    def __init__(self, settings: Settings, contacts: ContactStore | None = None) -> None:
        self._settings = settings
        self._contacts = contacts

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        step_id = request.step.id
        action = request.step.capability.split(".", 1)[1]
        if action != "send":
            return not_found(step_id, f"email has no action '{action}'.")
        args = request.step.args
        raw_to = args.get("to")
        recipients = raw_to if isinstance(raw_to, list) else [raw_to]
        texts = [str(r).strip() for r in recipients if r is not None and str(r).strip()]
        if not texts:
            return not_found(step_id, "An email needs someone to send it to.")
        normalized: list[str] = []
        # (index in `normalized`, the name, its matching contacts) of each ambiguous name
        ambiguous: list[tuple[int, str, list[Contact]]] = []
        for text in texts:
            parsed = parse_recipient(text)
            if parsed is not None:
                normalized.append(formataddr(parsed))
                continue
            if self._contacts is None or not _is_name(text):
                return not_found(
                    step_id,
                    f"I don't have an email address for '{text}'. "
                    "Give me the address, e.g. name@example.com or Name <name@example.com>.",
                )
            matches = await self._contacts.find(request.user_id, text)
            if not matches:
                return not_found(
                    step_id, f"I don't have an email address for '{text}' in your contacts."
                )
            normalized.append(formataddr((matches[0].name, matches[0].email)))
            if len(matches) > 1:
                ambiguous.append((len(normalized) - 1, text, matches))
        subject = str(args.get("subject") or "").strip()
        body = str(args.get("body") or "").strip()
        if not subject:
            return not_found(step_id, "An email needs a subject.")
        if not body:
            return not_found(step_id, "An email needs a body: what should it say?")
        resolved_args = {"subject": subject, "body": str(args.get("body"))}
        if len(ambiguous) > 1:
            names = " and ".join(f"'{name}'" for _, name, _ in ambiguous)
            return not_found(
                step_id,
                f"{names} each match several of your contacts. "
                "Which addresses? Give them, e.g. Name <name@example.com>.",
            )
        if ambiguous:
            # One option per contact, labelled "Name <email>"; choosing it sets `to`.
            [(index, _, matches)] = ambiguous
            options: list[Candidate] = []
            for contact in matches:
                chosen = list(normalized)
                chosen[index] = formataddr((contact.name, contact.email))
                to_args = {"to": chosen[0] if len(chosen) == 1 else chosen}
                options.append(Candidate(id=contact.contact_id, label=contact.label, args=to_args))
            return StepResolution(
                step_id=step_id, status="candidates", args=resolved_args, candidates=options
            )
        to = normalized[0] if len(normalized) == 1 else normalized
        return StepResolution(step_id=step_id, status="resolved", args={"to": to, **resolved_args})

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        action = request.step.capability.split(".", 1)[1]
        if action != "send":
            return failure(request, f"email has no action '{action}'")
        message = self.build_message(request)
        to = message["To"]
        subject = message["Subject"]
        settings = self._settings
        try:
            await aiosmtplib.send(
                message,
                hostname=settings.smtp_host,
                port=settings.smtp_port,
                username=settings.smtp_username,
                password=settings.smtp_password,
                start_tls=settings.smtp_starttls,
                timeout=settings.smtp_timeout_seconds,
            )
        except aiosmtplib.SMTPRecipientsRefused as error:
            refused = ", ".join(e.recipient for e in error.recipients)
            return failure(request, f"The mail server refused the recipient(s) {refused}.")
        except aiosmtplib.SMTPResponseException as error:
            if error.code < 500:
                raise
            return failure(request, f"The mail server refused the email: {error.message}")
        message_id = str(message["Message-ID"])
        summary = f"Sent '{subject}' to {to}."
        data = {"message_id": message_id, "to": to, "subject": subject}
        return success(request, summary, data, ids={"message_id": message_id})

    def build_message(self, request: ExecuteRequest) -> EmailMessage:
        """The message a step sends; its `Message-ID` comes from the idempotency key."""
        raw_to = request.args["to"]
        recipients = raw_to if isinstance(raw_to, list) else [raw_to]
        message = EmailMessage()
        message["From"] = self._settings.smtp_from
        message["To"] = ", ".join(str(r) for r in recipients)
        message["Subject"] = str(request.args.get("subject", ""))
        message["Date"] = formatdate(localtime=False, usegmt=True)
        message["Message-ID"] = message_id_for(request.idempotency_key)
        message.set_content(str(request.args.get("body", "")))
        return message


def _is_name(text: str) -> bool:
    """A person's name rather than a (malformed) address: no '@' and no angle brackets."""
    return not any(ch in text for ch in "@<>") and any(ch.isalpha() for ch in text)

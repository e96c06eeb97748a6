"""Validation of a human answer against its request: shared by the turn workflow and the API.

Pure functions of the models, so workflow code may call them deterministically.
"""

import contextlib
import re

from memoir.models.hitl import (
    ActionRequest,
    AnswerSource,
    Decision,
    ExpectedInput,
    HitlAnswer,
    HitlRequest,
    HumanResponse,
)

YES_WORDS = frozenset({"yes", "y", "yep", "yeah", "ok", "okay", "sure", "approve", "confirm", "go"})
NO_WORDS = frozenset({"no", "n", "nope", "cancel", "stop", "don't", "dont", "reject", "deny"})
# "Seen, thanks": the words that acknowledge a notification (a request that allows `accept`).
ACKNOWLEDGE_PHRASES = frozenset(
    {
        "ok", "okay", "k", "kk", "thanks", "thank you", "thanks a lot", "thx", "ty", "cheers",
        "seen", "got it", "noted", "ack", "acknowledge", "acknowledged", "understood",
        "good to know", "great", "cool", "nice", "perfect", "👍", "👌", "ok thanks",
        "okay thanks", "ok thank you", "seen thanks", "noted thanks", "got it thanks",
        "thanks for letting me know", "thanks for the heads up",
    }
)  # fmt: skip
_ACK_SPLIT = re.compile(r"[,.!;:]+|\s+-\s+|(?<=\S)\s+(?=[👍👌])")
_ANSWER_SHAPE = re.compile(r"^\s*(\d{1,2}|[a-z']{1,8})\s*[.!]*\s*$", re.IGNORECASE)


class InvalidAnswer(ValueError):
    """The answer does not fit the request; the message says why (shown to the person)."""


def looks_like_answer(text: str) -> bool:
    """A short yes / no / number: what the stale-reply guard watches for (seed 002)."""
    match = _ANSWER_SHAPE.match(text)
    if not match:
        return False
    word = match.group(1).lower()
    return word.isdigit() or word in YES_WORDS or word in NO_WORDS


def interpret_answer(request: HitlRequest, answer: HitlAnswer) -> Decision:
    """Turn an answer into a decision, or raise `InvalidAnswer` with a reason."""
    response = answer.response
    if answer.source is AnswerSource.CHAT:
        return _interpret_chat_text(request, _text_of(response))
    return _interpret_inbox(request, response)


def _text_of(response: HumanResponse) -> str:
    if isinstance(response.args, str):
        return response.args.strip()
    raise InvalidAnswer("A chat answer must be text.")


def _interpret_chat_text(request: HitlRequest, text: str) -> Decision:
    if not text:
        raise InvalidAnswer("The answer is empty.")
    expected = request.expected_input
    if expected is ExpectedInput.YES_NO:
        return _yes_no(request, text)
    if expected is ExpectedInput.SINGLE_CHOICE:
        return Decision(type="choice", choices=[_choice(request, text)])
    if expected is ExpectedInput.MULTI_CHOICE:
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        return Decision(type="choice", choices=[_choice(request, p) for p in parts])
    if expected is ExpectedInput.FREE_TEXT:
        if _word(text) in NO_WORDS and request.config.allow_ignore:
            return Decision(type="ignore")
        return Decision(type="text", text=text)
    return _human_response(request, text)


def _human_response(request: HitlRequest, text: str) -> Decision:
    """Agent Inbox style: an option named or numbered, "ok" / "thanks" / "seen" to acknowledge
    (where `accept` is allowed), a 'no' to ignore, else feedback text."""
    if request.options:
        with contextlib.suppress(InvalidAnswer):
            return Decision(type="choice", choices=[_choice(request, text)])
    if request.config.allow_accept and acknowledges(text):
        return Decision(type="accept")
    if _word(text) in NO_WORDS and request.config.allow_ignore:
        return Decision(type="ignore")
    return Decision(type="response", text=text)


def acknowledges(text: str) -> bool:
    """Whether `text` only says "seen, thanks": every comma- or stop-separated part of it is one
    of `ACKNOWLEDGE_PHRASES` ("ok", "Thanks!", "seen, thanks", "got it 👍")."""
    parts = [p for p in _ACK_SPLIT.split(text.lower()) if p.strip()]
    return bool(parts) and all(" ".join(p.split()) in ACKNOWLEDGE_PHRASES for p in parts)


def _word(text: str) -> str:
    return text.strip().strip(".!").lower()


def _yes_no(request: HitlRequest, text: str) -> Decision:
    word = _word(text)
    if word in YES_WORDS:
        return Decision(type="accept")
    if word in NO_WORDS:
        return Decision(type="ignore")
    raise InvalidAnswer("Please answer yes or no.")


def _choice(request: HitlRequest, text: str) -> str:
    """An option picked by number (1-based), id or label."""
    options = request.options
    word = _word(text)
    if word.isdigit():
        index = int(word)
        if 1 <= index <= len(options):
            return options[index - 1].id
        raise InvalidAnswer(f"Please answer with a number from 1 to {len(options)}.")
    for option in options:
        if word in (option.id.lower(), option.label.lower()):
            return option.id
    numbers = ", ".join(str(i) for i in range(1, len(options) + 1))
    raise InvalidAnswer(f"Please pick one of the options ({numbers}).")


def _interpret_inbox(request: HitlRequest, response: HumanResponse) -> Decision:
    config = request.config
    allowed = {
        "accept": config.allow_accept,
        "edit": config.allow_edit,
        "ignore": config.allow_ignore,
        "response": config.allow_respond,
    }
    if not allowed[response.type]:
        permitted = ", ".join(kind for kind, ok in allowed.items() if ok)
        raise InvalidAnswer(f"'{response.type}' is not allowed here; allowed: {permitted}.")
    if response.type == "accept":
        return Decision(type="accept")
    if response.type == "ignore":
        return Decision(type="ignore")
    if response.type == "edit":
        return _edit(request, response)
    return _inbox_response(request, response)


def _edit(request: HitlRequest, response: HumanResponse) -> Decision:
    edited = response.args
    if not isinstance(edited, ActionRequest):
        raise InvalidAnswer("An edit needs args of the form {action, args}.")
    if edited.action != request.action_request.action:
        raise InvalidAnswer(f"An edit must keep the action '{request.action_request.action}'.")
    return Decision(type="edit", edited=edited)


def _inbox_response(request: HitlRequest, response: HumanResponse) -> Decision:
    if not isinstance(response.args, str) or not response.args.strip():
        raise InvalidAnswer("A response needs non-empty text in args.")
    text = response.args.strip()
    if request.expected_input in (ExpectedInput.SINGLE_CHOICE, ExpectedInput.MULTI_CHOICE):
        return _interpret_chat_text(request, text)
    if request.expected_input is ExpectedInput.HUMAN_RESPONSE and request.options:
        # A button of the inbox sends an option's id ("ignore", "acknowledge") as the response.
        with contextlib.suppress(InvalidAnswer):
            return Decision(type="choice", choices=[_choice(request, text)])
    if request.expected_input is ExpectedInput.FREE_TEXT:
        return Decision(type="text", text=text)
    return Decision(type="response", text=text)

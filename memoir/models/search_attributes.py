"""Typed search-attribute keys: registered at start, set by workflows, read by the API."""

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

from memoir.models import names
from memoir.models.messages import IncomingMessage

USER_ID = SearchAttributeKey.for_keyword(names.SA_USER_ID)
THREAD_ID = SearchAttributeKey.for_keyword(names.SA_THREAD_ID)
CHANNEL = SearchAttributeKey.for_keyword(names.SA_CHANNEL)
CLASSIFICATION = SearchAttributeKey.for_keyword(names.SA_CLASSIFICATION)
HITL_KIND = SearchAttributeKey.for_keyword(names.SA_HITL_KIND)
AWAITING_HUMAN = SearchAttributeKey.for_bool(names.SA_AWAITING_HUMAN)

ALL: tuple[SearchAttributeKey, ...] = (  # type: ignore[type-arg]
    USER_ID,
    THREAD_ID,
    CHANNEL,
    CLASSIFICATION,
    HITL_KIND,
    AWAITING_HUMAN,
)


def for_message(
    message: IncomingMessage, *, awaiting_human: bool | None = None
) -> TypedSearchAttributes:
    """User, thread and channel of a message (and whether it awaits a human, when given)."""
    pairs: list[SearchAttributePair] = [  # type: ignore[type-arg]
        SearchAttributePair(USER_ID, message.user_id),
        SearchAttributePair(THREAD_ID, message.thread_id),
        SearchAttributePair(CHANNEL, message.channel.value),
    ]
    if awaiting_human is not None:
        pairs.append(SearchAttributePair(AWAITING_HUMAN, awaiting_human))
    return TypedSearchAttributes(pairs)

"""Typed search-attribute keys: registered at start, set by workflows, read by the API."""

from temporalio.common import SearchAttributeKey

from memoir.models import names

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

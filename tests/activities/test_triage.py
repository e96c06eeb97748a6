"""The triage activity reads each email with the user's own address, learned from their mail."""

from __future__ import annotations

from activities.deps import Deps
from activities.triage import READER_KEY, TriageActivities, lone_email_request
from memoir.embeddings import get_local_embedder
from memoir.llm import OfflineChatModel
from memoir.models import Classification, EmailMessage, TriageRequest, UserProfile
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry

MARC = "Marc Tremblay <marc@realty.example>"
LENDER_DOCUMENTS = EmailMessage(
    email_id="lender-documents",
    author="Melissa Tan <melissa@mortgage.example>",
    to=f"Ade Okonkwo <ade@mail.example>, Funmi Okonkwo <funmi@mail.example>, {MARC}",
    subject="Outstanding documents",
    body="Hi Ade and Funmi,\n\nTo finalise the lender package we still need your pay stubs.",
)
VIEWING = EmailMessage(
    email_id="viewing",
    author="Jo Park <jo.park@mail.example>",
    to=MARC,
    subject="Viewing on Saturday?",
    body="Hi Marc,\n\nCould we see the flat on Bartlett Ave on Saturday morning?",
)


def request(user: UserProfile, email: EmailMessage) -> TriageRequest:
    return lone_email_request(user, email, email.email_id)


def triage_stage(stores: Stores) -> TriageActivities:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    offline = OfflineChatModel(embedder=get_local_embedder())
    return TriageActivities(Deps(settings, stores, offline, ToolRegistry({})))


async def test_an_email_to_the_user_alone_teaches_their_address(stores: Stores) -> None:
    user, _ = await stores.users.create_user("Marc")
    await triage_stage(stores).triage(request(user, VIEWING))
    assert (await stores.user_context.get(user.user_id)).extra[READER_KEY] == "marc@realty.example"


async def test_mail_to_several_people_teaches_no_address(stores: Stores) -> None:
    user, _ = await stores.users.create_user("Marc")
    await triage_stage(stores).triage(request(user, LENDER_DOCUMENTS))
    assert READER_KEY not in (await stores.user_context.get(user.user_id)).extra


async def test_once_the_address_is_known_mail_greeting_only_others_leaves_the_user_copied(
    stores: Stores,
) -> None:
    user, _ = await stores.users.create_user("Marc")
    triage = triage_stage(stores).triage
    unknown = await triage(request(user, LENDER_DOCUMENTS))
    await triage(request(user, VIEWING))
    known = await triage(request(user, LENDER_DOCUMENTS))
    assert "only copied" not in unknown.reasoning
    assert known.classification is Classification.IGNORE
    assert "only copied" in known.reasoning

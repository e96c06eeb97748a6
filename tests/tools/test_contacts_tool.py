"""`contacts.lookup`: one contact resolves to its id, several are candidates, none is not_found."""

from memoir.models import ExecuteRequest, PlanStep, ResolveRequest
from memoir.stores import Stores
from memoir.tools.contacts import ContactsTool


def step(**args: object) -> PlanStep:
    return PlanStep(id="s1", capability="contacts.lookup", args=args)


async def test_lookup_resolves_asks_or_says_not_found(stores: Stores) -> None:
    user, _ = await stores.users.create_user("Tess")
    dan = await stores.contacts.add(user.user_id, "Dan Smith", "dan@example.com", phone="+1 555")
    brown = await stores.contacts.add(user.user_id, "Dan Brown", "brown@example.com")
    tool = ContactsTool(stores.contacts)

    def resolve(**args: object) -> ResolveRequest:
        return ResolveRequest(turn_id="t", user_id=user.user_id, step=step(**args))

    one = await tool.resolve(resolve(name="Dan Smith"))
    assert (one.status, one.args) == ("resolved", {"contact_id": dan.contact_id})
    several = await tool.resolve(resolve(name="Dan"))
    assert several.status == "candidates"
    assert [(c.label, c.args) for c in several.candidates] == [
        ("Dan Brown <brown@example.com>", {"contact_id": brown.contact_id}),
        ("Dan Smith <dan@example.com>", {"contact_id": dan.contact_id}),
    ]
    none = await tool.resolve(resolve(name="Zoe"))
    assert (none.status, none.message) == ("not_found", "I couldn't find 'Zoe' in your contacts.")

    result = await tool.execute(
        ExecuteRequest(
            turn_id="t",
            user_id=user.user_id,
            thread_id="th",
            step=step(name="Dan Smith"),
            args={"contact_id": dan.contact_id},
            idempotency_key="t:s1",
        )
    )
    assert result.success and result.summary == "Dan Smith: dan@example.com, +1 555"
    assert result.data["to"] == "Dan Smith <dan@example.com>"

"""Stage 11: join the results and write the reply (seed 002 Join → Formatter → Writer)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import ReplyRequest, names
from memoir.responder import write_reply

# Seed 000: the response agent reads these in every prompt; so does the reply writer.
WRITER_PREFERENCES = ("response_preferences", "cal_preferences")


class RespondActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.WRITE_REPLY)
    async def write_reply(self, request: ReplyRequest) -> str:
        store = self._deps.stores.preferences
        user_id = request.turn.context.user.user_id
        preferences = {ns: await store.get_memory(user_id, ns) for ns in WRITER_PREFERENCES}
        return await write_reply(self._deps.llm, request, preferences=preferences)

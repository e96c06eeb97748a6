"""Stage 11: join the results and write the reply (seed 002 Join → Formatter → Writer)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import RESPONSE_AGENT_PREFERENCES, ReplyRequest, names
from memoir.responder import write_reply


class RespondActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.WRITE_REPLY)
    async def write_reply(self, request: ReplyRequest) -> str:
        return await write_reply(
            self._deps.llm, request, preferences=await self._preferences(request)
        )

    async def _preferences(self, request: ReplyRequest) -> dict[str, str]:
        """The user's response and calendar preferences; none when the store cannot be read
        (they only set the tone: the reply is still written, and the failure is logged)."""
        user_id = request.turn.context.user.user_id
        try:
            return await self._deps.stores.preferences.get_memories(
                user_id, RESPONSE_AGENT_PREFERENCES
            )
        except Exception as error:  # a reply without its tone beats no reply
            activity.logger.warning("reply without preferences: %r", error)
            return {}

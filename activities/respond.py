"""Stage 11: join the results and write the reply (seed 002 Join → Formatter → Writer)."""

from temporalio import activity

from activities.deps import Deps
from memoir.models import ReplyRequest, names
from memoir.responder import write_reply


class RespondActivities:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    @activity.defn(name=names.WRITE_REPLY)
    async def write_reply(self, request: ReplyRequest) -> str:
        return await write_reply(self._deps.llm, request)

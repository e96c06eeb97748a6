"""Capabilities the executor can run, by capability family (`reminders.create` → `reminders`)."""

from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution
from memoir.stores import Stores
from memoir.tools.base import Tool, UnknownCapability
from memoir.tools.calendar import CalendarTool
from memoir.tools.contacts import ContactsTool
from memoir.tools.drafts import DraftTool
from memoir.tools.email import EmailTool
from memoir.tools.knowledge import KnowledgeTool
from memoir.tools.reminders import ReminderTool, ScheduleReminder


class ToolRegistry:
    def __init__(self, tools: dict[str, Tool]) -> None:
        self._tools = tools

    @classmethod
    def from_stores(
        cls,
        stores: Stores,
        *,
        schedule_reminder: ScheduleReminder,
        email: EmailTool | None = None,
        calendar: CalendarTool | None = None,
        knowledge: KnowledgeTool | None = None,
        drafts: DraftTool | None = None,
    ) -> "ToolRegistry":
        tools: dict[str, Tool] = {
            "reminders": ReminderTool(stores.reminders, schedule_reminder),
            "contacts": ContactsTool(stores.contacts),
        }
        if email is not None:
            tools["email"] = email
        if calendar is not None:
            tools["calendar"] = calendar
        if knowledge is not None:
            tools["knowledge"] = knowledge
        if drafts is not None:
            tools["notes"] = drafts
            tools["handoff"] = drafts
        return cls(tools)

    def families(self) -> list[str]:
        return sorted(self._tools)

    def _tool(self, capability: str) -> Tool:
        family = capability.split(".", 1)[0]
        if family not in self._tools:
            raise UnknownCapability(f"no tool provides '{capability}'")
        return self._tools[family]

    async def resolve(self, request: ResolveRequest) -> StepResolution:
        return await self._tool(request.step.capability).resolve(request)

    async def execute(self, request: ExecuteRequest) -> ExecutionResult:
        return await self._tool(request.step.capability).execute(request)


__all__ = [
    "CalendarTool",
    "ContactsTool",
    "DraftTool",
    "EmailTool",
    "KnowledgeTool",
    "ScheduleReminder",
    "Tool",
    "ToolRegistry",
    "UnknownCapability",
]

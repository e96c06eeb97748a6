"""Capabilities the executor can run, by capability family (`reminders.create` → `reminders`)."""

from memoir.models import ExecuteRequest, ExecutionResult, ResolveRequest, StepResolution
from memoir.stores import Stores
from memoir.tools.base import Tool, UnknownCapability
from memoir.tools.reminders import ReminderTool, ScheduleReminder


class ToolRegistry:
    def __init__(self, tools: dict[str, Tool]) -> None:
        self._tools = tools

    @classmethod
    def from_stores(cls, stores: Stores, *, schedule_reminder: ScheduleReminder) -> "ToolRegistry":
        return cls({"reminders": ReminderTool(stores.reminders, schedule_reminder)})

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


__all__ = ["ScheduleReminder", "Tool", "ToolRegistry", "UnknownCapability"]

"""Deterministic orchestration: the thread, turn and reminder workflows."""

from workflows.reminder import ReminderWorkflow
from workflows.thread import ThreadWorkflow
from workflows.turn import AgentTurnWorkflow

ALL_WORKFLOWS = [ThreadWorkflow, AgentTurnWorkflow, ReminderWorkflow]

__all__ = ["ALL_WORKFLOWS", "AgentTurnWorkflow", "ReminderWorkflow", "ThreadWorkflow"]

"""Triage and planning outputs (structured LLM output)."""

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class Classification(StrEnum):
    IGNORE = "ignore"
    NOTIFY = "notify"
    RESPOND = "respond"


class TriageDecision(BaseModel):
    """Seed 000 `RouterSchema`."""

    reasoning: str = Field(description="Step-by-step reasoning behind the classification.")
    classification: Classification = Field(
        description="ignore: not worth attention; notify: important, no reply needed; "
        "respond: needs a reply or an action."
    )


class PlanStep(BaseModel):
    id: str = Field(description="Short step id, unique within the plan, e.g. s1.")
    capability: str = Field(description="Tool name such as reminders.create.")
    args: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    description: str = Field(default="", description="One line a person can read.")


class Plan(BaseModel):
    """Seed 002 planner output."""

    intent: str = Field(description="What the user wants, in a few words.")
    intent_type: Literal["operation", "conversation", "meta"] = "operation"
    confidence: float = Field(ge=0.0, le=1.0)
    risk: Literal["low", "medium", "high"] = "low"
    needs_approval: bool = False
    missing_fields: list[str] = Field(default_factory=list)
    question: str | None = Field(
        default=None, description="A clarifying question to ask, when the request is unclear."
    )
    steps: list[PlanStep] = Field(default_factory=list)
    reasoning: str = ""


class UserPreferences(BaseModel):
    """Seed 000 memory-update output: the whole, updated preference text."""

    chain_of_thought: str = Field(description="Which targeted change was made and why.")
    user_preferences: str = Field(description="The updated preference profile.")


CAPABILITY_FAMILIES: tuple[str, ...] = (
    "reminders",
    "email",
    "calendar",
    "contacts",
    "knowledge",
    "notes",
    "handoff",
)
"""The capability families a user can connect (DESIGN.md "Tools (capabilities)")."""


def unknown_capabilities(names: list[str]) -> list[str]:
    """The names that are not known capability families, in the order given."""
    return [n for n in names if n not in CAPABILITY_FAMILIES]


def capability_family(capability: str) -> str:
    """'reminders.create' → 'reminders': users connect families, plans name actions."""
    return capability.split(".", 1)[0]


def missing_capabilities(steps: list[PlanStep], connected: list[str]) -> list[str]:
    """The capability families the steps need that the user has not connected, sorted."""
    granted = {capability_family(c) for c in connected}
    return sorted({capability_family(s.capability) for s in steps} - granted)

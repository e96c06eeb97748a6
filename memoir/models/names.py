"""Names shared by workflows, activities, the worker and the API: one place for every string id."""

from typing import Final

TASK_QUEUE: Final = "memoir"

# Workflows
THREAD_WORKFLOW: Final = "ThreadWorkflow"
TURN_WORKFLOW: Final = "AgentTurnWorkflow"
REMINDER_WORKFLOW: Final = "ReminderWorkflow"

# Thread workflow handlers
THREAD_SUBMIT_UPDATE: Final = "submit"
THREAD_HITL_OPENED_SIGNAL: Final = "hitl_opened"
THREAD_HITL_CLOSED_SIGNAL: Final = "hitl_closed"
THREAD_STATE_QUERY: Final = "state"

# Turn workflow handlers
TURN_ANSWER_SIGNAL: Final = "answer"
TURN_PENDING_QUERY: Final = "pending"
TURN_VIEW_QUERY: Final = "view"

# Activities (one per stage; see activities/)
ASSEMBLE_CONTEXT: Final = "assemble_context"
MEMORY_HOTPATH: Final = "memory_hotpath"
MEMORY_CONTEXT: Final = "memory_context"
TRIAGE: Final = "triage"
UPDATE_PREFERENCES: Final = "update_preferences"
PLAN: Final = "plan"
RESOLVE_STEP: Final = "resolve_step"
EXECUTE_STEP: Final = "execute_step"
WRITE_REPLY: Final = "write_reply"
REMEMBER_TURN: Final = "remember_turn"
EPISODIC_CAPTURE: Final = "episodic_capture"
# Stages that always run together, one activity each (patch `fast-turn`; the single-stage
# activities above stay registered for histories recorded before it).
MEMORY_STAGES: Final = "memory_hotpath_and_context"
REMEMBER_STAGES: Final = "remember_and_episodic_capture"
# Plan, and for a plan that is an answer alone (no step, no question) its reply: one activity.
PLAN_AND_ANSWER: Final = "plan_and_answer"
# A chat turn from version 2: context, memory (hot path, retrieval) and the first plan (with its
# reply when it answers alone) in one activity; nothing between them is a workflow decision.
CONTEXT_MEMORY_AND_PLAN: Final = "context_memory_and_plan"
DELIVER_REMINDER: Final = "deliver_reminder"
# The marker the SDK records for a local activity's result (patches record markers too).
LOCAL_ACTIVITY_MARKER: Final = "core_local_activity"

# Search attributes (registered on the dev server at start)
SA_USER_ID: Final = "MemoirUserId"
SA_THREAD_ID: Final = "MemoirThreadId"
SA_CHANNEL: Final = "MemoirChannel"
SA_CLASSIFICATION: Final = "MemoirClassification"
SA_HITL_KIND: Final = "MemoirHitlKind"
SA_AWAITING_HUMAN: Final = "MemoirAwaitingHuman"


def thread_workflow_id(user_id: str, thread_id: str) -> str:
    return f"thread:{user_id}:{thread_id}"


def turn_workflow_id(user_id: str, thread_id: str, message_id: str) -> str:
    return f"turn:{user_id}:{thread_id}:{message_id}"


def reminder_workflow_id(reminder_id: str) -> str:
    return f"reminder:{reminder_id}"


def idempotency_key(turn_id: str, step_id: str) -> str:
    """The key every side effect of a step carries: `{turn workflow id}:{step id}`."""
    return f"{turn_id}:{step_id}"

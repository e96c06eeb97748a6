"""Workflow histories for replay tests: recorded from scripted scenarios, replayed in CI.

`memoir replay --regenerate` (or `make histories`) records them anew; do that on purpose only,
when a workflow change is meant to break compatibility, and say why in the commit. A new
scenario alone is recorded with `record_histories(HISTORY_DIR, only={"name"})`, which keeps the
older histories (and so the older code paths they cover) as they are.

`tests/histories/v0/` holds the histories of turns started before turn versions
(`TurnInput.version` 0, which follow their patch markers) and `tests/histories/v1/` those of
version 1 (a chat turn's context, memory and plan as three stages), recorded by older code: they
are never regenerated, and replay with the others so such turns still run.
"""

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from memoir.db import migrate, open_pool
from memoir.embedded_pg import start_embedded_postgres
from memoir.models import (
    ActionRequest,
    Classification,
    EmailMessage,
    HitlKind,
    HitlRequest,
    HumanResponse,
    names,
)
from memoir.models import search_attributes as sa
from memoir.stores import Stores
from temporal import scenarios as plans
from temporal.devserver import dev_server_tuning, temporal_cli
from temporal.harness import Harness, running_harness, until
from workflows import ALL_WORKFLOWS

HISTORY_DIR = Path(__file__).resolve().parent.parent / "tests" / "histories"
VERSION_0_DIR = HISTORY_DIR / "v0"
VERSION_1_DIR = HISTORY_DIR / "v1"

Scenario = Callable[[Harness], Awaitable[str]]
EXPIRY_TTL_SECONDS = 2
INDEX = "index.json"  # file name → workflow id


def _email(subject: str, body: str) -> EmailMessage:
    return EmailMessage(
        email_id=subject.lower().replace(" ", "-"),
        author="Alice <alice@example.com>",
        to="tess@example.com",
        subject=subject,
        body=body,
    )


async def plain_turn(h: Harness) -> str:
    h.llm.script("Plan", plans.remind("call mom"))
    routed = await h.send("remind me to call mom in an hour", message_id="plain")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def fast_turn(h: Harness) -> str:
    """A reminder turn with patch `fast-turn`: memory in one activity, the resolve step and
    remember + episodic capture as local activities."""
    h.llm.script("Plan", plans.remind("water the plants"))
    routed = await h.send("remind me to water the plants in an hour", message_id="fast")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def _approved_in_chat(h: Harness, task: str, message_id: str) -> str:
    """A reminder turn that asks for approval, answered "yes" in chat; its turn id."""
    h.llm.script("Plan", plans.remind(task, approval=True))
    routed = await h.send(f"remind me to {task}", message_id=message_id)
    await h.pending(routed.turn_id or "")
    await h.send("yes", message_id=f"{message_id}-yes")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def fast_approval(h: Harness) -> str:
    """An approval with patches `fast-turn` and `hitl-close-unawaited`: the step resolved by a
    local activity before the approval, "yes" in chat, then execution in the workflow task
    that took the answer (the thread is told the question closed meanwhile)."""
    return await _approved_in_chat(h, "book the dentist", "fast-approval")


async def approval_decided_before_resolve(h: Harness) -> str:
    """An approval with patch `ask-decided-before-resolve`: the patch the question reads is
    decided before the resolve step's local activity, not right after it."""
    return await _approved_in_chat(h, "renew the passport", "decided")


async def two_turns(h: Harness) -> str:
    """Two turns in one thread with patch `thread-one-idle-timer`: the thread's idle timer is
    started once, not around each turn."""
    for number, text in enumerate(("stretch", "drink water")):
        h.llm.script("Plan", plans.remind(text))
        routed = await h.send(f"remind me to {text}", message_id=f"two-{number}")
        await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def chat_classified(h: Harness) -> str:
    """A chat turn with patch `chat-classified-at-start`: the thread starts it with its
    classification among its search attributes, so the turn upserts none."""
    h.llm.script("Plan", plans.chat())
    routed = await h.send("hi there", message_id="chat-classified")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def answer_in_plan(h: Harness) -> str:
    """A chat turn whose plan answers alone: its reply comes with the plan (`plan_and_answer`
    from turn version 1, `context_memory_and_plan` from version 2), with no `write_reply`
    activity."""
    h.llm.script("Plan", plans.chat())
    routed = await h.send("hello again", message_id="answer-in-plan")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def ignored_email(h: Harness) -> str:
    h.llm.script("TriageDecision", plans.triage(Classification.IGNORE))
    routed = await h.send("", email=_email("Weekly newsletter", "Unsubscribe any time."))
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def notify_respond(h: Harness) -> str:
    h.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    h.llm.script("Plan", plans.chat())
    routed = await h.send("", email=_email("Deploy finished", "api v2 is live."))
    request = await h.pending(routed.turn_id or "")
    await h.answer_inbox(request, HumanResponse(type="response", args="say thanks"))
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def notify_acknowledge(h: Harness) -> str:
    """The notify request with acknowledge (patch `notify-acknowledge`), answered "thanks"."""
    h.llm.script("TriageDecision", plans.triage(Classification.NOTIFY))
    routed = await h.send("", email=_email("Invoice paid", "Your invoice 42 was paid."))
    await h.pending(routed.turn_id or "")
    await h.send("thanks", message_id="ack-thanks")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def approval_accepted(h: Harness) -> str:
    h.llm.script("Plan", plans.remind("pay rent", approval=True))
    routed = await h.send("remind me to pay rent", message_id="accepted")
    await h.pending(routed.turn_id or "")
    await h.send("yes", message_id="accepted-yes")
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def approval_edited(h: Harness) -> str:
    h.llm.script("Plan", plans.remind("call dad", approval=True))
    routed = await h.send("remind me to call dad", message_id="edited")
    request = await h.pending(routed.turn_id or "")
    args = {**request.action_request.args, "text": "call dad and grandma"}
    edit = ActionRequest(action=request.action_request.action, args=args)
    await h.answer_inbox(request, HumanResponse(type="edit", args=edit))
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


async def disambiguation_then_approval(h: Harness) -> str:
    """Which reminder is asked before the approval (patch `resolve-before-approval`), and the
    approval then shows the chosen one; answered "2", then "yes", in chat."""
    for number, text in enumerate(("call mom", "call the bank")):
        h.llm.script("Plan", plans.remind(text))
        added = await h.send(f"remind me to {text}", message_id=f"add-{number}")
        await h.result(added.turn_id or "")
    h.llm.script("Plan", plans.complete("call", approval=True))
    routed = await h.send("I'm done with the call", message_id="done")
    turn_id = routed.turn_id or ""
    await h.pending(turn_id)
    await h.send("2", message_id="done-choice")

    async def approval() -> HitlRequest | None:
        pending = await h.pending(turn_id)
        return pending if pending.kind is HitlKind.APPROVAL else None

    await until(approval, "the approval after the choice")
    await h.send("yes", message_id="done-yes")
    await h.result(turn_id)
    return turn_id


async def expired(h: Harness) -> str:
    h.llm.script("Plan", plans.remind("renew passport", approval=True))
    routed = await h.send("remind me to renew my passport", message_id="expired")
    await h.pending(routed.turn_id or "")
    await h.skip(timedelta(seconds=h.settings.hitl_ttl_seconds + 1))
    await h.result(routed.turn_id or "")
    return routed.turn_id or ""


SCENARIOS: dict[str, Scenario] = {
    "plain_turn": plain_turn,
    "ignored_email": ignored_email,
    "notify_respond": notify_respond,
    "notify_acknowledge": notify_acknowledge,
    "approval_accepted": approval_accepted,
    "approval_edited": approval_edited,
    "disambiguation_then_approval": disambiguation_then_approval,
    "expired": expired,
    "fast_turn": fast_turn,
    "fast_approval": fast_approval,
    "two_turns": two_turns,
    "chat_classified": chat_classified,
    "approval_decided_before_resolve": approval_decided_before_resolve,
    "answer_in_plan": answer_in_plan,
}


async def record_histories(
    directory: Path, *, say: Callable[[str], None] = print, only: set[str] | None = None
) -> list[Path]:
    """Run every scenario (or those named in `only`, keeping the others' recorded histories) on a
    dev server and write each turn's and thread's history as JSON.

    A real dev server, not the time-skipping one: the latter records cancelled timers in a way
    the SDK's replayer rejects. The expiry scenario uses a 2-second TTL instead of skipping time.
    """
    directory.mkdir(parents=True, exist_ok=True)
    postgres = start_embedded_postgres(directory.parent.parent / ".memoir" / "histories")
    pool = await open_pool(postgres.url)
    env = await WorkflowEnvironment.start_local(
        data_converter=pydantic_data_converter,
        dev_server_existing_path=temporal_cli(),
        search_attributes=list(sa.ALL),
        dev_server_extra_args=dev_server_tuning(sqlite_file=False),
    )
    written: list[Path] = []
    index: dict[str, str] = {}
    if only is not None and (directory / INDEX).exists():
        kept = json.loads((directory / INDEX).read_text())
        index = {f: w for f, w in kept.items() if f.split(".", 1)[0] not in only}
    try:
        await migrate(pool)
        for name, scenario in SCENARIOS.items():
            if only is not None and name not in only:
                continue
            ttl = EXPIRY_TTL_SECONDS if scenario is expired else 300
            stores = Stores.from_pool(pool)
            async with running_harness(env, stores, hitl_ttl_seconds=ttl) as harness:
                turn_id = await scenario(harness)
                history = await env.client.get_workflow_handle(turn_id).fetch_history()
                thread = await env.client.get_workflow_handle(
                    turn_id.replace("turn:", "thread:", 1).rsplit(":", 1)[0]
                ).fetch_history()
            for suffix, recorded in (("turn", history), ("thread", thread)):
                path = directory / f"{name}.{suffix}.json"
                path.write_text(json.dumps(json.loads(recorded.to_json()), indent=1))
                index[path.name] = recorded.workflow_id
                written.append(path)
            say(f"recorded {name}")
        (directory / INDEX).write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    finally:
        await env.shutdown()
        await pool.close()
        postgres.stop()
    return written


def activities_run(history: WorkflowHistory) -> list[str]:
    """The activity types a history ran, in order, local ones (markers) included."""
    found: list[str] = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            found.append(event.activity_task_scheduled_event_attributes.activity_type.name)
        elif event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == names.LOCAL_ACTIVITY_MARKER:
                found.append(json.loads(marker.details["data"].payloads[0].data)["activity_type"])
    return found


def load_histories(directory: Path) -> list[WorkflowHistory]:
    """The recorded histories, each under its real workflow id (workflow code reads it)."""
    index: dict[str, str] = json.loads((directory / INDEX).read_text())
    return [
        WorkflowHistory.from_json(workflow_id, (directory / name).read_text())
        for name, workflow_id in sorted(index.items())
    ]


def committed_histories() -> list[WorkflowHistory]:
    """The scenarios' histories as recorded today, then those of version-0 and version-1 turns."""
    older = load_histories(VERSION_0_DIR) + load_histories(VERSION_1_DIR)
    return load_histories(HISTORY_DIR) + older


async def replay_histories() -> list[str]:
    """Replay every committed history (`committed_histories`); raises on the first
    nondeterminism."""
    if not (HISTORY_DIR / INDEX).exists():
        raise FileNotFoundError(f"no histories in {HISTORY_DIR}: run `memoir replay --regenerate`")
    histories = committed_histories()
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=pydantic_data_converter)
    for history in histories:
        await replayer.replay_workflow(history)
    return [h.workflow_id for h in histories]

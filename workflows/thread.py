"""`ThreadWorkflow`: owns one thread's ordering, dedup, pending question and session scope."""

import asyncio
import contextlib
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from memoir.models import (
        TURN_VERSION,
        AnswerSource,
        Channel,
        Classification,
        HitlAnswer,
        HitlRequest,
        HumanResponse,
        IncomingMessage,
        RouteResult,
        RouteStatus,
        ThreadInput,
        ThreadState,
        TurnInput,
        TurnResult,
        names,
    )
    from memoir.models import search_attributes as sa
    from memoir.models.answers import InvalidAnswer, interpret_answer, looks_like_answer
    from workflows.hitl import STALE_REPLY

SEEN_KEPT_ACROSS_RUNS = 2_000
ANSWER_GRACE = timedelta(seconds=5)
STALE = ""  # `seen` value of a message answered by the stale-reply guard (no turn)
# One idle timer per idle period, re-armed for what is left when it fires after a turn, instead
# of a timer started and cancelled around every turn; older histories did the latter.
PATCH_ONE_IDLE_TIMER = "thread-one-idle-timer"
# A chat turn starts with its classification (respond: chat is never triaged) among its search
# attributes, so the turn upserts none (one event and one visibility write less per chat turn);
# older histories started it without and the turn upserted it.
PATCH_CHAT_CLASSIFIED = "chat-classified-at-start"


@workflow.defn(name=names.THREAD_WORKFLOW)
class ThreadWorkflow:
    @workflow.init
    def __init__(self, input: ThreadInput) -> None:
        self._input = input
        self._seen: dict[str, str] = dict(input.seen)
        self._queue: list[IncomingMessage] = list(input.queue)
        self._running: str | None = None
        self._pending: HitlRequest | None = None
        self._idle_timer: asyncio.Task[None] | None = None
        self._quiet_since: datetime | None = None  # the run's start, then each turn's end

    @workflow.run
    async def run(self, input: ThreadInput) -> None:
        idle = timedelta(hours=input.idle_hours)
        one_timer = workflow.patched(PATCH_ONE_IDLE_TIMER)
        self._quiet_since = workflow.now()
        turns = 0
        while True:
            if one_timer:
                if not await self._next_message(idle):
                    break
            else:
                try:
                    await workflow.wait_condition(
                        lambda: bool(self._queue), timeout=idle, timeout_summary="session idle"
                    )
                except TimeoutError:
                    break
            await self._run_turn(self._queue.pop(0))
            self._quiet_since = workflow.now()
            turns += 1
            long_enough = workflow.info().is_continue_as_new_suggested()
            if (long_enough or turns >= input.turns_per_run) and not self._queue:
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._carry_over())
        await workflow.wait_condition(workflow.all_handlers_finished)

    async def _next_message(self, idle: timedelta) -> bool:
        """Whether a message came before the session was idle for `idle` (since the last turn
        ended, or the run started): one timer, re-armed for the rest when it fires too early."""
        while not self._queue:
            if self._idle_timer is None or self._idle_timer.done():
                assert self._quiet_since is not None
                left = self._quiet_since + idle - workflow.now()
                if left <= timedelta(0):
                    return False
                self._idle_timer = asyncio.ensure_future(
                    workflow.sleep(left, summary="session idle")
                )
            await workflow.wait_condition(self._woken)
        return True

    def _woken(self) -> bool:
        """A message is queued, or the idle timer fired."""
        return bool(self._queue) or (self._idle_timer is not None and self._idle_timer.done())

    @workflow.update(name=names.THREAD_SUBMIT_UPDATE)
    async def submit(self, message: IncomingMessage) -> RouteResult:
        """Route a message: duplicate, answer to the pending question, stale reply or new turn."""
        is_answer = message.channel is Channel.CHAT and looks_like_answer(message.text)
        if is_answer and self._pending is None and self._running is not None:
            await self._await_question()
        known = self._seen.get(message.message_id)
        if known is not None:
            return RouteResult(turn_id=known or None, status=RouteStatus.DUPLICATE)
        if self._pending is not None:
            return await self._answer_pending(self._pending, message)
        if is_answer:
            self._seen[message.message_id] = STALE
            workflow.logger.info("HITL_STALE_REPLY %s", message.message_id)
            return RouteResult(turn_id=None, status=RouteStatus.STALE_REPLY, reply=STALE_REPLY)
        turn_id = names.turn_workflow_id(message.user_id, message.thread_id, message.message_id)
        self._seen[message.message_id] = turn_id
        self._queue.append(message)
        return RouteResult(turn_id=turn_id, status=RouteStatus.STARTED)

    async def _await_question(self) -> None:
        """A "yes" while a turn runs may race its question: give the question a moment to land."""
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(
                lambda: self._pending is not None or self._running is None,
                timeout=ANSWER_GRACE,
                timeout_summary="answer waits for its question",
            )

    @submit.validator
    def _validate_submit(self, message: IncomingMessage) -> None:
        """Reject, before it reaches history, a message that belongs to another thread."""
        if (message.user_id, message.thread_id) != (self._input.user_id, self._input.thread_id):
            raise ValueError("message belongs to another thread")

    @workflow.signal(name=names.THREAD_HITL_OPENED_SIGNAL)
    def hitl_opened(self, request: HitlRequest) -> None:
        self._pending = request

    @workflow.signal(name=names.THREAD_HITL_CLOSED_SIGNAL)
    def hitl_closed(self, hitl_id: str) -> None:
        if self._pending is not None and self._pending.hitl_id == hitl_id:
            self._pending = None

    @workflow.query(name=names.THREAD_STATE_QUERY)
    def state(self) -> ThreadState:
        return ThreadState(
            running_turn_id=self._running,
            pending_hitl_id=self._pending.hitl_id if self._pending else None,
            queued_turn_ids=[
                names.turn_workflow_id(m.user_id, m.thread_id, m.message_id) for m in self._queue
            ],
            seen_count=len(self._seen),
        )

    async def _answer_pending(self, pending: HitlRequest, message: IncomingMessage) -> RouteResult:
        """A chat message while a question is pending is its answer; a bad one is re-asked."""
        self._seen[message.message_id] = pending.turn_id
        answer = HitlAnswer(
            hitl_id=pending.hitl_id,
            response=HumanResponse(type="response", args=message.text),
            source=AnswerSource.CHAT,
            message_id=message.message_id,
        )
        reply = None
        try:
            interpret_answer(pending, answer)
        except InvalidAnswer as error:
            reply = f"⚠️ {error}\n\n{pending.question}"
        handle = workflow.get_external_workflow_handle(pending.turn_id)
        await handle.signal(names.TURN_ANSWER_SIGNAL, answer)
        return RouteResult(
            turn_id=pending.turn_id, status=RouteStatus.ROUTED_TO_PENDING, reply=reply
        )

    async def _run_turn(self, message: IncomingMessage) -> None:
        """One turn at a time: the next queued message waits until this child completes."""
        turn_id = names.turn_workflow_id(message.user_id, message.thread_id, message.message_id)
        self._running = turn_id
        try:
            await workflow.execute_child_workflow(
                names.TURN_WORKFLOW,
                TurnInput(
                    message=message,
                    hitl_ttl_seconds=self._input.hitl_ttl_seconds,
                    max_replans=self._input.max_replans,
                    heartbeat_seconds=self._input.heartbeat_seconds,
                    version=TURN_VERSION,
                ),
                id=turn_id,
                result_type=TurnResult,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                parent_close_policy=ParentClosePolicy.ABANDON,
                search_attributes=self._turn_attributes(message),
                static_summary=f"{message.channel.value}: {_headline(message)}",
            )
        except WorkflowAlreadyStartedError:
            workflow.logger.info("turn %s already ran in an earlier thread run", turn_id)
        except ChildWorkflowError as error:
            workflow.logger.warning("turn %s failed: %s", turn_id, error)
        finally:
            self._running = None
            self._pending = None

    def _turn_attributes(self, message: IncomingMessage) -> TypedSearchAttributes:
        """The child turn's search attributes; a chat turn's include its classification."""
        attributes = sa.for_message(message, awaiting_human=False)
        if message.channel is Channel.CHAT and workflow.patched(PATCH_CHAT_CLASSIFIED):
            respond = SearchAttributePair(sa.CLASSIFICATION, Classification.RESPOND.value)
            return TypedSearchAttributes([*attributes.search_attributes, respond])
        return attributes

    def _carry_over(self) -> ThreadInput:
        recent = dict(list(self._seen.items())[-SEEN_KEPT_ACROSS_RUNS:])
        return self._input.model_copy(update={"seen": recent, "queue": list(self._queue)})


def _headline(message: IncomingMessage) -> str:
    text = message.email.subject if message.email else message.text
    return " ".join(text.split())[:80]

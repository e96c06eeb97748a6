"""`AgentTurnWorkflow`: one message, twelve stages, a person in the loop when needed.

Deterministic orchestration only: every read, write and LLM call is an activity.
"""

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from memoir.models import (
        Candidate,
        Channel,
        Classification,
        Decision,
        EmailMessage,
        ExecuteRequest,
        ExecutionResult,
        HitlAnswer,
        HitlKind,
        HitlOutcome,
        HitlRequest,
        MemoryContext,
        MemoryStages,
        Plan,
        PlannedTurn,
        PlanRequest,
        PlanStep,
        PreferenceNamespace,
        PreferenceUpdate,
        PreparedTurn,
        PrepareRequest,
        RememberRequest,
        RememberStages,
        ReplyRequest,
        ResolveRequest,
        StepResolution,
        TriageDecision,
        TriageRequest,
        TurnContext,
        TurnInput,
        TurnRequest,
        TurnResult,
        TurnStatus,
        TurnView,
        names,
    )
    from memoir.models import search_attributes as sa
    from memoir.models.answers import InvalidAnswer, interpret_answer
    from memoir.models.notify import NotifyChoice, notify_choice, notify_feedback, respond_note
    from memoir.models.plan import missing_capabilities
    from workflows.hitl import (
        CANCELLED_REPLY,
        EXPIRED_REPLY,
        RequestFactory,
        approval_step,
        current_details,
        plan_question,
        preference_for,
        with_error,
    )
    from workflows.retry import (
        backoff,
        failure_text,
        label_of,
        retry_details,
        round_policy,
        round_spent,
    )
    from workflows.schedule import CyclicPlan, dependency_groups

PATCH_THREAD_KNOWS_FIRST = "thread-knows-question-first"
# Notify requests offer acknowledge; older histories asked respond / ignore only.
PATCH_NOTIFY_ACKNOWLEDGE = "notify-acknowledge"
# The step to approve is resolved before the approval, so the approval shows what will be done
# (the contact's address, not "Dan") and a disambiguation comes first; older histories asked the
# approval first and resolved after it.
PATCH_RESOLVE_BEFORE_APPROVAL = "resolve-before-approval"
# Fewer server round trips per turn: memory hot path + context in one activity, resolve steps
# and remember + episodic capture as local activities (one each); older histories ran each
# stage as an activity of its own.
PATCH_FAST_TURN = "fast-turn"
# The thread is told a question closed without waiting for the signal's delivery, so the next
# activity starts in the workflow task that took the answer; older histories waited for it.
PATCH_CLOSE_UNAWAITED = "hitl-close-unawaited"
# The patch `_ask` reads is decided before the resolve step's local activity, not in `_ask` right
# after it: when a query arrives meanwhile, the original run records the local activity's marker
# and the patch's in two workflow tasks, and a replay (a restarted worker) reaches `_ask` before
# it knows the patch is there, reads it as absent and fails on a nondeterminism error. Older
# histories decide in `_ask`.
PATCH_ASK_DECIDED_BEFORE_RESOLVE = "ask-decided-before-resolve"
UNRUNNABLE_PLAN_REPLY = "Sorry, I put together a plan I can't run. Could you rephrase that?"
LLM_TIMEOUT = timedelta(seconds=120)
STORE_TIMEOUT = timedelta(seconds=30)
LLM_RETRY = RetryPolicy(maximum_attempts=5)  # a model may answer better on another attempt

T = TypeVar("T")


class TurnExpired(Exception):
    """A human question ran out of time: the turn ends with nothing executed."""


class TurnStopped(Exception):
    """The turn ends early with a fixed reply and status (ignored, blocked, cancelled)."""

    def __init__(self, status: TurnStatus, reply: str | None) -> None:
        super().__init__(reply)
        self.status = status
        self.reply = reply


@workflow.defn(name=names.TURN_WORKFLOW)
class AgentTurnWorkflow:
    @workflow.init
    def __init__(self, input: TurnInput) -> None:
        self._input = input
        self._message = input.message
        self._turn_id = workflow.info().workflow_id
        self._requests = RequestFactory(self._message, self._turn_id, input.hitl_ttl_seconds)
        self._pending: HitlRequest | None = None
        self._decision: Decision | None = None
        self._reasked = False  # an invalid answer re-asked; the thread must see the new question
        self._outcomes: list[HitlOutcome] = []
        self._results: dict[str, ExecutionResult] = {}
        self._settled: dict[str, dict[str, Any]] = {}  # step id → args resolved before approval
        self._chosen: set[str] = set()  # candidates a person chose in this turn
        self._classification: Classification | None = None
        self._reply: str | None = None
        self._answer: str | None = None  # the reply written with the plan (`plan_and_answer`)
        self._prepared: PlannedTurn | None = None  # version 2 chat: the first plan, made ahead
        self._remembered: RememberStages | None = None  # ... and remembered, if it answers alone
        self._user_name: str | None = None  # from the turn's context, for remember
        self._stage = "starting"
        self._status = TurnStatus.RUNNING
        self._memory_events: list[str] = []
        self._failing: dict[str, str] = {}  # stage label → its last error, while it keeps failing
        self._fast = False  # patch `fast-turn`, decided when the turn starts
        self._telling: list[asyncio.Task[None]] = []  # signals to the thread still on their way

    # ----- handlers -------------------------------------------------------------------------

    @workflow.signal(name=names.TURN_ANSWER_SIGNAL)
    def answer(self, answer: HitlAnswer) -> None:
        """A person's answer; only the pending request takes one, once."""
        pending = self._pending
        if pending is None or answer.hitl_id != pending.hitl_id or self._decision is not None:
            workflow.logger.info("answer for %s ignored: not pending", answer.hitl_id)
            return
        try:
            self._decision = interpret_answer(pending, answer)
        except InvalidAnswer as error:
            self._pending = with_error(pending, str(error))
            self._reasked = True

    @workflow.query(name=names.TURN_PENDING_QUERY)
    def pending(self) -> HitlRequest | None:
        return self._pending

    @workflow.query(name=names.TURN_VIEW_QUERY)
    def view(self) -> TurnView:
        return TurnView(
            turn_id=self._turn_id,
            status=self._status,
            stage=self._stage,
            classification=self._classification,
            pending=self._pending,
            reply=self._reply,
            actions=list(self._results.values()),
            last_error=self._last_error(),
        )

    # ----- the turn ----------------------------------------------------------------------------

    @workflow.run
    async def run(self, input: TurnInput) -> TurnResult:
        self._fast = self._patched(PATCH_FAST_TURN)
        if self._input.version >= 2 and self._message.channel is Channel.CHAT:
            turn = await self._prepare()
        else:
            context = await self._assemble_context()
            turn = TurnRequest(turn_id=self._turn_id, message=self._message, context=context)
            turn.memory = await self._memory(turn)
        self._user_name = turn.context.user.name
        status, reply = await self._respond(turn)
        await self._remember(status, reply)
        await asyncio.gather(*self._telling)  # delivered before the turn ends
        # Set last, so a query never shows a final status before the turn has finished.
        self._status, self._reply, self._stage = status, reply, "done"
        return TurnResult(
            turn_id=self._turn_id,
            status=self._status,
            classification=self._classification,
            reply=self._reply,
            actions=list(self._results.values()),
            hitl=self._outcomes,
            memory_events=self._memory_events,
        )

    async def _respond(self, turn: TurnRequest) -> tuple[TurnStatus, str | None]:
        """Stages 4-11: the turn's outcome and its reply."""
        try:
            feedback = await self._triage(turn)
            plan = await self._plan_with_human(turn, feedback)
            await self._resolve_and_execute(turn, plan)
            return TurnStatus.COMPLETED, await self._write_reply(turn, plan)
        except TurnExpired:
            return TurnStatus.EXPIRED, EXPIRED_REPLY.format(
                after=_duration(self._input.hitl_ttl_seconds)
            )
        except TurnStopped as stop:
            return stop.status, stop.reply

    async def _prepare(self) -> TurnRequest:
        """Stages 1, 2-3 and the first plan of a chat turn in one activity (version 2)."""
        self._stage = "context"
        request = PrepareRequest(
            turn_id=self._turn_id, message=self._message, classification=Classification.RESPOND
        )
        prepared: PreparedTurn = await self._activity(
            names.CONTEXT_MEMORY_AND_PLAN,
            request,
            PreparedTurn,
            "context, memory and plan: profile, recent messages, latest actions; memory hot path"
            " and retrieval; intent, risk, steps; the reply, remembered, when nothing follows",
            timeout=LLM_TIMEOUT,
            bounded=False,
        )
        self._memory_events.extend(prepared.memory.events)
        self._prepared, self._remembered = prepared.planned, prepared.remembered
        memory = prepared.memory.for_turn()
        return TurnRequest(
            turn_id=self._turn_id, message=self._message, context=prepared.context, memory=memory
        )

    async def _assemble_context(self) -> TurnContext:
        self._stage = "context"
        summary = "assemble context: profile, capabilities, recent messages, latest actions"
        context: TurnContext = await self._local_activity(
            names.ASSEMBLE_CONTEXT, self._message, TurnContext, summary
        )
        return context

    async def _memory(self, turn: TurnRequest) -> MemoryContext:
        """Stages 2-3: the hot path (semantic facts, profile line), then retrieval."""
        self._stage = "memory"
        if self._fast:
            stages: MemoryStages = await self._activity(
                names.MEMORY_STAGES,
                turn,
                MemoryStages,
                "memory: hot path (semantic facts, profile), then context (retrieve, rerank)",
            )
            hotpath, retrieved = stages.hotpath, stages.context
        else:
            hotpath = await self._activity(
                names.MEMORY_HOTPATH,
                turn,
                MemoryContext,
                "memory hot path: semantic facts, profile",
            )
            retrieved = await self._activity(
                names.MEMORY_CONTEXT, turn, MemoryContext, "memory context: retrieve and rerank"
            )
        stages = MemoryStages(hotpath=hotpath, context=retrieved)
        self._memory_events.extend(stages.events)
        return stages.for_turn()

    async def _triage(self, turn: TurnRequest) -> list[str]:
        """Stages 4-5: chat goes straight to respond; email is triaged, 'notify' asks a person."""
        self._stage = "triage"
        if self._message.channel is not Channel.EMAIL:
            await self._classify(Classification.RESPOND)
            return []
        decision = await self._activity(
            names.TRIAGE,
            TriageRequest(turn=turn),
            TriageDecision,
            f"triage email: {self._email_subject()}",
            timeout=LLM_TIMEOUT,
        )
        await self._classify(decision.classification)
        if decision.classification is Classification.IGNORE:
            raise TurnStopped(TurnStatus.IGNORED, None)
        if decision.classification is Classification.RESPOND:
            return [f"Respond to the email: {self._email_markdown()}"]
        return await self._notify_gate()

    async def _notify_gate(self) -> list[str]:
        """Respond (plan a reply), acknowledge (closed, no reply: `completed`, classification
        notify) or ignore (`ignored`); each teaches a lesson scoped to the email."""
        acknowledge = self._patched(PATCH_NOTIFY_ACKNOWLEDGE)
        answer = await self._ask(self._requests.notify(workflow.now(), acknowledge=acknowledge))
        choice = notify_choice(answer)
        update = notify_feedback(choice, self._message, self._turn_id, answer.text)
        await self._learn(update.namespace, update.decision, update.messages, update.email)
        if choice is NotifyChoice.IGNORE:
            raise TurnStopped(TurnStatus.IGNORED, None)
        if choice is NotifyChoice.ACKNOWLEDGE:
            raise TurnStopped(TurnStatus.COMPLETED, None)
        return [f"Respond to the email: {self._email_markdown()}", respond_note(answer.text)]

    async def _plan_with_human(self, turn: TurnRequest, feedback: list[str]) -> Plan:
        """Stages 6-8: plan, capability check, then clarify, or resolve (which one?) and approve,
        re-planning as told."""
        for _ in range(self._input.max_replans + 1):
            self._stage = "plan"
            plan = await self._plan(turn, feedback)
            self._check_capabilities(turn, plan)
            self._settled.clear()
            if plan_question(plan) is HitlKind.APPROVAL and self._patched(
                PATCH_RESOLVE_BEFORE_APPROVAL
            ):
                if self._patched(PATCH_ASK_DECIDED_BEFORE_RESOLVE):
                    self._patched(PATCH_THREAD_KNOWS_FIRST)  # `_ask` reads it remembered
                plan = await self._resolve_for_approval(turn, plan)
            request = self._requests.for_plan(workflow.now(), plan)
            if request is None:
                return plan
            answer = await self._ask(request)
            if request.kind is HitlKind.APPROVAL:
                approved = await self._apply_approval(plan, answer, feedback)
                if approved is not None:
                    return approved
                continue
            if answer.type == "ignore":
                if self._message.channel is Channel.EMAIL:
                    await self._learn(
                        "triage_preferences",
                        "question.ignore",
                        [self._email_markdown(), "The user ignored the assistant's question."],
                        self._message.email,
                    )
                raise TurnStopped(TurnStatus.COMPLETED, CANCELLED_REPLY)
            feedback = [*feedback, f"Clarification from the user: {answer.text}"]
        raise TurnStopped(
            TurnStatus.COMPLETED,
            "I still couldn't work out what to do. Could you say it another way?",
        )

    async def _plan(self, turn: TurnRequest, feedback: list[str]) -> Plan:
        """The plan; from version 1, a plan that answers alone brings its reply along."""
        request = PlanRequest(turn=turn, feedback=feedback, classification=self._classification)
        if self._input.version < 1:
            plan: Plan = await self._activity(
                names.PLAN, request, Plan, "plan: intent, risk, steps", timeout=LLM_TIMEOUT
            )
            return plan
        if self._prepared is not None and not feedback:  # made with the context (version 2)
            planned, self._prepared = self._prepared, None
            self._answer = planned.reply
            return planned.plan
        planned = await self._activity(
            names.PLAN_AND_ANSWER,
            request,
            PlannedTurn,
            "plan: intent, risk, steps; the reply when no step or question follows",
            timeout=LLM_TIMEOUT,
        )
        self._answer = planned.reply
        return planned.plan

    async def _apply_approval(
        self, plan: Plan, answer: Decision, feedback: list[str]
    ) -> Plan | None:
        """Accept → the plan; edit → the edited plan; ignore → stop; response → re-plan (None)."""
        step = approval_step(plan)
        assert step is not None
        namespace = preference_for(answer, step.capability)
        if answer.type == "accept":
            return plan
        if answer.type == "edit" and answer.edited is not None:
            if namespace:
                await self._learn(
                    namespace,
                    f"{step.capability}.edit",
                    [
                        f"Proposed {step.capability}: {step.args}",
                        f"Edited to: {answer.edited.args}",
                    ],
                )
            self._settled.pop(step.id, None)  # the edited args are resolved anew
            return _with_args(plan, step.id, answer.edited.args)
        if answer.type == "ignore":
            if namespace:
                await self._learn(
                    namespace,
                    f"{step.capability}.ignore",
                    [self._request_text(), _ignored(step)],
                    self._message.email,
                )
            raise TurnStopped(TurnStatus.COMPLETED, CANCELLED_REPLY)
        text = answer.text or ""
        if namespace:
            await self._learn(
                namespace,
                f"{step.capability}.response",
                [f"Proposed {step.capability}: {step.args}", f"User feedback: {text}"],
            )
        feedback.append(f"Feedback on the proposed {step.capability}: {text}")
        return None

    async def _resolve_for_approval(self, turn: TurnRequest, plan: Plan) -> Plan:
        """The plan with its step to approve resolved, so the approval shows what will be done:
        one match → the resolved args (kept, and executed as approved); several → the person
        chooses first; nothing found → the plan as it is (execution says what is missing)."""
        step = approval_step(plan)
        assert step is not None
        if step.depends_on:
            return plan  # it needs earlier steps' results: resolved after the approval
        self._stage = "resolve"
        resolution = await self._resolve(turn, step)
        self._stage = "plan"
        if resolution.status == "not_found":
            return plan
        args = resolution.args
        if resolution.status == "candidates":
            chosen = await self._choose(step, resolution.candidates)
            if chosen is None:
                raise TurnStopped(TurnStatus.COMPLETED, CANCELLED_REPLY)
            args = {**args, **chosen.args}
        self._settled[step.id] = args
        return _with_args(plan, step.id, {**step.args, **args})

    async def _choose(self, step: PlanStep, candidates: list[Candidate]) -> Candidate | None:
        """The candidate a person chooses (once per turn: a re-plan reuses it), None if ignored."""
        known = next((c for c in candidates if c.id in self._chosen), None)
        if known is not None:
            return known
        answer = await self._ask(self._requests.disambiguation(workflow.now(), step, candidates))
        if answer.type == "ignore" or not answer.choices:
            return None
        chosen = next(c for c in candidates if c.id == answer.choices[0])
        self._chosen.add(chosen.id)
        return chosen

    def _check_capabilities(self, turn: TurnRequest, plan: Plan) -> None:
        """Stage 7: a step that needs an unconnected capability gets a fixed reply (seed 002)."""
        missing = missing_capabilities(plan.steps, turn.context.user.capabilities)
        if missing:
            names_ = " and ".join(missing)
            raise TurnStopped(
                TurnStatus.BLOCKED,
                f"To do that I need access to your {names_}. "
                f"Connect {names_} first, then ask again.",
            )

    async def _resolve_and_execute(self, turn: TurnRequest, plan: Plan) -> None:
        """Stages 9-10: per dependency group, resolve in parallel, disambiguate, execute once."""
        try:
            groups = dependency_groups(plan.steps)
        except CyclicPlan as error:
            workflow.logger.warning("unrunnable plan: %s", error)
            raise TurnStopped(TurnStatus.FAILED, UNRUNNABLE_PLAN_REPLY) from None
        for group in groups:
            runnable = [s for s in group if self._dependencies_succeeded(s)]
            for skipped in (s for s in group if s not in runnable):
                self._results[skipped.id] = _failed(skipped, "skipped: a step it depends on failed")
            self._stage = "resolve"
            resolutions = await asyncio.gather(*(self._resolve(turn, s) for s in runnable))
            ready: list[tuple[PlanStep, dict[str, Any]]] = []
            for step, resolution in zip(runnable, resolutions, strict=True):
                args = await self._settle(step, resolution)
                if args is not None:
                    ready.append((step, args))
            self._stage = "execute"
            await asyncio.gather(*(self._execute(turn, s, a) for s, a in ready))

    def _dependencies_succeeded(self, step: PlanStep) -> bool:
        return all(self._results[d].success for d in step.depends_on if d in self._results)

    async def _resolve(self, turn: TurnRequest, step: PlanStep) -> StepResolution:
        """Entity resolution of a step; one resolved before its approval is not resolved again."""
        settled = self._settled.get(step.id)
        if settled is not None:
            return StepResolution(step_id=step.id, status="resolved", args=settled)
        request = ResolveRequest(
            turn_id=self._turn_id,
            user_id=self._message.user_id,
            step=step,
            timezone=turn.context.user.timezone,
            prior_results={d: self._results[d] for d in step.depends_on if d in self._results},
        )
        summary = f"resolve {step.id}: {step.capability}"
        if self._fast:  # a read: a local activity
            return await self._local_activity(names.RESOLVE_STEP, request, StepResolution, summary)
        return await self._activity(names.RESOLVE_STEP, request, StepResolution, summary)

    async def _settle(self, step: PlanStep, resolution: StepResolution) -> dict[str, Any] | None:
        """Resolved args, a person's choice among candidates, or None when nothing is left to do."""
        if resolution.status == "resolved":
            return resolution.args
        if resolution.status == "not_found":
            self._results[step.id] = _failed(step, resolution.message or "nothing matched")
            return None
        answer = await self._ask(
            self._requests.disambiguation(workflow.now(), step, resolution.candidates)
        )
        if answer.type == "ignore" or not answer.choices:
            self._results[step.id] = _failed(step, "cancelled by the user")
            return None
        chosen = next(c for c in resolution.candidates if c.id == answer.choices[0])
        return {**resolution.args, **chosen.args}

    async def _execute(self, turn: TurnRequest, step: PlanStep, args: dict[str, Any]) -> None:
        request = ExecuteRequest(
            turn_id=self._turn_id,
            user_id=self._message.user_id,
            thread_id=self._message.thread_id,
            step=step,
            args=args,
            idempotency_key=names.idempotency_key(self._turn_id, step.id),
            timezone=turn.context.user.timezone,
        )
        result = await self._activity(
            names.EXECUTE_STEP, request, ExecutionResult, f"execute {step.id}: {step.description}"
        )
        self._results[step.id] = result

    async def _write_reply(self, turn: TurnRequest, plan: Plan) -> str:
        self._stage = "respond"
        if self._answer is not None:  # written with the plan (`plan_and_answer`)
            return self._answer
        request = ReplyRequest(
            turn=turn,
            plan=plan,
            results=list(self._results.values()),
            classification=self._classification,
        )
        return await self._activity(
            names.WRITE_REPLY, request, str, "respond: join, format, write", timeout=LLM_TIMEOUT
        )

    async def _remember(self, status: TurnStatus, reply: str | None) -> None:
        """Stage 12: history, latest actions, episodic capture. Runs for every outcome."""
        self._stage = "remember"
        request = RememberRequest(
            turn_id=self._turn_id,
            message=self._message,
            reply=reply or "",
            results=list(self._results.values()),
            status=status,
            user_name=self._user_name,
        )
        remembered = self._remembered
        if remembered is not None and request == RememberRequest.answered_alone(
            self._turn_id, self._message, self._answer or "", self._user_name
        ):
            # version 2: a plan that answers alone was remembered with it, as this would
            self._memory_events.extend(remembered.remember + remembered.episodic_capture)
            return
        if self._fast:  # idempotent writes keyed by the turn: a local activity, then the turn ends
            stages: RememberStages = await self._local_activity(
                names.REMEMBER_STAGES,
                request,
                RememberStages,
                "remember: history and latest actions, then episodic capture",
            )
            self._memory_events.extend(stages.remember + stages.episodic_capture)
            return
        for activity, summary in (
            (names.REMEMBER_TURN, "remember: history and latest actions"),
            (names.EPISODIC_CAPTURE, "episodic capture"),
        ):
            events = await self._activity(activity, request, list[str], summary)
            self._memory_events.extend(events)

    # ----- human in the loop ------------------------------------------------------------------

    async def _ask(self, request: HitlRequest) -> Decision:
        """Wait for the answer until the request expires (timer from the first ask)."""
        self._decision = None
        # Patched: the thread learns of the question before anyone can see it, so a chat answer
        # always reaches this turn instead of starting a new one. Older histories showed it first.
        thread_first = self._patched(PATCH_THREAD_KNOWS_FIRST)
        if not thread_first:
            self._pending, self._status = request, TurnStatus.AWAITING_HUMAN
        workflow.upsert_search_attributes(
            [sa.AWAITING_HUMAN.value_set(True), sa.HITL_KIND.value_set(request.kind.value)]
        )
        workflow.set_current_details(current_details(request))
        await self._tell_thread(names.THREAD_HITL_OPENED_SIGNAL, request)
        self._pending, self._status = request, TurnStatus.AWAITING_HUMAN
        try:
            while self._decision is None:
                await workflow.wait_condition(
                    lambda: self._decision is not None or self._reasked,
                    timeout=max(request.expires_at - workflow.now(), timedelta(seconds=1)),
                    timeout_summary=f"{request.kind.value} expires",
                )
                if self._reasked:
                    self._reasked = False
                    await self._tell_thread(names.THREAD_HITL_OPENED_SIGNAL, self._pending)
        except TimeoutError:
            self._outcomes.append(
                HitlOutcome(hitl_id=request.hitl_id, kind=request.kind, status="expired")
            )
            raise TurnExpired() from None
        finally:
            self._pending = None
            self._status = TurnStatus.RUNNING
            workflow.upsert_search_attributes([sa.AWAITING_HUMAN.value_set(False)])
            workflow.set_current_details("")
            if self._patched(PATCH_CLOSE_UNAWAITED):
                self._telling.append(
                    asyncio.create_task(
                        self._tell_thread(names.THREAD_HITL_CLOSED_SIGNAL, request.hitl_id)
                    )
                )
            else:
                await self._tell_thread(names.THREAD_HITL_CLOSED_SIGNAL, request.hitl_id)
        decision = self._decision
        assert decision is not None
        self._outcomes.append(
            HitlOutcome(
                hitl_id=request.hitl_id, kind=request.kind, status="answered", decision=decision
            )
        )
        return decision

    async def _tell_thread(self, signal: str, arg: Any) -> None:
        """Keep the parent thread's view of the pending question current (for chat answers)."""
        parent = workflow.info().parent
        if parent is None:
            return
        handle = workflow.get_external_workflow_handle(parent.workflow_id)
        await handle.signal(signal, arg)

    async def _learn(
        self,
        namespace: PreferenceNamespace,
        decision: str,
        messages: list[str],
        email: EmailMessage | None = None,
    ) -> None:
        update = PreferenceUpdate(
            user_id=self._message.user_id,
            namespace=namespace,
            decision=decision,
            messages=messages,
            turn_id=self._turn_id,
            email=email,
        )
        events = await self._activity(
            names.UPDATE_PREFERENCES,
            update,
            list[str],
            f"learn {namespace} from {decision}",
            timeout=LLM_TIMEOUT,
        )
        self._memory_events.extend(events)

    # ----- small helpers --------------------------------------------------------------------

    async def _classify(self, classification: Classification) -> None:
        """Record the classification; upsert it unless the turn started with it (chat turns
        of threads with patch `chat-classified-at-start`)."""
        self._classification = classification
        started_with = workflow.info().typed_search_attributes.get(sa.CLASSIFICATION)
        if started_with != classification.value:
            workflow.upsert_search_attributes([sa.CLASSIFICATION.value_set(classification.value)])

    async def _activity(
        self,
        name: str,
        arg: Any,
        result_type: Any,
        summary: str,
        *,
        timeout: timedelta = STORE_TIMEOUT,
        bounded: bool | None = None,
    ) -> Any:
        """An LLM activity with its bounded policy; any other retries until done (`_until_done`),
        and so does one that is `bounded=False` (an LLM activity that also reads and writes the
        store, which must outlast a database outage)."""
        if bounded is None:
            bounded = timeout is LLM_TIMEOUT
        if bounded:
            return await workflow.execute_activity(
                name,
                arg,
                result_type=result_type,
                start_to_close_timeout=timeout,
                heartbeat_timeout=self._heartbeat_timeout(),
                retry_policy=LLM_RETRY,
                summary=summary[:200],
            )
        return await self._until_done(
            summary,
            lambda round_: workflow.execute_activity(
                name,
                arg,
                result_type=result_type,
                start_to_close_timeout=timeout,
                heartbeat_timeout=self._heartbeat_timeout(),
                retry_policy=round_policy(round_),
                summary=summary[:200],
            ),
        )

    def _patched(self, patch: str) -> bool:
        """Whether a patch's new code runs: always from version 1 (the input says so: no marker
        is recorded), else as the history's markers say. A patch added after version 1 calls
        `workflow.patched` itself, or comes with a version 2."""
        return self._input.version >= 1 or workflow.patched(patch)

    def _heartbeat_timeout(self) -> timedelta:
        """How long an activity may go without a heartbeat before the server retries it (a
        killed worker's attempt is retried within this; the worker heartbeats for it)."""
        return timedelta(seconds=self._input.heartbeat_seconds)

    async def _local_activity(self, name: str, arg: Any, result_type: Any, summary: str) -> Any:
        """A short, idempotent store read or write, run in the workflow task's worker (no
        server round trip), retried in rounds until done like any store activity."""
        return await self._until_done(
            summary,
            lambda round_: workflow.execute_local_activity(
                name,
                arg,
                result_type=result_type,
                start_to_close_timeout=STORE_TIMEOUT,
                retry_policy=round_policy(round_, local=True),
                summary=summary[:200],
            ),
        )

    async def _until_done(self, summary: str, attempt: Callable[[int], Awaitable[T]]) -> T:
        """Run bounded rounds of attempts until one succeeds, with a durable backoff between
        rounds and the last error shown meanwhile; a non-retryable failure propagates."""
        label = label_of(summary)
        rounds_failed = 0
        while True:
            try:
                result = await attempt(rounds_failed)
            except FailureError as error:
                if not round_spent(error):
                    raise
                rounds_failed += 1
                self._show_failure(label, failure_text(label, error))
                await workflow.sleep(backoff(rounds_failed), summary=f"retry {label}"[:200])
                continue
            if rounds_failed:
                self._show_failure(label, None)
            return result

    def _show_failure(self, label: str, error: str | None) -> None:
        """Record (or clear, with None) a stage's last error and show it in the current details."""
        self._failing.pop(label, None)
        if error is not None:
            self._failing[label] = error
            workflow.logger.warning("turn %s: %s", self._turn_id, error)
        last = self._last_error()
        workflow.set_current_details(retry_details(self._stage, last) if last else "")

    def _last_error(self) -> str | None:
        """The most recent error of a stage that is still failing."""
        return next(reversed(self._failing.values()), None)

    def _email_markdown(self) -> str:
        email = self._message.email
        return email.markdown() if email else self._message.text

    def _email_subject(self) -> str:
        return self._message.email.subject if self._message.email else self._message.text[:60]

    def _request_text(self) -> str:
        return self._email_markdown() if self._message.email else self._message.text


def _with_args(plan: Plan, step_id: str, args: dict[str, Any]) -> Plan:
    steps = [s.model_copy(update={"args": args}) if s.id == step_id else s for s in plan.steps]
    return plan.model_copy(update={"steps": steps})


def _failed(step: PlanStep, error: str) -> ExecutionResult:
    return ExecutionResult(
        step_id=step.id, capability=step.capability, success=False, summary=error, error=error
    )


def _ignored(step: PlanStep) -> str:
    return (
        f"The user ignored the proposed {step.capability} ({step.description}): do not propose it."
    )


def _duration(seconds: int) -> str:
    """'5 minutes', '1 minute', '15 seconds'."""
    if seconds % 60:
        return f"{seconds} seconds"
    minutes = seconds // 60
    return f"{minutes} minute" + ("" if minutes == 1 else "s")

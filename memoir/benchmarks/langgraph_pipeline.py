"""The baseline of `memoir bench turns`: a turn's stages as a LangGraph graph over PostgresSaver.

The nodes call the same domain functions as the activities, with the same `Deps` (stores, model,
tools, embedder), so a turn does the same work in both; only the orchestration differs:

    context → memory_hotpath → memory_context → [triage (email)] → plan → [resolve_execute] →
    reply → remember

The nodes call the activities' own methods (plain calls, outside any activity): `context`
activities/context.py's `assemble_context`, the memory nodes activities/memory.py's, `remember`
activities/remember.py's `remember_turn` then `episodic_capture`. The graph is compiled with
`AsyncPostgresSaver` in a schema of its own of the same Postgres, checkpointing every step before
the next one starts (`durability="sync"`, as Temporal records each activity's result before
scheduling the next). One LangGraph thread per conversation thread, as a chat app would. Where
Memoir would ask a person (a notify email, a question, an approval, a choice) the graph stops
with status `awaiting_human`: the benchmark's turns never get there.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from fastapi import APIRouter, FastAPI, Request
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel
from temporalio.client import Client

from activities.context import ContextActivities
from activities.deps import Deps
from activities.memory import MemoryActivities
from activities.remember import RememberActivities
from api.app import create_app
from api.deps import CurrentUser
from api.emails import EmailIn, incoming_email
from api.schemas import ChatMessageIn
from memoir.db import Pool
from memoir.models import (
    Channel,
    Classification,
    ExecuteRequest,
    ExecutionResult,
    IncomingMessage,
    MemoryContext,
    MemoryStages,
    Plan,
    PlanRequest,
    PlanStep,
    RememberRequest,
    ReplyRequest,
    ResolveRequest,
    TurnRequest,
    TurnStatus,
    names,
)
from memoir.models.plan import missing_capabilities
from memoir.planner import make_plan
from memoir.responder import write_reply
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.triage import triage_email
from workflows.hitl import plan_question
from workflows.schedule import dependency_groups

SCHEMA = "langgraph_bench"
Durability = Literal["sync", "async", "exit"]


class TurnState(TypedDict, total=False):
    """The graph's state: JSON values, so checkpoints hold what Temporal payloads hold."""

    turn_id: str
    message: dict[str, Any]
    turn: dict[str, Any]
    hotpath: dict[str, Any]
    classification: str | None
    feedback: list[str]
    plan: dict[str, Any] | None
    results: list[dict[str, Any]]
    status: str
    reply: str
    memory_events: list[str]


class LangGraphTurn(BaseModel):
    """What `POST /bench/langgraph/...` answers once the graph has run the turn."""

    turn_id: str
    status: str
    reply: str | None


def _json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


class TurnGraph:
    """The nodes over one set of dependencies; `compile` builds the graph."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps
        self.contexts, self.memory = ContextActivities(deps), MemoryActivities(deps)
        self.remembering = RememberActivities(deps)

    def compile(self, checkpointer: AsyncPostgresSaver) -> Any:
        graph = StateGraph(TurnState)
        graph.add_node("context", self.context)
        graph.add_node("memory_hotpath", self.memory_hotpath)
        graph.add_node("memory_context", self.memory_context)
        graph.add_node("triage", self.triage)
        graph.add_node("plan", self.plan)
        graph.add_node("resolve_execute", self.resolve_execute)
        graph.add_node("reply", self.reply)
        graph.add_node("remember", self.remember)
        graph.add_edge(START, "context")
        graph.add_edge("context", "memory_hotpath")
        graph.add_edge("memory_hotpath", "memory_context")
        graph.add_conditional_edges("memory_context", _after_memory, ["triage", "plan"])
        graph.add_conditional_edges("triage", _after_triage, ["plan", "remember", END])
        graph.add_conditional_edges(
            "plan", _after_plan, ["resolve_execute", "reply", "remember", END]
        )
        graph.add_edge("resolve_execute", "reply")
        graph.add_edge("reply", "remember")
        graph.add_edge("remember", END)
        return graph.compile(checkpointer=checkpointer)

    # ----- nodes -------------------------------------------------------------------------------

    async def context(self, state: TurnState) -> TurnState:
        message = IncomingMessage.model_validate(state["message"])
        context = await self.contexts.assemble_context(message)
        turn = TurnRequest(turn_id=state["turn_id"], message=message, context=context)
        return {
            "turn": _json(turn),
            "classification": None,
            "feedback": [],
            "plan": None,
            "results": [],
            "status": TurnStatus.RUNNING.value,
            "reply": "",
            "memory_events": [],
        }

    async def memory_hotpath(self, state: TurnState) -> TurnState:
        hotpath = await self.memory.memory_hotpath(TurnRequest.model_validate(state["turn"]))
        return {"hotpath": _json(hotpath)}

    async def memory_context(self, state: TurnState) -> TurnState:
        turn = TurnRequest.model_validate(state["turn"])
        hotpath = MemoryContext.model_validate(state["hotpath"])
        stages = MemoryStages(hotpath=hotpath, context=await self.memory.memory_context(turn))
        turn.memory = stages.for_turn()
        events = stages.events
        classification = None if turn.message.channel is Channel.EMAIL else Classification.RESPOND
        return {"turn": _json(turn), "memory_events": events, "classification": classification}

    async def triage(self, state: TurnState) -> TurnState:
        message = IncomingMessage.model_validate(state["message"])
        assert message.email is not None
        instructions = await self.deps.stores.preferences.get_memory(
            message.user_id, "triage_preferences"
        )
        decision = await triage_email(self.deps.llm, message.email, instructions)
        update: TurnState = {"classification": decision.classification.value}
        if decision.classification is Classification.IGNORE:
            update["status"] = TurnStatus.IGNORED.value
        elif decision.classification is Classification.NOTIFY:
            update["status"] = TurnStatus.AWAITING_HUMAN.value
        else:
            update["feedback"] = [f"Respond to the email: {message.email.markdown()}"]
        return update

    async def plan(self, state: TurnState) -> TurnState:
        turn = TurnRequest.model_validate(state["turn"])
        capabilities = turn.context.user.capabilities
        request = PlanRequest(turn=turn, feedback=state.get("feedback", []))
        plan = await make_plan(self.deps.llm, request, capabilities)
        missing = missing_capabilities(plan.steps, capabilities)
        if missing:
            names_ = " and ".join(missing)
            reply = f"To do that I need access to your {names_}. Connect {names_} first."
            return {"plan": _json(plan), "status": TurnStatus.BLOCKED.value, "reply": reply}
        if plan_question(plan) is not None:
            return {"plan": _json(plan), "status": TurnStatus.AWAITING_HUMAN.value}
        return {"plan": _json(plan)}

    async def resolve_execute(self, state: TurnState) -> TurnState:
        """Stages 9-10: per dependency group, resolve in parallel, then execute in parallel."""
        turn = TurnRequest.model_validate(state["turn"])
        plan = Plan.model_validate(state["plan"])
        results: dict[str, ExecutionResult] = {}
        for group in dependency_groups(plan.steps):
            runnable = [s for s in group if all(results[d].success for d in s.depends_on)]
            for skipped in (s for s in group if s not in runnable):
                results[skipped.id] = _failed(skipped, "skipped: a step it depends on failed")
            resolutions = await asyncio.gather(
                *(self._resolve(turn, step, results) for step in runnable)
            )
            ready: list[tuple[PlanStep, dict[str, Any]]] = []
            for step, resolution in zip(runnable, resolutions, strict=True):
                if resolution.status == "resolved":
                    ready.append((step, resolution.args))
                else:  # not found, or a choice a person would make: not part of the benchmark
                    results[step.id] = _failed(step, resolution.message or resolution.status)
            executed = await asyncio.gather(*(self._execute(turn, s, a) for s, a in ready))
            results.update((r.step_id, r) for r in executed)
        return {"results": [_json(r) for r in results.values()]}

    async def reply(self, state: TurnState) -> TurnState:
        classification = state.get("classification")
        request = ReplyRequest(
            turn=TurnRequest.model_validate(state["turn"]),
            plan=Plan.model_validate(state["plan"]),
            results=[ExecutionResult.model_validate(r) for r in state.get("results", [])],
            classification=Classification(classification) if classification else None,
        )
        text = await write_reply(self.deps.llm, request)
        return {"reply": text, "status": TurnStatus.COMPLETED.value}

    async def remember(self, state: TurnState) -> TurnState:
        request = RememberRequest(
            turn_id=state["turn_id"],
            message=IncomingMessage.model_validate(state["message"]),
            reply=state.get("reply", ""),
            results=[ExecutionResult.model_validate(r) for r in state.get("results", [])],
            status=TurnStatus(state["status"]),
            user_name=state["turn"]["context"]["user"]["name"],  # as the workflow passes it
        )
        events = await self.remembering.remember_turn(request)
        events += await self.memory.episodic_capture(request)
        return {"memory_events": [*state.get("memory_events", []), *events]}

    # ----- steps -----------------------------------------------------------------------------

    async def _resolve(
        self, turn: TurnRequest, step: PlanStep, results: dict[str, ExecutionResult]
    ) -> Any:
        request = ResolveRequest(
            turn_id=turn.turn_id,
            user_id=turn.message.user_id,
            step=step,
            timezone=turn.context.user.timezone,
            prior_results={d: results[d] for d in step.depends_on if d in results},
        )
        return await self.deps.tools.resolve(request)

    async def _execute(
        self, turn: TurnRequest, step: PlanStep, args: dict[str, Any]
    ) -> ExecutionResult:
        request = ExecuteRequest(
            turn_id=turn.turn_id,
            user_id=turn.message.user_id,
            thread_id=turn.message.thread_id,
            step=step,
            args=args,
            idempotency_key=names.idempotency_key(turn.turn_id, step.id),
            timezone=turn.context.user.timezone,
        )
        result = await self.deps.tools.execute(request)
        return result.model_copy(update={"args": args})


def _after_memory(state: TurnState) -> str:
    return "triage" if state["message"]["channel"] == Channel.EMAIL.value else "plan"


def _after_triage(state: TurnState) -> str:
    status = state.get("status")
    if status == TurnStatus.IGNORED.value:
        return "remember"
    return END if status == TurnStatus.AWAITING_HUMAN.value else "plan"


def _after_plan(state: TurnState) -> str:
    status = state.get("status")
    if status == TurnStatus.BLOCKED.value:
        return "remember"
    if status == TurnStatus.AWAITING_HUMAN.value:
        return END
    plan = state.get("plan") or {}
    return "resolve_execute" if plan.get("steps") else "reply"


def _failed(step: PlanStep, error: str) -> ExecutionResult:
    return ExecutionResult(
        step_id=step.id, capability=step.capability, success=False, summary=error, error=error
    )


class LangGraphPipeline:
    """The compiled graph, its checkpointer's pool, and how one turn runs through it."""

    def __init__(self, graph: Any, pool: AsyncConnectionPool[Any], durability: Durability) -> None:
        self.graph = graph
        self.pool = pool
        self.durability: Durability = durability

    @classmethod
    async def open(
        cls, deps: Deps, database_url: str, *, durability: Durability = "sync", max_size: int = 10
    ) -> LangGraphPipeline:
        """Create the checkpointer's schema and tables, and compile the graph over them."""
        async with deps.stores.pool.connection() as conn:
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
            database_url,
            min_size=1,
            max_size=max_size,
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "options": f"-c search_path={SCHEMA}",
            },
            open=False,
            name="langgraph-bench",
        )
        await pool.open(wait=True)
        checkpointer = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await checkpointer.setup()
        return cls(TurnGraph(deps).compile(checkpointer), pool, durability)

    async def run(self, message: IncomingMessage) -> LangGraphTurn:
        """Run one turn to its end; the LangGraph thread is the conversation's."""
        turn_id = f"lg:{message.user_id}:{message.thread_id}:{message.message_id}"
        config = {"configurable": {"thread_id": f"{message.user_id}:{message.thread_id}"}}
        state = await self.graph.ainvoke(
            {"turn_id": turn_id, "message": _json(message)},
            config=config,
            durability=self.durability,
        )
        return LangGraphTurn(turn_id=turn_id, status=state["status"], reply=state.get("reply"))

    async def close(self) -> None:
        await self.pool.close()


async def checkpoint_cost(pool: Pool, thread_ids: list[str]) -> dict[str, int]:
    """Rows and bytes the checkpointer holds for these LangGraph threads (all three tables)."""
    rows = bytes_ = 0
    async with pool.connection() as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cursor = await conn.execute(
                f"SELECT count(*) AS n, coalesce(sum(pg_column_size(t.*)), 0) AS size "
                f"FROM {SCHEMA}.{table} t WHERE thread_id = ANY(%s)",
                (thread_ids,),
            )
            row = await cursor.fetchone()
            assert row is not None
            rows += int(row["n"])
            bytes_ += int(row["size"])
    return {"rows": rows, "bytes": bytes_}


async def drop_schema(pool: Pool) -> None:
    async with pool.connection() as conn:
        await conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


# ----- the HTTP route --------------------------------------------------------------------------


def _pipeline(request: Request) -> LangGraphPipeline:
    pipeline: LangGraphPipeline | None = getattr(request.app.state, "langgraph", None)
    if pipeline is None:
        raise RuntimeError("the LangGraph pipeline is not open yet")
    return pipeline


router = APIRouter(prefix="/bench/langgraph", tags=["benchmark"], include_in_schema=False)


@router.post("/messages")
async def langgraph_message(
    body: ChatMessageIn, user: CurrentUser, request: Request
) -> LangGraphTurn:
    """A chat message run through the LangGraph graph; answers when the turn has ended."""
    return await _pipeline(request).run(body.incoming(user.user_id))


@router.post("/emails")
async def langgraph_email(email: EmailIn, user: CurrentUser, request: Request) -> LangGraphTurn:
    """An email run through the LangGraph graph; answers when the turn has ended."""
    message = incoming_email(user.user_id, email, received_at=datetime.now(UTC))
    return await _pipeline(request).run(message)


class BenchApp:
    """Builds the real API plus the LangGraph routes, and keeps the app to attach the pipeline."""

    def __init__(self) -> None:
        self.app: FastAPI | None = None

    def __call__(
        self, *, settings: Settings, client: Client, stores: Stores
    ) -> FastAPI:  # the stack's AppFactory
        self.app = create_app(settings, client=client, stores=stores)
        self.app.include_router(router)
        return self.app

    def attach(self, pipeline: LangGraphPipeline) -> None:
        assert self.app is not None, "the stack has not built the app"
        self.app.state.langgraph = pipeline

"""The `memoir` command line.

The CLI is the composition root: its commands import the worker, the API and the stack lazily,
so `memoir` itself stays below them in the layering.
"""

import asyncio
import contextlib
import json
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import httpx
import typer
from rich.console import Console
from rich.table import Column, Table

from memoir.settings import Settings, get_settings
from memoir.shutdown import run_until_stopped

if TYPE_CHECKING:
    from memoir.memory.engine import MemoryEngine
    from memoir.memory.evaluation import EvalReport, Scenario, ScenarioResult
    from memoir.memory.recall_eval import Conversation, RecallReport, TurnStages
    from memoir.models import UserProfile
    from memoir.stores import Stores
    from memoir.triage_eval import LabelledEmail, TriageEvalReport, TriageStages
    from temporal.stack import Stack
    from temporal.worker_processes import WorkerProcesses

app = typer.Typer(help="Memoir: a durable assistant runtime on Temporal.", no_args_is_help=True)
users_app = typer.Typer(help="Manage users and their bearer tokens.", no_args_is_help=True)
app.add_typer(users_app, name="users")
eval_app = typer.Typer(help="Evaluate Memoir on scripted scenarios.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
kb_app = typer.Typer(help="The knowledge base behind knowledge.search.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
contacts_app = typer.Typer(help="A user's contacts, behind contacts.lookup.", no_args_is_help=True)
app.add_typer(contacts_app, name="contacts")
# A table needs room: when output is not a terminal (CI, a pipe), rich would assume 80 columns.
console = Console(width=None if Console().is_terminal else 160)

ApiUrl = Annotated[str, typer.Option(envvar="MEMOIR_API_URL", help="Base URL of the API.")]
Token = Annotated[str, typer.Option(envvar="MEMOIR_TOKEN", help="Your bearer token.")]


def _bad_input(error: Exception) -> NoReturn:
    """Say what is wrong with an input file (in red, on stderr) and exit 1."""
    Console(stderr=True).print(str(error), style="red", markup=False, highlight=False)
    raise typer.Exit(1) from None


def _progress_console(as_json: bool) -> Console:
    """Where an eval prints its progress: stderr when stdout carries the JSON report."""
    return Console(stderr=True) if as_json else console


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a command; Ctrl-C, SIGTERM and SIGHUP stop it alike, its cleanups (`finally`) run."""
    with contextlib.suppress(KeyboardInterrupt):
        return run_until_stopped(coro)


@app.command()
def dev(
    workers: Annotated[
        int,
        typer.Option(
            min=0,
            help="Worker processes (`memoir worker` each) beside the API; 0: one worker inside "
            "this process.",
        ),
    ] = 0,
) -> None:
    """Start the embedded stack (Postgres, Temporal + Web UI, worker, API) until Ctrl-C/SIGTERM."""
    _run(_dev(_traced(get_settings(), "memoir"), workers))


async def _dev(settings: Settings, workers: int = 0) -> None:
    from api.app import create_app
    from temporal.stack import dev_user, start_stack

    stack = await start_stack(
        settings, app_factory=create_app, say=console.print, worker=workers == 0
    )
    processes = None
    try:
        if workers:
            processes = await _start_worker_processes(stack, workers)
        user, token = await dev_user(stack.stores)
        console.print("\n[bold green]Memoir is up.[/]")
        _show_addresses(stack, f"Dev user [bold]{user.user_id}[/]", token)
        console.print("Ctrl-C (or SIGTERM) stops everything.")
        await (processes.watch() if processes else asyncio.Event().wait())
    finally:
        if processes is not None:
            await asyncio.to_thread(processes.stop)
        await stack.stop()


async def _start_worker_processes(stack: "Stack", count: int) -> "WorkerProcesses":
    """`count` `memoir worker` processes on the stack's database and Temporal, polling."""
    from temporal.worker_processes import WorkerProcesses, worker_environment

    settings = stack.settings
    env = worker_environment(settings, stack.database_url)
    processes = WorkerProcesses(count, env, settings.data_dir / "workers", say=console.print)
    processes.start()
    try:
        pids = ", ".join(map(str, processes.pids()))
        console.print(f"{count} worker processes (pids {pids}), logs in {processes.log_dir}")
        if not await processes.wait_polling(stack.client, settings.task_queue, timeout=180):
            console.print("[yellow]not every worker polls after 180 s: see their logs[/]")
    except BaseException:
        await asyncio.to_thread(processes.stop)
        raise
    return processes


def _show_addresses(stack: "Stack", who: str, token: str) -> None:
    """Where to look while the stack runs: the Web UI, the API, the inbox page, a token."""
    api = stack.api_url
    console.print(
        f"Temporal Web UI: {stack.temporal_ui}   frontend: {stack.settings.temporal_address}"
    )
    console.print(f"API: {api}/docs   Inbox page: {api}/inbox (paste the token, Save token)")
    console.print(f"{who}, token: [bold]{token}[/]   data: {stack.settings.data_dir}")
    console.print(f"  export MEMOIR_TOKEN={token} MEMOIR_API_URL={api}")
    console.print(
        f'Decoded payloads in the Web UI: log in at {api}/codec/login, then tick "Include '
        "cross-origin credentials\" in the UI's codec server settings (docs/security.md)."
    )


@app.command()
def demo(
    interactive: Annotated[bool, typer.Option(help="Ask me instead of answering.")] = False,
    hitl_ttl: Annotated[
        int, typer.Option(help="Seconds a question waits (short, so expiry shows).")
    ] = 15,
    exit_after: Annotated[
        bool,
        typer.Option(
            "--exit", help="Stop the stack after the tables instead of keeping it up (scripts)."
        ),
    ] = False,
) -> None:
    """The main job: run the sample inbox through the system, show what happened, keep the stack
    up to look at the turns (Web UI, API, inbox page) until Ctrl-C or SIGTERM."""
    settings = get_settings().model_copy(update={"hitl_ttl_seconds": hitl_ttl})
    _run(_demo(_traced(settings, "memoir"), interactive, exit_after=exit_after))


async def _demo(settings: Settings, interactive: bool, *, exit_after: bool = False) -> None:
    from api.app import create_app
    from memoir.demo import load_inbox, outcome_table, run_demo
    from temporal.stack import start_stack

    stack = await start_stack(settings, app_factory=create_app, say=console.print)
    try:
        user, token = await stack.stores.users.create_user(
            "Demo",
            timezone="Europe/Paris",
            capabilities=("reminders", "email", "calendar", "contacts"),
        )
        for contact in load_inbox().contacts:
            await stack.stores.contacts.add(user.user_id, contact.name, contact.email)
        console.print(
            f"demo user {user.user_id}; questions expire after {settings.hitl_ttl_seconds}s"
        )
        assert stack.api_url is not None
        rows = await run_demo(
            stack.api_url, token, console, interactive=interactive, ttl=settings.hitl_ttl_seconds
        )
        console.print(outcome_table(rows))
        await _show_learning(stack.stores, user.user_id)
        console.print("\n[bold green]Demo done.[/] Its turns, while the stack runs:")
        _show_addresses(stack, f"Demo user [bold]{user.user_id}[/]", token)
        if exit_after:
            console.print(
                "Stopping (--exit). `memoir dev` on the same data folder shows these turns again "
                "in the Web UI; the token above stays valid."
            )
            return
        console.print("The stack stays up: Ctrl-C (or SIGTERM) stops everything.")
        await asyncio.Event().wait()
    finally:
        await stack.stop()


async def _show_learning(stores: Any, user_id: str) -> None:
    memories = await stores.memories.list(user_id, limit=20)
    if memories:
        console.print(f"[bold]memories[/] ({len(memories)}):")
        for memory in memories:
            console.print(f"  {memory.kind.value:<9} {memory.category:<12} {memory.summary}")
    for namespace in ("triage_preferences", "response_preferences", "cal_preferences"):
        versions = await stores.preferences.history(user_id, namespace)
        learned = [v for v in versions if v.decision != "default"]
        if learned:
            console.print(f"[bold]{namespace}[/] learned from {len(learned)} decision(s):")
            console.print(versions[0].content)


@app.command()
def worker() -> None:
    """Run a worker against TEMPORAL_ADDRESS and the database (embedded if none is set)."""
    from temporal.worker import run_worker

    logging.basicConfig(level=logging.INFO)
    settings = _traced(get_settings(), "memoir-worker")
    _run(run_worker(settings, _database_url(settings)))


@app.command()
def api() -> None:
    """Serve the HTTP API (uvicorn) on MEMOIR_API_HOST:MEMOIR_API_PORT."""
    import uvicorn

    settings = get_settings()
    os.environ.setdefault("MEMOIR_DATABASE_URL", _database_url(settings))
    get_settings.cache_clear()
    _traced(settings, "memoir-api")
    uvicorn.run("api.app:create_app", factory=True, host=settings.api_host, port=settings.api_port)


def _traced(settings: Settings, service: str) -> Settings:
    """Set up this process's tracing and metrics (`memoir.telemetry.configure`) for `service`."""
    from memoir.telemetry import configure

    configure(settings, service)
    return settings


@app.command()
def trace(
    turn_id: str,
    sql: Annotated[bool, typer.Option(help="Show the database queries' spans.")] = True,
) -> None:
    """Print the span tree of a turn from the local exporter's file (MEMOIR_DATA_DIR/traces)."""
    from memoir.telemetry.local import read_spans, spans_file
    from memoir.telemetry.tree import render_turn_trace

    path = spans_file(get_settings().data_dir)
    lines = render_turn_trace(read_spans(path), turn_id, sql=sql)
    if not lines:
        _bad_input(ValueError(f"no spans of turn {turn_id} in {path}"))
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _database_url(settings: Settings) -> str:
    if settings.database_url:
        return settings.database_url
    from memoir.embedded_pg import start_embedded_postgres

    return start_embedded_postgres(settings.data_dir).url


@users_app.command("create")
def users_create(
    name: str,
    timezone: Annotated[str, typer.Option(help="IANA timezone, e.g. Europe/Paris.")] = "UTC",
    capability: Annotated[
        list[str] | None, typer.Option(help="Connected capability (repeatable).")
    ] = None,
) -> None:
    """Create a user and print its bearer token (shown once)."""

    async def create() -> None:
        async with _stores() as stores:
            user, token = await stores.users.create_user(
                name, timezone=timezone, capabilities=capability or ["reminders"]
            )
            await _audit_cli(stores, user.user_id, "issue_token", "token")
        console.print(f"user {user.user_id} ({', '.join(user.capabilities)})")
        print(token)

    _run(create())


@users_app.command("list")
def users_list() -> None:
    """List users."""

    async def show() -> None:
        async with _stores() as stores:
            for user in await stores.users.list_users():
                console.print(f"{user.user_id}\t{user.name}\t{user.timezone}\t{user.capabilities}")

    _run(show())


async def _audit_cli(stores: "Stores", user_id: str, action: str, kind: str) -> None:
    """The audit log's entry for a change made from the CLI (by the operator: 'system')."""
    from memoir.audit import AuditAction, AuditLog

    log = AuditLog(stores.pool)
    await log.record(user_id, AuditAction(action), kind, actor="system", via="cli")


def _change_capabilities(user_id: str, names: list[str], *, connect: bool) -> None:
    from memoir.models.plan import CAPABILITY_FAMILIES, unknown_capabilities

    unknown = unknown_capabilities(names)
    if unknown:
        raise typer.BadParameter(
            f"unknown capabilities: {', '.join(unknown)} (known: {', '.join(CAPABILITY_FAMILIES)})"
        )

    async def change() -> None:
        async with _stores() as stores:
            user = await stores.users.get_user(user_id)
            if user is None:
                raise typer.BadParameter(f"no user {user_id!r} (see `memoir users list`)")
            if connect:
                caps = [*user.capabilities, *names]
            else:
                caps = [c for c in user.capabilities if c not in names]
            user = await stores.users.set_capabilities(user_id, caps)
            await _audit_cli(stores, user_id, "change", "capabilities")
        console.print(f"user {user.user_id} ({', '.join(user.capabilities) or 'none'})")

    _run(change())


@users_app.command("connect")
def users_connect(
    user_id: str,
    capability: Annotated[list[str], typer.Argument(help="Capability families to connect.")],
) -> None:
    """Connect capability families (reminders, email, calendar, contacts, knowledge, notes,
    handoff) for a user."""
    _change_capabilities(user_id, capability, connect=True)


@users_app.command("disconnect")
def users_disconnect(
    user_id: str,
    capability: Annotated[list[str], typer.Argument(help="Capability families to disconnect.")],
) -> None:
    """Disconnect capability families for a user."""
    _change_capabilities(user_id, capability, connect=False)


@kb_app.command("ingest")
def kb_ingest(
    path: Annotated[Path, typer.Argument(help="A .md/.txt file, or a folder of them.")],
    user: Annotated[str, typer.Option("--user", help="The user id the documents belong to.")],
) -> None:
    """Chunk, embed and store documents; unchanged files are skipped, changed ones replaced."""
    from memoir.embeddings import get_embedder
    from memoir.knowledge import KnowledgeStore, ingest_path

    async def ingest() -> None:
        async with _stores() as stores:
            if await stores.users.get_user(user) is None:
                raise typer.BadParameter(f"no user {user!r} (see `memoir users list`)")

            def progress(index: int, total: int, file: Path, outcome: str, doc: Any) -> None:
                console.print(f"[{index}/{total}] {outcome:9} {doc.title} ({doc.chunks} chunks)")

            report = await ingest_path(
                path,
                user,
                KnowledgeStore(stores.pool),
                get_embedder(get_settings()),
                progress,
            )
        console.print(
            f"{report.count('added')} added, {report.count('replaced')} replaced, "
            f"{report.count('unchanged')} unchanged"
        )

    _run(ingest())


@kb_app.command("list")
def kb_list(
    user: Annotated[str, typer.Option("--user", help="The user id.")],
) -> None:
    """List a user's ingested documents."""
    from memoir.knowledge import KnowledgeStore

    async def show() -> None:
        async with _stores() as stores:
            documents = await KnowledgeStore(stores.pool).list_documents(user)
        table = Table("title", "chunks", "ingested", "path", title=f"documents of {user}")
        for d in documents:
            table.add_row(d.title, str(d.chunks), f"{d.created_at:%Y-%m-%d %H:%M}", d.path)
        console.print(table)

    _run(show())


@contacts_app.command("import")
def contacts_import(
    path: Annotated[Path, typer.Argument(help="A vCard (.vcf) or CSV (name,email,phone) file.")],
    user: Annotated[str, typer.Option("--user", help="The user id the contacts belong to.")],
) -> None:
    """Import contacts; one bad card or row and nothing is imported (each problem is listed)."""
    from memoir.contacts_import import ContactImportError, read_contacts

    try:
        contacts, source = read_contacts(path)
    except (ContactImportError, OSError, UnicodeDecodeError) as error:
        console.print(f"[red]{error}[/]")
        raise typer.Exit(1) from None

    async def store() -> None:
        async with _stores() as stores:
            if await stores.users.get_user(user) is None:
                raise typer.BadParameter(f"no user {user!r} (see `memoir users list`)")
            stored = await stores.contacts.add_many(user, contacts, source=source)
        console.print(f"{len(stored)} contact(s) imported from {path.name} for {user}")

    _run(store())


@contacts_app.command("list")
def contacts_list(user: Annotated[str, typer.Option("--user", help="The user id.")]) -> None:
    """List a user's contacts."""

    async def show() -> None:
        async with _stores() as stores:
            contacts = await stores.contacts.list(user)
        table = Table("name", "email", "phone", "source", title=f"contacts of {user}")
        for c in contacts:
            table.add_row(c.name, c.email, c.phone, c.source)
        console.print(table)

    _run(show())


@contextlib.asynccontextmanager
async def _stores() -> Any:
    from memoir.db import migrate, open_pool
    from memoir.stores import Stores

    pool = await open_pool(_database_url(get_settings()))
    try:
        await migrate(pool)
        yield Stores.configured(pool, get_settings())
    finally:
        await pool.close()


def _http(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def _ok(response: httpx.Response) -> Any:
    """The JSON body of a successful response; exit 1 printing the error otherwise."""
    if response.status_code >= 400:
        console.print(f"[red]{response.status_code}[/] {response.text}")
        raise typer.Exit(1)
    return response.json()


def _show(response: httpx.Response) -> None:
    console.print_json(json.dumps(_ok(response)))


@app.command()
def send(
    text: str,
    thread: Annotated[str, typer.Option(help="Thread id.")] = "cli",
    message_id: Annotated[str | None, typer.Option(help="Message id (default: random).")] = None,
    url: ApiUrl = "http://127.0.0.1:8000",
    token: Token = "",
) -> None:
    """Send a chat message to a thread."""
    import uuid

    body = {"thread_id": thread, "message_id": message_id or uuid.uuid4().hex, "text": text}
    with _http(url, token) as client:
        _show(client.post("/v1/messages", json=body))


@app.command()
def inbox(url: ApiUrl = "http://127.0.0.1:8000", token: Token = "") -> None:
    """List your pending questions."""
    with _http(url, token) as client:
        _show(client.get("/v1/inbox"))


@app.command()
def answer(
    hitl_id: str,
    kind: Annotated[
        str,
        typer.Argument(help="accept (acknowledge, for a notification), ignore, response or edit."),
    ],
    args: Annotated[
        str | None, typer.Argument(help="Text, or JSON {action, args} for edit.")
    ] = None,
    url: ApiUrl = "http://127.0.0.1:8000",
    token: Token = "",
) -> None:
    """Answer a pending question through the inbox endpoint. A notification takes acknowledge
    ("seen, thanks": notifying was right), ignore (don't show me emails like it) or response."""
    payload: dict[str, Any] = {"type": "accept" if kind == "acknowledge" else kind}
    if args is not None:
        payload["args"] = json.loads(args) if kind == "edit" else args
    with _http(url, token) as client:
        _show(client.post(f"/v1/inbox/{hitl_id}", json=payload))


@app.command()
def turn(turn_id: str, url: ApiUrl = "http://127.0.0.1:8000", token: Token = "") -> None:
    """Show a turn's status, question, reply and actions."""
    with _http(url, token) as client:
        _show(client.get(f"/v1/turns/{turn_id}"))


@app.command()
def memories(
    kind: Annotated[str | None, typer.Option(help="semantic or episodic.")] = None,
    query: Annotated[str | None, typer.Option(help="Search by meaning.")] = None,
    limit: Annotated[int, typer.Option(help="How many (1-100).")] = 20,
    url: ApiUrl = "http://127.0.0.1:8000",
    token: Token = "",
) -> None:
    """List your memories, newest first, or search them by meaning."""
    params: dict[str, Any] = {"limit": limit}
    if kind:
        params["kind"] = kind
    if query:
        params["query"] = query
    with _http(url, token) as client:
        body = _ok(client.get("/v1/memories", params=params))
    table = Table("id", "kind", "category", "summary", "importance", "pinned", "similarity")
    for m in body["items"]:
        similarity = "" if m["similarity"] is None else f"{m['similarity']:.3f}"
        importance, pinned = f"{m['importance']:.2f}", "yes" if m["pinned"] else ""
        table.add_row(
            m["id"], m["kind"], m["category"], m["summary"], importance, pinned, similarity
        )
    console.print(table)


@app.command()
def preferences(
    namespace: Annotated[str, typer.Argument(help="triage / response / cal _preferences.")],
    history: Annotated[bool, typer.Option(help="Every version with its diff.")] = False,
    url: ApiUrl = "http://127.0.0.1:8000",
    token: Token = "",
) -> None:
    """Show a preference profile, or its versions with what each changed."""
    with _http(url, token) as client:
        if not history:
            current = _ok(client.get(f"/v1/preferences/{namespace}"))
            console.print(f"[bold]{namespace}[/] v{current['version']} ({current['decision']})")
            console.print(current["content"], markup=False, highlight=False)
            return
        body = _ok(client.get(f"/v1/preferences/{namespace}/history"))
    for version in body["versions"]:
        turn = f" turn {version['turn_id']}" if version["turn_id"] else ""
        console.print(
            f"[bold]v{version['version']}[/] {version['decision']}{turn} {version['created_at']}"
        )
        console.print(version["diff"] or "(first version)", markup=False, highlight=False)


@eval_app.command("memory")
def eval_memory(
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    scenario: Annotated[
        list[str] | None, typer.Option(help="Only this scenario (repeatable).")
    ] = None,
    file: Annotated[
        Path | None, typer.Option(help="Scenarios file (default: the bundled set).")
    ] = None,
) -> None:
    """Scripted conversations through the memory engine on a throwaway Postgres: merge-decision
    accuracy and retrieval hit rate, per scenario and overall."""
    from memoir.memory.evaluation import load_scenarios

    scenarios = load_scenarios(file, scenario or ())
    say = _progress_console(as_json)

    def progress(result: "ScenarioResult") -> None:
        mark = "[yellow]✗[/]" if result.failures() else "[green]✓[/]"
        decisions, recalls = len(result.decisions), len(result.recalls)
        say.print(
            f"{mark} {result.name}: {result.correct}/{decisions} decisions, "
            f"{result.hits}/{recalls} recalls"
        )

    say.print(f"memory eval: {len(scenarios)} scenarios, LLM {get_settings().llm_provider}")
    report: EvalReport = _run(_eval_memory(get_settings(), scenarios, progress))
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
        return
    console.print(_eval_table(report))
    console.print(
        f"merge-decision accuracy {_percent(report.decision_accuracy)} "
        f"({sum(c.ok for c in report.decisions)}/{len(report.decisions)})   "
        f"retrieval hit rate {_percent(report.retrieval_hit_rate)} "
        f"({sum(c.hit for c in report.recalls)}/{len(report.recalls)})"
    )


async def _eval_memory(
    settings: Settings,
    scenarios: list["Scenario"],
    on_scenario: Callable[["ScenarioResult"], None],
) -> "EvalReport":
    """The eval on an embedded Postgres in a temp dir, with the configured LLM and the local
    embedder."""
    from memoir.memory.evaluation import run_memory_eval

    async with _eval_bed(settings) as bed:
        return await run_memory_eval(bed.engine, scenarios, bed.new_user, on_scenario)


@dataclass(frozen=True)
class _EvalBed:
    """What an eval runs on: a memory engine over fresh stores, the LLM, a way to make users."""

    engine: "MemoryEngine"
    stores: "Stores"
    llm: Any

    async def new_user(self, name: str, timezone: str) -> "UserProfile":
        profile, _token = await self.stores.users.create_user(name, timezone=timezone)
        return profile


@contextlib.asynccontextmanager
async def _eval_bed(settings: Settings) -> AsyncIterator[_EvalBed]:
    """A throwaway embedded Postgres in a temp dir, migrated; the memory engine on it with the
    configured LLM and the local embedder."""
    from memoir.db import migrate, open_pool
    from memoir.embedded_pg import start_embedded_postgres
    from memoir.embeddings import get_local_embedder
    from memoir.llm import get_chat_model
    from memoir.memory.engine import MemoryEngine
    from memoir.stores import Stores

    llm = get_chat_model(settings)
    with tempfile.TemporaryDirectory(prefix="memoir-eval-") as folder:
        server = await asyncio.to_thread(start_embedded_postgres, Path(folder))
        try:
            pool = await open_pool(server.url, min_size=1, max_size=4)
            try:
                await migrate(pool)
                stores = Stores.from_pool(pool)
                engine = MemoryEngine(
                    settings, llm, get_local_embedder(), stores.memories, stores.user_context, pool
                )
                yield _EvalBed(engine, stores, llm)
            finally:
                await pool.close()
        finally:
            server.stop()


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _eval_table(report: "EvalReport") -> Table:
    table = Table("scenario", "category", "decisions", "accuracy", "recalls", "hit rate")
    table.add_column("failures", overflow="fold")
    for result in report.scenarios:
        table.add_row(
            result.name,
            result.category,
            f"{result.correct}/{len(result.decisions)}",
            _percent(result.decision_accuracy),
            f"{result.hits}/{len(result.recalls)}",
            _percent(result.retrieval_hit_rate),
            "\n".join(result.failures()),
        )
    return table


@eval_app.command("recall")
def eval_recall(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="FILE_OR_DIR", help="Conversations: a JSON file (a list, or one) or a folder."
        ),
    ],
    k: Annotated[str, typer.Option("--k", help="The cut-offs, comma-separated.")] = "5,10,25",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    limit_conversations: Annotated[
        int | None, typer.Option(min=1, help="Only the first N conversations.")
    ] = None,
) -> None:
    """Long conversations through the memory path, each question through memory_context:
    evidence recall_any@k / recall_all@k per category, Memoir against a naive baseline (raw
    turns, MiniLM, cosine), and ingest / query latency."""
    from memoir.memory.recall_eval import RecallDataError, load_conversations, parse_ks

    try:
        ks = parse_ks(k)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--k") from None
    try:
        conversations = load_conversations(path)[:limit_conversations]
    except RecallDataError as error:
        _bad_input(error)
    say = _progress_console(as_json)
    turns = sum(len(c.turns) for c in conversations)
    say.print(
        f"recall eval: {len(conversations)} conversations, {turns} turns, "
        f"{sum(len(c.qa) for c in conversations)} questions, k={','.join(map(str, ks))}, "
        f"LLM {get_settings().llm_provider}"
    )
    report: RecallReport = _run(_eval_recall(get_settings(), conversations, ks, say))
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
        return
    console.print(_recall_table(report))
    console.print(_recall_conversations(report))
    for line in _recall_summary(report):
        console.print(line, highlight=False)


async def _eval_recall(
    settings: Settings, conversations: list["Conversation"], ks: tuple[int, ...], say: Console
) -> "RecallReport":
    """The recall eval on a throwaway Postgres, with a progress bar over turns and questions."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from memoir.embeddings import LocalEmbedder, get_local_embedder
    from memoir.memory.recall_eval import ConversationResult, run_recall_eval

    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    await asyncio.to_thread(get_local_embedder().load)  # not inside the first turn's timing
    async with _eval_bed(settings) as bed:
        with Progress(*columns, console=say) as progress:
            turns = progress.add_task("turns", total=sum(len(c.turns) for c in conversations))
            questions = progress.add_task("questions", total=sum(len(c.qa) for c in conversations))

            def step(what: str) -> None:
                progress.advance(turns if what == "turn" else questions)

            def done(result: ConversationResult) -> None:
                progress.console.print(
                    f"✓ {result.conversation_id}: {result.turns} turns in "
                    f"{result.ingest_total('memoir'):.1f}s, {len(result.questions)} questions"
                )

            return await run_recall_eval(
                _turn_stages(bed, settings),
                conversations,
                bed.new_user,
                LocalEmbedder(),  # the baseline's own embedder, timed on its own
                ks,
                step,
                done,
            )


def _turn_stages(bed: _EvalBed, settings: Settings) -> "TurnStages":
    """What a real turn runs around memory: the activities' own stage 1 and remember stage, over
    the eval's stores, and the eval's engine."""
    from activities.context import ContextActivities
    from activities.deps import Deps
    from activities.remember import RememberActivities
    from memoir.memory.recall_eval import TurnStages
    from memoir.tools import ToolRegistry

    deps = Deps(settings, bed.stores, bed.llm, ToolRegistry({}))
    return TurnStages(
        engine=bed.engine,
        assemble=ContextActivities(deps).assemble_context,
        remember=RememberActivities(deps).remember_turn,
        interactions=bed.stores.interactions,
    )


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{1000 * seconds:.1f}"


def _recall_table(report: "RecallReport") -> Table:
    """Per category and overall, each k a row: recall_any and recall_all, Memoir beside naive."""
    table = Table(
        "category",
        "questions",
        "k",
        "any Memoir",
        "any naive",
        "all Memoir",
        "all naive",
        title="evidence recall@k: Memoir vs naive (raw turns, MiniLM, cosine)",
    )
    memoir, naive = report.by_category("memoir"), report.by_category("naive")
    rows = [(c, memoir[c], naive[c]) for c in report.categories()]
    rows.append(("overall", report.overall("memoir"), report.overall("naive")))
    for name, ours, base in rows:
        for i, k in enumerate(report.ks):
            first, last = i == 0, i == len(report.ks) - 1
            table.add_row(
                name if first else "",
                str(ours.questions) if first else "",
                str(k),
                _percent(ours.any[k]),
                _percent(base.any[k]),
                _percent(ours.all[k]),
                _percent(base.all[k]),
                end_section=last,
            )
    return table


def _recall_conversations(report: "RecallReport") -> Table:
    """Per conversation: what the engine kept, and the timings of both systems."""
    table = Table(
        "sessions",
        "turns",
        "questions",
        "hot path c/u/s/n",
        "memories",
        "turns cited",
        "evidence kept",
        "ingest s",
        "ingest p50 ms",
        "query p50 ms",
        "naive ingest p50 ms",
        "naive query p50 ms",
        title="per conversation (hot path: create/update/skip/none; evidence kept: questions "
        "with an evidence turn cited by some memory)",
    )
    table.columns.insert(0, Column("conversation", no_wrap=True))
    for c in report.conversations:
        hot = "/".join(str(c.hotpath[a]) for a in ("create", "update", "skip", "none"))
        kept = ", ".join(f"{n} {kind}" for kind, n in sorted(c.memories.items())) or "0"
        table.add_row(
            c.conversation_id,
            str(c.sessions),
            str(c.turns),
            f"{len(c.questions)}" + (f" (+{c.skipped} skipped)" if c.skipped else ""),
            hot,
            kept,
            str(c.sourced_turns),
            f"{c.evidence_stored}/{len(c.questions)}",
            f"{c.ingest_total('memoir'):.1f}",
            _ms(c.p50("memoir", "ingest")),
            _ms(c.p50("memoir", "query")),
            _ms(c.p50("naive", "ingest")),
            _ms(c.p50("naive", "query")),
        )
    return table


def _recall_summary(report: "RecallReport") -> list[str]:
    lines = [
        f"Memoir: ingest p50 {_ms(report.p50('memoir', 'ingest'))} ms per turn (stages 1, 2, 3 "
        f"and 12), query p50 {_ms(report.p50('memoir', 'query'))} ms.  Naive: ingest p50 "
        f"{_ms(report.p50('naive', 'ingest'))} ms, query p50 {_ms(report.p50('naive', 'query'))}"
        " ms.",
        f"A turn's own context shows at most {report.turn_top_n} items (MEMORY_CONTEXT_TOPN) "
        "within MEMORY_CONTEXT_TOKENS; a larger k is the same retrieval with a larger top-n.",
    ]
    if report.skipped:
        lines.append(f"{report.skipped} question(s) skipped: no evidence in the conversation.")
    unknown = sum(len(c.unknown_evidence) for c in report.conversations)
    if unknown:
        lines.append(f"{unknown} evidence id(s) name no turn of their conversation (ignored).")
    return lines


@eval_app.command("triage")
def eval_triage(
    path: Annotated[
        Path | None,
        typer.Argument(metavar="[FILE]", help="Labelled emails (default: the bundled set)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Labelled emails through the real triage and preference-update activities on a throwaway
    Postgres: accuracy and confusion matrix before feedback, then after each simulated person
    answered the notify questions (one corrects only wrong ones, one acknowledges every right
    one), with paraphrased variants; exits 1 if a lesson changed an email outside its scope."""
    from memoir.triage_eval import TriageDataError, load_labelled

    try:
        emails = load_labelled(path)
    except TriageDataError as error:
        _bad_input(error)
    say = _progress_console(as_json)
    variants = sum(len(e.variants) for e in emails)
    say.print(
        f"triage eval: {len(emails)} emails, {variants} variants, LLM {get_settings().llm_provider}"
    )
    report: TriageEvalReport = _run(_eval_triage(get_settings(), emails, say))
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_triage_report(report)
    if report.flips:
        raise typer.Exit(1)


async def _eval_triage(
    settings: Settings, emails: list["LabelledEmail"], say: Console
) -> "TriageEvalReport":
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from memoir.triage_eval import run_triage_eval, steps_total

    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    async with _eval_bed(settings) as bed:
        with Progress(*columns, console=say) as progress:
            task = progress.add_task("triage", total=steps_total(emails))
            return await run_triage_eval(
                _triage_stages(bed, settings), emails, lambda: progress.advance(task)
            )


def _triage_stages(bed: _EvalBed, settings: Settings) -> "TriageStages":
    """The activities a turn runs for triage and for learning, over the eval's stores."""

    from activities.deps import Deps
    from activities.preferences import PreferenceActivities
    from activities.triage import TriageActivities, lone_email_request
    from memoir.models import Classification, EmailMessage
    from memoir.tools import ToolRegistry
    from memoir.triage_eval import TriageStages

    deps = Deps(settings, bed.stores, bed.llm, ToolRegistry({}))
    triage, learn = TriageActivities(deps).triage, PreferenceActivities(deps).update_preferences
    profiles: dict[str, UserProfile] = {}

    async def new_user(name: str) -> str:
        profile = await bed.new_user(name, "UTC")
        profiles[profile.user_id] = profile
        return profile.user_id

    async def classify(user_id: str, email: EmailMessage) -> Classification:
        request = lone_email_request(profiles[user_id], email, f"eval-{email.email_id}")
        return (await triage(request)).classification

    async def preferences(user_id: str) -> str:
        return await bed.stores.preferences.get_memory(user_id, "triage_preferences")

    return TriageStages(new_user=new_user, triage=classify, learn=learn, preferences=preferences)


def _print_triage_report(report: "TriageEvalReport") -> None:
    figures = report.to_dict()
    before = figures["before"]
    table = Table("who", "when", "accuracy", "originals", "variants", "answers", "lessons")
    table.add_row("(default preferences)", "before", *_triage_figures(before), "", "")
    for person in figures["people"]:
        answers = ", ".join(f"{k} {v}" for k, v in sorted(person["answers"].items()))
        table.add_row(
            person["person"], "after", *_triage_figures(person["after"]), answers,
            str(len(person["lessons"])),
        )  # fmt: skip
    console.print(table)
    console.print(_confusion_table("before", before["confusion"]))
    for person in figures["people"]:
        console.print(_confusion_table(f"after {person['person']}", person["after"]["confusion"]))
        for line in person["changed"]:
            console.print(f"  {person['person']} changed {line}", markup=False, highlight=False)
        console.print(
            f"  {person['person']}: {person['out_of_scope']} emails outside every lesson's "
            f"scope, {len(person['out_of_scope_flips'])} of them changed",
            highlight=False,
        )
    console.print(f"out-of-scope flips: {report.flips}", highlight=False)


def _triage_figures(figures: dict[str, Any]) -> list[str]:
    return [_percent(figures[k]) for k in ("accuracy", "originals", "variants")]


def _confusion_table(title: str, confusion: dict[str, dict[str, int]]) -> Table:
    labels = list(confusion)
    table = Table("label ↓ / triaged →", *labels, title=f"confusion {title}")
    for label in labels:
        table.add_row(label, *(str(confusion[label][p]) for p in labels))
    return table


@app.command()
def mail(limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20) -> None:
    """List the messages the local mail sink received (what `email.send` sent in dev)."""
    from memoir.mail_sink import list_messages, mail_dir

    directory = mail_dir(get_settings().data_dir)
    table = Table("date", "from", "to", "subject", "Message-ID", title=f"mail in {directory}")
    for m in list_messages(directory, limit):
        table.add_row(f"{m.date:%Y-%m-%d %H:%M}", m.sender, m.to, m.subject, m.message_id)
    console.print(table)


@app.command()
def replay(
    regenerate: Annotated[bool, typer.Option(help="Record the histories anew first.")] = False,
) -> None:
    """Replay the committed workflow histories (tests/histories) against today's code."""
    from temporal.histories import HISTORY_DIR, record_histories, replay_histories

    if regenerate:
        written = _run(record_histories(HISTORY_DIR, say=console.print))
        console.print(f"recorded {len(written)} histories in {HISTORY_DIR}")
    replayed = _run(replay_histories())
    console.print(f"[green]replayed {len(replayed)} histories without nondeterminism[/]")


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check this machine can run Memoir, one line each with a fix; exit 1 if a check fails."""
    from memoir.doctor import run_doctor

    raise typer.Exit(run_doctor(as_json=as_json))


# ----- memoir bench (issue 11): turns and human-in-the-loop latency on the embedded stack -----

bench_app = typer.Typer(
    help="Benchmarks on the embedded stack (results in bench/results/).", no_args_is_help=True
)
app.add_typer(bench_app, name="bench")
BenchOut = Annotated[Path, typer.Option(help="Folder for the JSON, markdown and PNG.")]
BenchDataDir = Annotated[
    Path | None,
    typer.Option(help="Data folder of the bench's stack (default: a temporary one, removed)."),
]


@bench_app.command("turns")
def bench_turns(
    turns: Annotated[int, typer.Option("--turns", "-n", min=1, help="Turns per phase.")] = 50,
    in_flight: Annotated[str, typer.Option(help="Turns in flight, one phase each.")] = "1,8,16",
    kinds: Annotated[str, typer.Option(help="chat, email (comma-separated).")] = "chat,email",
    systems: Annotated[str, typer.Option(help="memoir, langgraph (comma-separated).")] = (
        "memoir,langgraph"
    ),
    text: Annotated[str, typer.Option(help="The chat turns' message.")] = "Hi there!",
    durability: Annotated[
        str, typer.Option(help="LangGraph checkpoint durability: sync, async or exit.")
    ] = "sync",
    out: BenchOut = Path("bench/results"),
    name: Annotated[str, typer.Option(help="Base name of the output files.")] = "turns",
    data_dir: BenchDataDir = None,
) -> None:
    """N turns through the real API and pipeline, sequential and in flight, beside the same
    stages as a LangGraph graph over PostgresSaver: p50/p95, turns/s, history, CPU per turn."""
    from memoir.benchmarks.report import turns_markdown, write_report
    from memoir.benchmarks.turns import TurnsConfig, run_turns

    try:
        config = TurnsConfig.parse(turns, in_flight, kinds, systems, text, durability)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    report = _run(run_turns(get_settings(), config, say=console.print, data_dir=data_dir))
    if report is None:
        raise typer.Exit(130)
    paths = write_report(report, out, name)
    console.print(turns_markdown(report), markup=False, highlight=False)
    console.print("wrote " + ", ".join(str(p) for p in paths))


@bench_app.command("hitl")
def bench_hitl(
    trials: Annotated[int, typer.Option("--trials", "-n", min=1, help="Answers per source.")] = 50,
    sources: Annotated[str, typer.Option(help="inbox, chat (comma-separated).")] = "inbox,chat",
    out: BenchOut = Path("bench/results"),
    name: Annotated[str, typer.Option(help="Base name of the output files.")] = "hitl",
    data_dir: BenchDataDir = None,
) -> None:
    """From a person's answer (inbox or chat) to the turn's next activity starting: p50/p95."""
    from memoir.benchmarks.hitl import HitlConfig, run_hitl
    from memoir.benchmarks.report import hitl_markdown, write_report

    try:
        config = HitlConfig.parse(trials, sources)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    report = _run(run_hitl(get_settings(), config, say=console.print, data_dir=data_dir))
    if report is None:
        raise typer.Exit(130)
    paths = write_report(report, out, name)
    console.print(hitl_markdown(report), markup=False, highlight=False)
    console.print("wrote " + ", ".join(str(p) for p in paths))


@bench_app.command("load")
def bench_load(
    turns: Annotated[int, typer.Option("--turns", "-n", min=1, help="Turns in all.")] = 500,
    users: Annotated[int, typer.Option(min=1, help="Users sending them.")] = 50,
    threads: Annotated[int, typer.Option(min=1, help="Threads they are spread over.")] = 100,
    out: BenchOut = Path("bench/results"),
) -> None:
    """Every turn sent at once through the real HTTP API; wall time, p50/p95, 5xx, and the
    rows per message id (no turn lost or doubled). Writes {out}/load.json."""
    import json

    from memoir.benchmarks.load import LoadConfig, load_markdown, run_load

    try:
        config = LoadConfig(turns=turns, users=users, threads=threads)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    report = _run(run_load(get_settings(), config, say=console.print))
    if report is None:
        raise typer.Exit(130)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "load.json"
    path.write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")
    console.print(load_markdown(report), markup=False, highlight=False)
    console.print(f"wrote {path}")
    if not report.ok:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()


# ----- memoir keys (issue 13): payload encryption keys (docs/security.md) -----

keys_app = typer.Typer(help="Payload encryption keys (docs/security.md).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("rotate-master")
def keys_rotate_master(
    new_key: Annotated[
        str | None,
        typer.Option(help="The new master key (32 bytes, base64 or hex); default: a fresh one."),
    ] = None,
) -> None:
    """Re-wrap every data key under a new master key. With MEMOIR_MASTER_KEY set, set it to the
    new key afterwards (printed when generated); else the data folder's master.key is replaced."""
    from memoir.crypto import MasterKey, load_master_key, parse_master_key, rotate_master
    from memoir.crypto.master import configured_master_key, master_key_file

    settings = get_settings()
    configured = configured_master_key(settings.master_key)
    try:
        old = load_master_key(configured, settings.data_dir)
        new = parse_master_key(new_key) if new_key else MasterKey.generate()
    except (ValueError, RuntimeError) as error:
        _bad_input(error)

    async def rotate() -> int:
        async with _stores() as stores:
            return await rotate_master(stores.pool, old, new)

    count = _run(rotate())
    console.print(f"re-wrapped {count} data key(s) under master key {new.key_id}")
    if configured:
        console.print("Set MEMOIR_MASTER_KEY to the new key and restart the worker and API.")
        if new_key is None:
            print(new.encoded())
        return
    path = master_key_file(settings.data_dir)
    path.write_text(new.encoded() + "\n", encoding="utf-8")
    path.chmod(0o600)
    console.print(f"wrote the new master key to {path}; restart the worker and API")


@keys_app.command("rotate-user")
def keys_rotate_user(user_id: str) -> None:
    """Give a user a new data key: new payloads use it, old ones still decode with the old one."""
    from temporal.client import open_keyring

    settings = get_settings()

    async def rotate() -> str:
        async with _stores() as stores:
            return (await open_keyring(settings, stores.pool).rotate(user_id)).key_id

    try:
        console.print(f"user {user_id}: new data key {_run(rotate())}")
    except RuntimeError as error:
        _bad_input(error)

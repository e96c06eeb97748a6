"""`memoir keys rotate-user` and `memoir keys rotate-master` against the test database."""

import asyncio
import re
import uuid
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner, Result

from memoir.cli import app
from memoir.crypto import Keyring, MasterKey
from memoir.settings import get_settings


@pytest.fixture
def cli(
    database_url: str, keyring: Keyring, monkeypatch: pytest.MonkeyPatch
) -> Iterator[CliRunner]:
    """The CLI on the test database, with the session's master key."""
    monkeypatch.setenv("MEMOIR_DATABASE_URL", database_url)
    monkeypatch.setenv("MEMOIR_MASTER_KEY", keyring.master.encoded())
    get_settings.cache_clear()
    try:
        yield CliRunner()
    finally:
        get_settings.cache_clear()


async def invoke(cli: CliRunner, *args: str) -> Result:
    """`memoir keys ...` on a thread of its own (the CLI runs its own event loop)."""

    def run() -> Result:
        return cli.invoke(app, ["keys", *args])

    return await asyncio.to_thread(run)


async def test_rotate_user_gives_new_payloads_a_new_key(cli: CliRunner, keyring: Keyring) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    old = await keyring.active_key(user)
    result = await invoke(cli, "rotate-user", user)
    assert result.exit_code == 0, result.output
    match = re.search(r"new data key (dk_\w+)", result.output)
    assert match and match.group(1) != old.key_id
    fresh = Keyring(keyring.pool, keyring.master)
    assert (await fresh.active_key(user)).key_id == match.group(1)
    assert (await fresh.key(old.key_id)).owner == user


async def test_rotate_master_rewraps_and_the_new_master_opens_every_key(
    cli: CliRunner, keyring: Keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = await keyring.active_key(f"u-{uuid.uuid4().hex[:8]}")
    new = MasterKey.generate()
    result = await invoke(cli, "rotate-master", "--new-key", new.secret.hex())
    assert result.exit_code == 0, result.output
    assert f"under master key {new.key_id}" in result.output
    assert (await Keyring(keyring.pool, new).key(key.key_id)).owner == key.owner
    # back to the session's master key, as an operator would roll back
    monkeypatch.setenv("MEMOIR_MASTER_KEY", new.encoded())
    get_settings.cache_clear()
    back = await invoke(cli, "rotate-master", "--new-key", keyring.master.encoded())
    assert back.exit_code == 0, back.output
    assert (await Keyring(keyring.pool, keyring.master).key(key.key_id)).owner == key.owner


def test_rotate_master_refuses_a_malformed_key(cli: CliRunner) -> None:
    result = cli.invoke(app, ["keys", "rotate-master", "--new-key", "nope"])
    assert result.exit_code != 0 and "32 bytes" in result.output

"""Data keys: wrapped by the master key in Postgres, rotated, destroyed; the master key rotates."""

import uuid
from pathlib import Path

import pytest

from memoir.crypto import KeyDestroyedError, Keyring, MasterKey, MasterKeyMissing, rotate_master
from memoir.crypto.master import load_master_key, parse_master_key
from memoir.db import Pool


def fresh_owner() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


async def test_a_user_gets_one_active_key_reused(keyring: Keyring) -> None:
    owner = fresh_owner()
    first = await keyring.active_key(owner)
    again = await Keyring(keyring.pool, keyring.master).active_key(owner)
    assert (first.key_id, first.owner) == (again.key_id, owner)


async def test_keys_are_stored_wrapped_by_the_master_key(keyring: Keyring, pool: Pool) -> None:
    key = await keyring.active_key(fresh_owner())
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT wrapped_key, master_key_id FROM data_keys WHERE key_id = %s", (key.key_id,)
        )
        row = await cur.fetchone()
    assert row is not None and row["master_key_id"] == keyring.master.key_id
    assert len(row["wrapped_key"]) == 12 + 32 + 16  # nonce, sealed key, tag
    with pytest.raises(ValueError, match="not wrapped by master key"):
        await Keyring(pool, MasterKey.generate()).key(key.key_id)


async def test_rotation_gives_a_new_key_and_the_old_one_still_opens(keyring: Keyring) -> None:
    owner = fresh_owner()
    old = await keyring.active_key(owner)
    new = await keyring.rotate(owner)
    assert new.key_id != old.key_id
    assert (await keyring.active_key(owner)).key_id == new.key_id
    assert (await Keyring(keyring.pool, keyring.master).key(old.key_id)).owner == owner


async def test_destroyed_keys_are_gone_for_every_process(keyring: Keyring) -> None:
    owner = fresh_owner()
    key = await keyring.active_key(owner)
    other_process = Keyring(keyring.pool, keyring.master)
    assert await keyring.destroy(owner) == 1
    for ring in (keyring, other_process):
        with pytest.raises(KeyDestroyedError):
            await ring.key(key.key_id)


async def test_master_rotation_rewraps_every_key(keyring: Keyring, pool: Pool) -> None:
    owner = fresh_owner()
    key = await keyring.active_key(owner)
    new_master = MasterKey.generate()
    assert await rotate_master(pool, keyring.master, new_master) >= 1
    after = await Keyring(pool, new_master).key(key.key_id)
    blob = key.aead.encrypt(b"\1" * 12, b"secret", None)
    assert after.aead.decrypt(b"\1" * 12, blob, None) == b"secret"
    assert await rotate_master(pool, new_master, keyring.master) >= 1  # back, for the session


def test_master_key_parses_hex_and_base64_and_refuses_short() -> None:
    key = MasterKey.generate()
    assert parse_master_key(key.secret.hex()) == key
    assert parse_master_key(key.encoded()) == key
    with pytest.raises(ValueError, match="32 bytes"):
        parse_master_key("c2hvcnQ=")


def test_dev_master_key_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    with pytest.raises(MasterKeyMissing, match="MEMOIR_MASTER_KEY is not set"):
        load_master_key(None, tmp_path)
    made = load_master_key(None, tmp_path, create=True)
    assert (tmp_path / "master.key").stat().st_mode & 0o777 == 0o600
    assert load_master_key(None, tmp_path) == made

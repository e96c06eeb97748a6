"""Data keys in Postgres, wrapped by the master key, with a small cache of unwrapped ones.

A user (or the system, owner "") has one active key; a rotation retires it and makes a new one
(old payloads still decode with the retired key). Destroying a user's keys (crypto-shredding)
deletes the rows: what they encrypted can no longer be decoded by anyone.
"""

import secrets
import time
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from memoir.crypto.aead import new_key, seal, unseal
from memoir.crypto.master import MasterKey
from memoir.db import Connection, Pool

SYSTEM_OWNER = ""  # payloads of no user (system workflows, no serialization context)
# How long an unwrapped key is trusted before the database is asked again: the longest another
# process may keep encrypting or decrypting with a key destroyed elsewhere.
CACHE_SECONDS = 60.0
CACHE_MAX_KEYS = 10_000


class KeyDestroyedError(LookupError):
    """The data key is gone (its user was erased): the payload can no longer be decoded."""


@dataclass(frozen=True)
class DataKey:
    """An unwrapped data key, ready to seal and unseal payloads."""

    key_id: str
    owner: str
    aead: AESGCM = field(repr=False)


def _wrap_aad(key_id: str, owner: str) -> bytes:
    return f"memoir-data-key|{key_id}|{owner}".encode()


def wrap(master: MasterKey, key_id: str, owner: str, secret: bytes) -> bytes:
    """The data key sealed by the master key, bound to its id and owner."""
    return seal(master.aead(), secret, _wrap_aad(key_id, owner))


def unwrap(master: MasterKey, key_id: str, owner: str, wrapped: bytes) -> bytes:
    """The data key; ValueError when the master key is not the one that wrapped it."""
    try:
        return unseal(master.aead(), wrapped, _wrap_aad(key_id, owner))
    except InvalidTag:
        reason = f"data key {key_id} was not wrapped by master key {master.key_id}"
        raise ValueError(reason) from None


class Keyring:
    """Data keys by owner and by id; a cache hit costs no database round trip."""

    def __init__(self, pool: Pool, master: MasterKey, *, cache_seconds: float = CACHE_SECONDS):
        self.pool = pool
        self.master = master
        self.cache_seconds = cache_seconds
        self._by_id: dict[str, tuple[DataKey, float]] = {}
        self._active: dict[str, tuple[DataKey, float]] = {}

    async def active_key(self, owner: str) -> DataKey:
        """The owner's key for new payloads, created on first use."""
        hit = self._active.get(owner)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        async with self.pool.connection() as conn:
            row = await _active_row(conn, owner)
            if row is None:
                await _insert_key(conn, self.master, owner)
                row = await _active_row(conn, owner)
        assert row is not None, "an active key exists after the insert"
        key = self._remember(row)
        self._active[owner] = (key, key_expiry(self.cache_seconds))
        return key

    async def key(self, key_id: str) -> DataKey:
        """The key with this id (active or retired); KeyDestroyedError when it is gone."""
        hit = self._by_id.get(key_id)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT key_id, owner, wrapped_key FROM data_keys WHERE key_id = %s", (key_id,)
            )
            row = await cur.fetchone()
        if row is None:
            self._by_id.pop(key_id, None)
            raise KeyDestroyedError(f"data key {key_id} was destroyed")
        return self._remember(row)

    async def rotate(self, owner: str) -> DataKey:
        """Retire the owner's active key and make a new one; old payloads still decode."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "UPDATE data_keys SET retired_at = now() WHERE owner = %s AND retired_at IS NULL",
                (owner,),
            )
            await _insert_key(conn, self.master, owner)
        self._active.pop(owner, None)
        return await self.active_key(owner)

    async def destroy(self, owner: str) -> int:
        """Delete every key of the owner (crypto-shredding); how many were deleted."""
        count = await destroy_keys(self.pool, owner)
        self.forget(owner)
        return count

    def forget(self, owner: str) -> None:
        """Drop the owner's keys from this process's cache."""
        self._active.pop(owner, None)
        for key_id in [k for k, (key, _) in self._by_id.items() if key.owner == owner]:
            del self._by_id[key_id]

    def _remember(self, row: dict[str, object]) -> DataKey:
        key_id, owner, wrapped = str(row["key_id"]), str(row["owner"]), row["wrapped_key"]
        assert isinstance(wrapped, bytes)
        key = DataKey(key_id, owner, AESGCM(unwrap(self.master, key_id, owner, wrapped)))
        if len(self._by_id) >= CACHE_MAX_KEYS:
            self._by_id.clear()
            self._active.clear()
        self._by_id[key_id] = (key, key_expiry(self.cache_seconds))
        return key


async def destroy_keys(pool: Pool, owner: str) -> int:
    """Delete every data key of the owner; how many were deleted."""
    async with pool.connection() as conn:
        cur = await conn.execute("DELETE FROM data_keys WHERE owner = %s", (owner,))
        return cur.rowcount


def key_expiry(seconds: float) -> float:
    return time.monotonic() + seconds


async def _active_row(conn: Connection, owner: str) -> dict[str, object] | None:
    cur = await conn.execute(
        "SELECT key_id, owner, wrapped_key FROM data_keys WHERE owner = %s AND retired_at IS NULL",
        (owner,),
    )
    return await cur.fetchone()


async def _insert_key(conn: Connection, master: MasterKey, owner: str) -> None:
    """A new active key for the owner, unless another process made one meanwhile."""
    key_id = "dk_" + secrets.token_hex(12)
    await conn.execute(
        "INSERT INTO data_keys (key_id, owner, wrapped_key, master_key_id)"
        " VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (owner) WHERE retired_at IS NULL DO NOTHING",
        (key_id, owner, wrap(master, key_id, owner, new_key()), master.key_id),
    )


async def rotate_master(pool: Pool, old: MasterKey, new: MasterKey) -> int:
    """Re-wrap every data key under `new` (one transaction); how many were re-wrapped.

    Only keys wrapped by `old` are touched: a rerun after a failure, or keys of another master
    key (another deployment on the same database), are left alone.
    """
    async with pool.connection() as conn, conn.transaction():
        cur = await conn.execute(
            "SELECT key_id, owner, wrapped_key FROM data_keys WHERE master_key_id = %s FOR UPDATE",
            (old.key_id,),
        )
        rows = await cur.fetchall()
        count = 0
        for row in rows:
            key_id, owner = row["key_id"], row["owner"]
            secret = unwrap(old, key_id, owner, row["wrapped_key"])
            await conn.execute(
                "UPDATE data_keys SET wrapped_key = %s, master_key_id = %s WHERE key_id = %s",
                (wrap(new, key_id, owner, secret), new.key_id, key_id),
            )
            count += 1
    return count

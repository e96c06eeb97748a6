"""The master key (`MEMOIR_MASTER_KEY`): 32 bytes as base64 or hex; it only wraps data keys."""

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pydantic import SecretStr

from memoir.crypto.aead import KEY_BYTES, new_key

MASTER_KEY_FILE = "master.key"


class MasterKeyMissing(RuntimeError):
    """No master key: `MEMOIR_MASTER_KEY` is unset and the data folder holds none."""


@dataclass(frozen=True)
class MasterKey:
    """A 256-bit master key and its public id (a fingerprint, stored beside what it wraps)."""

    secret: bytes = field(repr=False)

    @property
    def key_id(self) -> str:
        return hashlib.sha256(b"memoir-master-key:" + self.secret).hexdigest()[:16]

    def aead(self) -> AESGCM:
        return AESGCM(self.secret)

    def encoded(self) -> str:
        """The base64 form, as `MEMOIR_MASTER_KEY` takes it."""
        return base64.b64encode(self.secret).decode()

    @classmethod
    def generate(cls) -> "MasterKey":
        return cls(new_key())


def parse_master_key(text: str) -> MasterKey:
    """32 bytes written as 64 hex digits or as base64; ValueError with the reason otherwise."""
    text = text.strip()
    raw: bytes | None = None
    if len(text) == KEY_BYTES * 2:
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raw = None
    if raw is None:
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the master key must be 32 bytes as 64 hex digits or base64") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"the master key must be 32 bytes, not {len(raw)}")
    return MasterKey(raw)


def configured_master_key(secret: SecretStr | None) -> str | None:
    """`MEMOIR_MASTER_KEY`'s value, None when unset or empty."""
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


def master_key_file(data_dir: Path) -> Path:
    return data_dir / MASTER_KEY_FILE


def load_master_key(configured: str | None, data_dir: Path, *, create: bool = False) -> MasterKey:
    """`MEMOIR_MASTER_KEY` if set, else the data folder's `master.key`; `create` makes that file
    (mode 0600) when missing, as `memoir dev` and `memoir demo` do. MasterKeyMissing otherwise."""
    if configured:
        return parse_master_key(configured)
    path = master_key_file(data_dir)
    if path.exists():
        return parse_master_key(path.read_text(encoding="utf-8"))
    if not create:
        raise MasterKeyMissing(
            f"MEMOIR_MASTER_KEY is not set and {path} does not exist: set MEMOIR_MASTER_KEY "
            "(32 bytes, base64 or hex) or run `memoir dev` once to create one there"
        )
    key = MasterKey.generate()
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key.encoded() + "\n")
    return key

"""Payload encryption keys: a master key wraps one data key per user (and one for the system)."""

from memoir.crypto.keyring import SYSTEM_OWNER, DataKey, KeyDestroyedError, Keyring, rotate_master
from memoir.crypto.master import MasterKey, MasterKeyMissing, load_master_key, parse_master_key

__all__ = [
    "SYSTEM_OWNER",
    "DataKey",
    "KeyDestroyedError",
    "Keyring",
    "MasterKey",
    "MasterKeyMissing",
    "load_master_key",
    "parse_master_key",
    "rotate_master",
]

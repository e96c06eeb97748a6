"""AES-256-GCM with a random 96-bit nonce stored in front of the ciphertext."""

import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12
KEY_BYTES = 32


def new_key() -> bytes:
    """A fresh random 256-bit key."""
    return AESGCM.generate_key(bit_length=KEY_BYTES * 8)


def seal(aead: AESGCM, plaintext: bytes, aad: bytes) -> bytes:
    """`nonce || ciphertext+tag` of `plaintext`, authenticated together with `aad`."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + aead.encrypt(nonce, plaintext, aad)


def unseal(aead: AESGCM, blob: bytes, aad: bytes) -> bytes:
    """The plaintext of `seal`'s output; `cryptography.exceptions.InvalidTag` when tampered."""
    return aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad)

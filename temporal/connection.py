"""How Memoir reaches its Temporal cluster, from the settings alone: plaintext (the dev server,
docker-compose.yml), TLS with a client certificate (mTLS), or an API key (Temporal Cloud)."""

from pathlib import Path
from typing import TypedDict

from temporalio.service import TLSConfig

from memoir.settings import Settings


class TemporalTLSError(ValueError):
    """The TLS settings cannot work together, or a file they name cannot be read."""


class ConnectOptions(TypedDict):
    """`Client.connect` keyword arguments beyond the address and namespace."""

    tls: bool | TLSConfig | None
    api_key: str | None


def connect_options(settings: Settings) -> ConnectOptions:
    """TLS and API key for `Client.connect`: with an API key alone TLS is on (the SDK's default)."""
    key = settings.temporal_api_key
    return {"tls": tls_config(settings), "api_key": key.get_secret_value() if key else None}


def tls_config(settings: Settings) -> bool | TLSConfig | None:
    """`TEMPORAL_TLS` as set (None: TLS only with an API key) or a TLSConfig from the PEM files."""
    cert, key, ca = settings.temporal_tls_cert, settings.temporal_tls_key, settings.temporal_tls_ca
    if (cert is None) != (key is None):
        raise TemporalTLSError(
            "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: "
            "set both (mTLS) or neither"
        )
    configured = cert is not None or ca is not None or settings.temporal_tls_server_name
    if not configured:
        return settings.temporal_tls
    if settings.temporal_tls is False:
        raise TemporalTLSError("TEMPORAL_TLS=false, but TLS certificate settings are set")
    return TLSConfig(
        server_root_ca_cert=_read("TEMPORAL_TLS_SERVER_CA_CERT_PATH", ca),
        client_cert=_read("TEMPORAL_TLS_CLIENT_CERT_PATH", cert),
        client_private_key=_read("TEMPORAL_TLS_CLIENT_KEY_PATH", key),
        domain=settings.temporal_tls_server_name,
    )


def _read(setting: str, path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as error:
        raise TemporalTLSError(f"{setting}: cannot read {path}: {error.strerror}") from None

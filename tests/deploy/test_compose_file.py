"""docker-compose.yml: valid for `docker-compose config`, and consistent with Memoir's CLI, settings
and the embedded dev server (no engine needed; the Makefile unpacks Debian's docker-compose)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from typer.main import get_command

from memoir.cli import app
from memoir.settings import Settings
from temporal.devserver import DEV_SERVER_DYNAMIC_CONFIG, SEARCH_ATTRIBUTE_TYPES

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
COMPOSE = Path(sys.executable).parent / "docker-compose"
ONE_SHOT = {"temporal-schema", "temporal-setup"}
APP_SERVICES = {"api", "worker"}
MASTER_KEY = base64.b64encode(bytes(range(32))).decode()


def _compose(
    *args: str, file: Path = COMPOSE_FILE, master_key: str | None = MASTER_KEY
) -> subprocess.CompletedProcess[str]:
    """`docker-compose -f FILE ARGS` with none of the caller's MEMOIR_* / OPENAI_* / ... set but
    the master key the file requires."""
    assert COMPOSE.exists(), f"{COMPOSE} missing: `make install` (deploy/install-compose.sh)"
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    if master_key is not None:
        env["MEMOIR_MASTER_KEY"] = master_key
    command = [str(COMPOSE), "-f", str(file), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    """The file as `docker-compose config` resolves it (defaults interpolated, anchors merged)."""
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = yaml.safe_load(result.stdout)
    return loaded


def test_docker_compose_config_accepts_the_file() -> None:
    result = _compose("config", "--quiet")
    assert result.returncode == 0, result.stderr


def test_docker_compose_config_rejects_a_misspelt_option(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    text = COMPOSE_FILE.read_text().replace("    healthcheck:\n", "    helthcheck:\n", 1)
    broken.write_text(text)
    result = _compose("config", "--quiet", file=broken)
    assert result.returncode != 0
    assert "helthcheck" in result.stderr


def test_docker_compose_config_requires_a_master_key() -> None:
    result = _compose("config", "--quiet", master_key=None)
    assert result.returncode != 0
    assert "set MEMOIR_MASTER_KEY" in result.stderr


def test_the_topology_has_every_part(config: dict[str, Any]) -> None:
    services = config["services"]
    assert set(services) == {
        "temporal-postgres",
        "temporal-schema",
        "temporal",
        "temporal-setup",
        "temporal-ui",
        "app-postgres",
        "api",
        "worker",
    }
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["app-postgres"]["image"].startswith("pgvector/pgvector:")
    assert services["temporal-schema"]["image"].startswith("temporalio/admin-tools:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")


def test_every_third_party_image_is_pinned(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        if name in APP_SERVICES:
            assert "build" in service, name
            continue
        _repository, _, tag = service["image"].rpartition(":")
        assert tag and tag != "latest" and any(c.isdigit() for c in tag), (name, tag)


def test_every_long_running_service_has_a_health_check(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        if name in ONE_SHOT:
            assert service.get("restart") == "no", name
        else:
            assert service.get("healthcheck", {}).get("test"), name


def test_every_dependency_waits_on_a_condition(config: dict[str, Any]) -> None:
    services = config["services"]
    for name, service in services.items():
        for needed, how in service.get("depends_on", {}).items():
            expected = "service_completed_successfully" if needed in ONE_SHOT else "service_healthy"
            assert how["condition"] == expected, (name, needed)
    assert "temporal-setup" in services["api"]["depends_on"]
    assert "temporal-setup" in services["worker"]["depends_on"]


def _real_command(args: list[str]) -> Any:
    """The CLI command `memoir ARGS` names, its options parsed as the CLI parses them (typer
    carries its own click: groups are told by their `commands`)."""
    command: Any = get_command(app)
    rest = list(args)
    while hasattr(command, "commands") and rest and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    assert not hasattr(command, "commands"), f"memoir {' '.join(args)}: no such command"
    command.make_context(f"memoir {' '.join(args)}", rest)  # raises on an unknown option
    return command


def test_each_memoir_command_is_a_real_cli_command(config: dict[str, Any]) -> None:
    commands = {name: config["services"][name]["command"] for name in APP_SERVICES}
    assert commands == {"api": ["memoir", "api"], "worker": ["memoir", "worker"]}
    for command in commands.values():
        assert _real_command(command[1:]).name == command[1]


def test_unknown_memoir_options_are_caught_by_the_check() -> None:
    with pytest.raises(Exception, match="No such option"):
        _real_command(["worker", "--no-such-option"])
    with pytest.raises(AssertionError, match="no such command"):
        _real_command(["users"])


def _setting_names() -> set[str]:
    names: set[str] = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", [alias] if isinstance(alias, str) else [])
        names.update(c for c in choices if isinstance(c, str))
    return names


def test_app_environment_names_are_memoir_settings(config: dict[str, Any]) -> None:
    known = _setting_names()
    for name in APP_SERVICES:
        unknown = set(config["services"][name]["environment"]) - known
        assert not unknown, (name, unknown)


def test_app_environment_values_are_valid_settings(
    config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in APP_SERVICES:
        environment = config["services"][name]["environment"]
        for key in _setting_names():
            monkeypatch.delenv(key, raising=False)
        for key, value in environment.items():
            if value is not None:  # None: passed on from the host only when set there
                monkeypatch.setenv(key, str(value))
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        assert settings.database_url == environment["MEMOIR_DATABASE_URL"]
        assert settings.temporal_address == environment["TEMPORAL_ADDRESS"]
        assert settings.master_key is not None
        assert settings.master_key.get_secret_value() == MASTER_KEY


def test_the_apps_reach_the_compose_postgres_and_temporal(config: dict[str, Any]) -> None:
    services = config["services"]
    postgres = services["app-postgres"]["environment"]
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        url = urlsplit(environment["MEMOIR_DATABASE_URL"])
        assert (url.hostname, url.port) == ("app-postgres", 5432)
        assert (url.username, url.password) == (
            postgres["POSTGRES_USER"],
            postgres["POSTGRES_PASSWORD"],
        )
        assert url.path == f"/{postgres['POSTGRES_DB']}"
        assert environment["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert services["temporal-ui"]["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert services["temporal-setup"]["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"


def test_the_api_listens_where_it_is_published_and_checked(config: dict[str, Any]) -> None:
    api = config["services"]["api"]
    port = int(api["environment"]["MEMOIR_API_PORT"])
    assert api["environment"]["MEMOIR_API_HOST"] == "0.0.0.0"
    assert [p["target"] for p in api["ports"]] == [port]
    assert f"127.0.0.1:{port}/healthz" in " ".join(api["healthcheck"]["test"])


def test_the_ui_decodes_payloads_through_the_api_codec_endpoint(config: dict[str, Any]) -> None:
    ui, api = config["services"]["temporal-ui"], config["services"]["api"]
    endpoint = urlsplit(ui["environment"]["TEMPORAL_CODEC_ENDPOINT"])
    api_port, ui_port = api["ports"][0]["published"], ui["ports"][0]["published"]
    assert (endpoint.hostname, endpoint.port, endpoint.path) == ("localhost", api_port, "/codec")
    assert ui["environment"]["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"] == "true"
    assert api["environment"]["MEMOIR_CODEC_CORS_ORIGINS"] == f"http://localhost:{ui_port}"


def test_the_temporal_server_runs_the_dev_servers_dynamic_config(config: dict[str, Any]) -> None:
    temporal = config["services"]["temporal"]
    folder, _, mounted = temporal["volumes"][0].partition(":")
    path = temporal["environment"]["DYNAMIC_CONFIG_FILE_PATH"]
    assert mounted.removesuffix(":ro") == "/etc/temporal/config/dynamicconfig"
    dynamic = yaml.safe_load((Path(folder) / Path(path).name).read_text())
    values = {f"{key}={entries[0]['value']}" for key, entries in dynamic.items()}
    assert values == set(DEV_SERVER_DYNAMIC_CONFIG)


def test_the_setup_script_registers_the_dev_servers_search_attributes() -> None:
    script = (REPO / "deploy" / "temporal-setup.sh").read_text()
    registered = {
        line.split()[1]: line.split()[2]
        for line in script.splitlines()
        if line.startswith("attribute ")
    }
    assert registered == SEARCH_ATTRIBUTE_TYPES


def test_the_app_image_installs_the_pinned_cpu_torch_first() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    torch = dockerfile.index('"torch==2.13.0"')
    assert "whl/cpu" in dockerfile[dockerfile.rindex("RUN", 0, torch) : torch]
    assert torch < dockerfile.index("RUN pip install .")


def test_the_worker_health_check_script_ships_in_the_image(config: dict[str, Any]) -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "WORKDIR /app" in dockerfile and "COPY deploy ./deploy" in dockerfile
    test = config["services"]["worker"]["healthcheck"]["test"]
    in_image = next(arg for arg in test if arg.startswith("/app/"))
    assert (REPO / in_image.removeprefix("/app/")).is_file()

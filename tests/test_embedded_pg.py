"""The embedded Postgres: a start that fails says why, with the end of the server's log."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoir.embedded_pg import EmbeddedPostgresStartError, start_embedded_postgres


def test_a_failed_start_raises_with_the_server_log(tmp_path: Path) -> None:
    server = start_embedded_postgres(tmp_path)
    server.stop()
    with (server.pgdata / "postgresql.conf").open("a") as conf:
        conf.write("\nshared_buffers = 'plenty'\n")

    with pytest.raises(EmbeddedPostgresStartError) as raised:
        start_embedded_postgres(tmp_path)

    message = str(raised.value)
    assert str(server.pgdata) in message
    assert "shared_buffers" in message  # the server's own complaint, from its log


def test_a_cluster_that_cannot_be_created_raises_the_same_error(tmp_path: Path) -> None:
    (tmp_path / "postgres").write_text("not a folder")

    with pytest.raises(EmbeddedPostgresStartError, match="did not start"):
        start_embedded_postgres(tmp_path)

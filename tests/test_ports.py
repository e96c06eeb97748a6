"""Ports: a free one is never handed out twice and lies below the OS's ephemeral range; a taken
one gives a clear error."""

from __future__ import annotations

import socket

import pytest

from memoir.ports import EPHEMERAL_RANGE_FILE, PortInUseError, free_port, listen


def test_free_port_never_hands_out_a_port_twice() -> None:
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)


def test_free_port_lies_below_the_ephemeral_range() -> None:
    low = int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    assert all(port < low for port in (free_port() for _ in range(20)))


def test_listen_on_a_taken_port_names_the_port() -> None:
    with listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"cannot listen on 127.0.0.1:{port}"):
            listen("127.0.0.1", port)


def test_listen_returns_a_listening_socket() -> None:
    with (
        listen("127.0.0.1", 0) as server,
        socket.create_connection(server.getsockname()[:2], timeout=2),
    ):
        pass


def test_connections_to_a_listening_socket_send_at_once() -> None:
    with listen("127.0.0.1", 0) as server:
        client = socket.create_connection(server.getsockname()[:2], timeout=2)
        accepted, _ = server.accept()
        with client, accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0

"""Local TCP ports: is something listening, and a free one to listen on."""

from __future__ import annotations

import socket


def port_open(host: str, port: int) -> bool:
    """Whether something accepts connections at host:port (half a second at most)."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])

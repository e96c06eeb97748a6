"""Local TCP ports: is something listening, a free one to listen on, and a listening socket."""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_CHOSEN_PORT = 10_000

_handed_out: set[int] = set()


class PortInUseError(OSError):
    """Nothing can listen on host:port: something else holds it."""

    def __init__(self, host: str, port: int, reason: OSError) -> None:
        super().__init__(
            reason.errno,
            f"cannot listen on {host}:{port}: {reason.strerror or reason} "
            "(is another memoir or server using it? choose another port in the settings)",
        )


def port_open(host: str, port: int) -> bool:
    """Whether something accepts connections at host:port (half a second at most)."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now, never the same twice in a process.

    Chosen below the kernel's ephemeral range: the ports the OS hands to outgoing connections
    and to `bind(0)` (a Temporal server's own services, a client's socket) come from that range,
    so one of them cannot take the port between this call and the listener's bind."""
    low, high = LOWEST_CHOSEN_PORT, _ephemeral_start() - 1
    for _ in range(200):
        port = random.randint(low, high) if low < high else _os_pick(host)
        if port not in _handed_out and _bindable(host, port):
            _handed_out.add(port)
            return port
    raise OSError(f"no free port on {host} between {low} and {high}")


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A socket listening on host:port (0: a port the OS picks); `PortInUseError` if taken.

    Its connections send at once (TCP_NODELAY, inherited from the listener): asyncio sets it
    only on sockets made with IPPROTO_TCP, which these are not, and without it a response
    written in two parts waits for the client's delayed ACK (~40 ms per request)."""
    try:
        sock = socket.create_server((host, port), backlog=backlog)
    except OSError as error:
        raise PortInUseError(host, port, error) from error
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _ephemeral_start() -> int:
    try:
        return int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _os_pick(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True

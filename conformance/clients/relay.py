"""The stdio scenario server a client under test starts: `python -m conformance.clients.relay
--connect 127.0.0.1:PORT`. It pipes its stdin to the harness's scenario server and what comes back to
its stdout, byte for byte, so the harness judges exactly what the client wrote to its server's stdin.
Standard library only: it starts fast and imports nothing of the harness.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import struct
import sys
import threading

#: Set once the client closed the relay's stdin (the stdio transport's orderly shutdown begins so).
STDIN_CLOSED = threading.Event()


def _pump_in(sock: socket.socket) -> None:
    """stdin to the harness until the client closes it, then half-close the connection."""
    fd = sys.stdin.fileno()
    while True:
        data = os.read(fd, 65536)
        if not data:
            break
        sock.sendall(data)
    STDIN_CLOSED.set()
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def _on_sigterm(sock: socket.socket) -> None:
    """SIGTERM: when the client signals the server before closing its stdin, the harness is told by a
    reset connection (an orderly close is a plain end of stream), then the relay exits as signalled."""
    if not STDIN_CLOSED.is_set():
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
    os._exit(128 + signal.SIGTERM)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relay", description=__doc__)
    parser.add_argument("--connect", required=True, help="HOST:PORT of the harness's scenario server")
    args = parser.parse_args(argv)
    host, _, port = args.connect.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.settimeout(None)
    signal.signal(signal.SIGTERM, lambda *_: _on_sigterm(sock))
    threading.Thread(target=_pump_in, args=(sock,), daemon=True).start()
    out = sys.stdout.fileno()
    while True:
        data = sock.recv(65536)
        if not data:
            return 0
        os.write(out, data)


if __name__ == "__main__":
    sys.exit(main())

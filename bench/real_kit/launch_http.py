"""Launch an HTTP MCP server on a free loopback port and print `LISTENING <url>` once it accepts.

Why: the harness launches an HTTP target from a command that prints `LISTENING <url>`; most servers take
a port as an option and print nothing of the kind. This picks a port (the kernel's choice on 127.0.0.1),
puts it where the command says `{port}`, starts the server in this process group (the harness ends the
group) and waits, bounded, for the port to accept a connection before printing the line.

    python launch_http.py --url http://127.0.0.1:{port}/mcp -- COMMAND ... {port} ...
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

#: Seconds a server may take to accept its first connection.
READY_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _wait_ready(child: subprocess.Popen[bytes], port: int) -> bool:
    """True once the port accepts; False if the child exited or the wait ran out."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return False
        if _accepts(port):
            return True
        time.sleep(0.1)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    port = _free_port()
    env = {key: value.replace("{port}", str(port)) for key, value in os.environ.items()}
    command = [part.replace("{port}", str(port)) for part in argv]
    child = subprocess.Popen(command, env=env, stdout=sys.stderr)

    def _end(*_: object) -> None:
        child.terminate()
        sys.exit(143)

    signal.signal(signal.SIGTERM, _end)
    if not _wait_ready(child, port):
        child.kill()
        print(f"launch_http: the server did not accept on port {port}", file=sys.stderr)
        return 1
    print(f"LISTENING {args.url.replace('{port}', str(port))}", flush=True)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())

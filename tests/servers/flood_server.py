"""A hostile MCP server that floods: for the methods it is told to, it sends notifications as fast as
the harness reads them and never answers; every other request gets the conformant raw server's answer.

    python -m tests.servers.flood_server [--http] [--flood METHODS] [--hang METHODS] [--announce PORT]
                                         [--pad BYTES] [--tag TAG]

Over HTTP (`--http`, 127.0.0.1, an ephemeral port, `LISTENING http://127.0.0.1:<port>/mcp` once it
accepts connections) a flooded request is answered with an SSE stream of `notifications/message`
events that never carries the response; over stdio the same notifications go out as JSON lines, and
the server reads nothing more until the harness gives up on it (and stops the process). A method of
`--hang` is never answered and draws nothing either (the server sleeps). Every flood and hang is
bounded (`FLOOD_SECONDS`), so a server that outlives its harness still ends by itself. With
`--announce PORT` it says `hang METHOD` (or `flood METHOD`) in one line to 127.0.0.1:PORT as it starts
one, so a test waits on that event, not on a guess of how long the harness takes to get there. `--tag`
is ignored: it lets a test find exactly its own processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers import loopback
from tests.servers.raw_server import Server

#: The longest a flood or a hang lasts, so no test's server runs on forever.
FLOOD_SECONDS = 300.0
#: How many notifications go out per write: a flood of big writes, as a fast server sends them.
BATCH = 200
#: Bytes of padding in each notification's data (`--pad`): larger ones spend the harness's transcript
#: budget in seconds.
PAD = [400]


def notification(n: int) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "logger": "flood", "data": f"notification {n} " + "x" * PAD[0]},
    }
    return json.dumps(message).encode()


ANNOUNCE: list[int] = []


def announce(what: str) -> None:
    """Tell the test listening on `--announce PORT` what starts now (best effort, bounded)."""
    if not ANNOUNCE:
        return
    import socket

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", ANNOUNCE[0]), timeout=5) as s:
        s.sendall(what.encode() + b"\n")


def _methods(text: str) -> set[str]:
    return {m.strip() for m in text.split(",") if m.strip()}


def serve_stdio(flood: set[str], hang: set[str]) -> None:
    server = Server("none")
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if method in hang:
            announce(f"hang {method}")
            time.sleep(FLOOD_SECONDS)
            return
        if method in flood and isinstance(message, dict) and "id" in message:
            announce(f"flood {method}")
            deadline = time.monotonic() + FLOOD_SECONDS
            n = 0
            while time.monotonic() < deadline:
                out.write(b"".join(notification(n + k) + b"\n" for k in range(BATCH)))
                out.flush()
                n += BATCH
            return
        response = server.handle_line(line.rstrip(b"\r\n"))
        if response is not None:
            out.write(json.dumps(response).encode() + b"\n")
            out.flush()


def serve_http(flood: set[str], hang: set[str]) -> None:
    server = Server("none")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self) -> None:
            self.do_GET()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            method = message.get("method") if isinstance(message, dict) else None
            if method in hang:
                announce(f"hang {method}")
                time.sleep(FLOOD_SECONDS)
                return
            if method in flood and isinstance(message, dict) and "id" in message:
                announce(f"flood {method}")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                deadline = time.monotonic() + FLOOD_SECONDS
                n = 0
                with contextlib.suppress(OSError):  # the harness hung up: the flood ends
                    while time.monotonic() < deadline:
                        self.wfile.write(
                            b"".join(
                                b"event: message\ndata: " + notification(n + k) + b"\n\n"
                                for k in range(BATCH)
                            )
                        )
                        self.wfile.flush()
                        n += BATCH
                self.close_connection = True
                return
            response = server.handle(message) if message is not None else None
            if message is None:
                response = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            data = json.dumps(response).encode() if response is not None else b""
            loopback.send(self, 200 if response is not None else 202, data)

    loopback.serve(Handler)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--flood", default="tools/list,tools/call", help="methods answered by a flood")
    parser.add_argument("--hang", default="", help="methods never answered (the server sleeps)")
    parser.add_argument("--announce", type=int, default=0, help="a port on 127.0.0.1 to say what starts")
    parser.add_argument("--pad", type=int, default=PAD[0], help="bytes of padding per notification")
    parser.add_argument("--tag", default="", help="ignored: lets a test find exactly its own processes")
    args = parser.parse_args()
    flood, hang = _methods(args.flood), _methods(args.hang)
    if args.announce:
        ANNOUNCE.append(args.announce)
    PAD[0] = args.pad
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve_http(flood, hang) if args.http else serve_stdio(flood, hang)


if __name__ == "__main__":
    main()

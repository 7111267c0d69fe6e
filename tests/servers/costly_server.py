"""Servers that cost their client: hangs that would eat a run's time, processes that outlive a close.

    python -m tests.servers.costly_server hang-tools [TAG] [--log FILE] [--http]
    python -m tests.servers.costly_server setsid-grandchild TAG [--http]
    python -m tests.servers.costly_server stdout-holder TAG [--http]
    python -m tests.servers.costly_server stubborn TAG

Every mode is the conformant raw server (three revisions) with one fault. TAG is an argument every
process of the mode carries in its command line, so a test can look for what is left after a run.

With `--http` (not `stubborn`) the server speaks Streamable HTTP instead: a threading HTTP server on
127.0.0.1, an ephemeral port, `LISTENING http://127.0.0.1:<port>/mcp` once it accepts connections. Each
POST is answered with application/json on its own thread, so a tools/call that hangs (its request read,
no response ever written, the connection held open) blocks nothing else. The stray of
`setsid-grandchild` and `stdout-holder` is started before the server listens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.servers.raw_server import META_VERSION, STATUS, Server

MODES = {
    "hang-tools": "six read-only tools; every tools/call is read and never answered",
    "setsid-grandchild": "starts a child that calls setsid() and sleeps, so a process-group kill misses it",
    "stdout-holder": "starts a child in a session of its own that keeps the server's stdout open and "
    "sleeps, so stdout does not end when the server exits",
    "stubborn": "a setsid-grandchild server that ignores SIGTERM and outlives the end of its stdin, so "
    "only SIGKILL ends it (a close has to wait it out)",
}
#: Six read-only tools with nothing required: each one is callable under the default `--call-tools safe`.
HANGING_TOOLS = [
    {
        "name": f"slow_{n}",
        "description": f"Never answers ({n}).",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": {"readOnlyHint": True},
    }
    for n in range(1, 7)
]
#: The longest an HTTP tools/call hangs, so a server that outlives its harness still ends by itself.
HANG_SECONDS = 300.0
#: How long a stray child sleeps: far longer than any test, so only a kill ends it.
STRAY_SECONDS = 600


class HangingTools(Server):
    def __init__(self) -> None:
        super().__init__("none")

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [dict(tool) for tool in HANGING_TOOLS]}
        return super().method(method, params, revision)


def stray(tag: str, *, stdout: Any) -> None:
    """Start a child that leaves the process group (setsid) and sleeps; `stdout` is what it holds."""
    code = f"import os, time; os.setsid(); time.sleep({STRAY_SECONDS})"
    subprocess.Popen(
        [sys.executable, "-c", code, tag],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
    )


def serve_stdio(mode: str, tag: str, log: str = "") -> None:
    server: Server = HangingTools() if mode == "hang-tools" else Server("none")
    if mode in ("setsid-grandchild", "stubborn"):
        stray(tag, stdout=subprocess.DEVNULL)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "stdout-holder":
        stray(tag, stdout=None)  # inherits the server's stdout
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if mode == "hang-tools" and isinstance(message, dict) and message.get("method") == "tools/call":
                log_unanswered(log, message, server.revision)
                continue  # read, never answered; everything else still is
        response = server.handle_line(line.rstrip(b"\r\n"))
        if response is not None:
            out.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")
            out.flush()
    if mode == "stubborn":
        time.sleep(STRAY_SECONDS)


def log_unanswered(log: str, message: dict[str, Any], revision: str | None) -> None:
    """One line per call left unanswered, naming the revision it came in."""
    if log:
        meta = (message.get("params") or {}).get("_meta") or {}
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{meta.get(META_VERSION) or revision}\n")


def serve_http(mode: str, tag: str, log: str = "") -> None:
    """A mode over Streamable HTTP: with hang-tools every tools/call is read and never answered."""
    server: Server = HangingTools() if mode == "hang-tools" else Server("none")
    if mode == "setsid-grandchild":
        stray(tag, stdout=subprocess.DEVNULL)
    if mode == "stdout-holder":
        stray(tag, stdout=None)  # inherits the server's stdout, which the harness reads for LISTENING
    lock = threading.Lock()  # the raw server's state (its revision) is one per process
    stop = threading.Event()  # never set: a hanging call waits on it, bounded by HANG_SECONDS

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status == 405:
                self.send_header("Allow", "POST")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self.reply(405)

        def do_DELETE(self) -> None:
            self.reply(405)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                message = json.loads(body)
            except ValueError:
                error = {"code": -32700, "message": "Parse error"}
                self.reply(400, json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())
                return
            if mode == "hang-tools" and isinstance(message, dict) and message.get("method") == "tools/call":
                with lock:  # over HTTP each request names its revision in its MCP-Protocol-Version header
                    log_unanswered(log, message, self.headers.get("MCP-Protocol-Version") or server.revision)
                stop.wait(HANG_SECONDS)  # read, never answered; the other threads still answer
                self.close_connection = True
                return
            with lock:
                response = server.handle(message)
            if response is None:
                self.reply(202)
                return
            status = STATUS.get(response["error"].get("code"), 200) if "error" in response else 200
            self.reply(status, json.dumps(response).encode())

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    print(f"LISTENING http://127.0.0.1:{httpd.server_address[1]}/mcp", flush=True)
    httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=sorted(MODES))
    parser.add_argument("tag", nargs="?", default="")
    parser.add_argument("--log", default="", help="append the revision of each unanswered tools/call here")
    parser.add_argument("--http", action="store_true", help="Streamable HTTP (not stubborn)")
    args = parser.parse_args()
    if args.http and args.mode == "stubborn":
        parser.error("stubborn is a stdio server only")
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if args.http:
            serve_http(args.mode, args.tag, args.log)
        else:
            serve_stdio(args.mode, args.tag, args.log)


if __name__ == "__main__":
    main()

"""Misbehaving servers, one fault each, for proving that the harness survives them.

    python -m tests.servers.chaos_server MODE            stdio faults
    python -m tests.servers.chaos_server --http MODE     HTTP faults (prints LISTENING <url>)

Every mode starts from the conformant raw server, so only the planted fault can explain what the
harness reports.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from conformance.protocol.versions import TESTED_REVISIONS as REVISIONS
from tests.servers import loopback
from tests.servers.raw_server import RpcError, Server

STDIO_MODES = {
    "hang-first": "never answers anything",
    "hang-call": "answers everything but hangs forever on tools/call",
    "crash-mid": "exits with status 1 when it receives its 6th request",
    "exit-0": "exits at once with status 0",
    "garbage": "writes a junk line before every response",
    "bad-utf8": "writes a line of invalid UTF-8 at start",
    "huge": "answers the first tools/list with one 50 MB message",
    "near-cap": "answers the first tools/list with one message just under the 16 MB cap",
    "tiny-values": "answers the first tools/list with one message under the 16 MB cap made of five million"
    " empty arrays",
    "dup-id": "sends every response twice",
    "flood-notify": "sends 2,000 notifications (of no MCP method) before every response",
    "flood-stderr": "writes 20 MB to stderr at start",
    "leak-secret": "echoes the CANARY environment variable in serverInfo, errors, stdout junk and stderr",
    # Hostile after initialize: each process answers its handshake honestly, then tools/list (or any
    # request) with the fault, so a restart meets it again; `--log` names every request received.
    "endless-line": "answers tools/list with a 100 MB line that never ends (no newline), then stays silent",
    "deep-nest": "answers tools/list with a result nested 100,000 arrays deep",
    "orphan-stdout": "at its first request after the handshake, whatever it is, starts a child (a session"
    " of its own) that holds stdout, and exits",
}
#: The stdio modes hostile after initialize: they log what they receive to `--log FILE`.
AFTER_INIT = ("endless-line", "deep-nest", "orphan-stdout")
#: How deep `deep-nest` nests its answer: far past any recursive parser's default limit.
NEST_DEPTH = 100_000
#: How long a hostile process holds on once it has struck (only a kill ends it sooner).
HOLD_SECONDS = 600
HTTP_MODES = {
    "http-500": "answers every POST with HTTP 500 and an HTML page",
    "http-trickle": "sends its JSON body one byte every 0.5 s",
    "http-reset": "closes the connection without answering tools/list",
    "http-ctype": "answers with text/html instead of JSON",
    "http-sse-forever": "opens an SSE stream for tools/list that sends pings and never the answer",
    "http-leak-secret": "echoes the Authorization header it received in every error message and header"
    ' (a parse error, with id "leak", too)',
    "http-redirect": "answers every POST with a 307 redirect to another origin",
    "http-near-cap": "answers the first tools/list with an SSE event just under the 16 MB cap",
    "http-tiny-values": "answers the first tools/list with a JSON body under the 16 MB cap made of five"
    " million empty arrays",
    "sse-offsite-endpoint": "a 2024-11-05 SSE endpoint whose `endpoint` event points at another origin",
}


class LeakyServer(Server):
    """Repeats a secret wherever a harness might copy server text: serverInfo, errors, headers."""

    def __init__(self, secret: str) -> None:
        super().__init__("none")
        self.secret = secret

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        result = super().dispatch(method, params, headers)
        if method == "initialize":
            result["serverInfo"]["name"] = f"leaky {self.secret}"
        return result

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        try:
            return super().method(method, params, revision)
        except RpcError as exc:
            exc.message += f" (token {self.secret})"
            raise


#: A message's padding that keeps it just under the harness's 16 MiB message cap.
NEAR_CAP_PAD = 16 * 1024 * 1024 - 4096


def near_cap(msg_id: Any) -> bytes:
    """A tools/list answer just under the message cap: the most a message can make the harness hold."""
    payload = {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [], "pad": "x" * NEAR_CAP_PAD}}
    return json.dumps(payload).encode()


def tiny_values(msg_id: Any) -> bytes:
    """A tools/list answer under the message cap made of five million `[]`: small on the wire, some 400
    MB of Python objects once parsed (what the harness's cap on JSON values refuses)."""
    head = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [], "pad": []}}).encode()
    return head[: -len(b"]}}")] + b",".join([b"[]"] * 5_000_000) + b"]}}"


def log_line(log: str, text: str) -> None:
    """Append one line to `log` (when given): a test counts starts and requests from it, not from time."""
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(text + "\n")


def strike(mode: str, msg_id: Any, out: Any) -> None:
    """What a server hostile after initialize does to the request it strikes at (`AFTER_INIT`): only
    `deep-nest` answers it (one line no parser with a recursion limit reads); the others never do."""
    if mode == "deep-nest":
        body = b"[" * NEST_DEPTH + b"]" * NEST_DEPTH
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode() + b',"result":{"tools":'
        out.write(head + body + b"}}\n")
        out.flush()
        return
    if mode == "endless-line":
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            out.write(chunk)
        out.flush()
        time.sleep(HOLD_SECONDS)
    if mode == "orphan-stdout":
        code = f"import os, time; os.setsid(); time.sleep({HOLD_SECONDS})"
        subprocess.Popen([sys.executable, "-c", code, *sys.argv[1:]], stdin=subprocess.DEVNULL)
        os._exit(0)


def serve_stdio(mode: str, log: str = "") -> None:
    out = sys.stdout.buffer
    server = LeakyServer(os.environ.get("CANARY", "")) if mode == "leak-secret" else Server("none")
    if mode == "leak-secret":
        sys.stderr.write(f"starting with token {os.environ.get('CANARY')}\n")
        sys.stderr.flush()
        out.write(f"debug token={os.environ.get('CANARY')}\n".encode())
        out.flush()
    if mode == "exit-0":
        return
    if mode == "bad-utf8":
        out.write(b"\xff\xfe not utf-8 \xc3\x28\n")
        out.flush()
    if mode == "flood-stderr":
        chunk = b"e" * 1023 + b"\n"
        for _ in range(20 * 1024):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
    requests = 0
    sent_huge = sent_near = shaken = False
    for line in sys.stdin.buffer:
        if mode == "hang-first":
            time.sleep(3600)
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and "id" in message:
            requests += 1
        if mode == "crash-mid" and requests == 6:
            sys.exit(1)
        method = message.get("method") if isinstance(message, dict) else None
        if mode in AFTER_INIT and isinstance(method, str) and "id" in message:
            log_line(log, method)
            # orphan-stdout strikes at the first request after the handshake, whatever it is.
            handshake = method in ("initialize", "server/discover")
            shaken = shaken or handshake
            if method == "tools/list" or (mode == "orphan-stdout" and shaken and not handshake):
                log_line(log, f"struck:{method}")
                strike(mode, message["id"], out)
                continue
        if mode == "hang-call" and method == "tools/call":
            time.sleep(3600)
        if mode == "huge" and method == "tools/list" and not sent_huge:
            sent_huge = True
            payload = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {"tools": [], "pad": "x" * 50_000_000},
            }
            out.write(json.dumps(payload).encode() + b"\n")
            out.flush()
            continue
        if mode in ("near-cap", "tiny-values") and method == "tools/list" and not sent_near:
            sent_near = True
            out.write((near_cap if mode == "near-cap" else tiny_values)(message["id"]) + b"\n")
            out.flush()
            continue
        response = server.handle_line(line.rstrip(b"\r\n"))
        if response is None:
            continue
        data = json.dumps(response).encode() + b"\n"
        if mode == "garbage":
            out.write(b"DEBUG: handling a request\n")
        if mode == "flood-notify":
            note = (
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        # A notification of no MCP method: what a server may send without a
                        # capability (logging's notifications/message would need one).
                        "method": "notifications/chaos/noise",
                        "params": {"data": "x"},
                    }
                ).encode()
                + b"\n"
            )
            out.write(note * 2000)
        out.write(data)
        if mode == "dup-id":
            out.write(data)
        out.flush()


def serve_http(mode: str) -> None:
    server = Server("none")
    sent_near: list[bool] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if mode == "sse-offsite-endpoint":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"event: endpoint\ndata: http://127.0.0.2:9/messages/?session_id=x\n\n")
                self.wfile.flush()
                time.sleep(30)
                return
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            # The transport rules every mode keeps (each breaks only what it names): a foreign Origin
            # is 403, an unknown MCP-Protocol-Version 400, a POSTed response 202 with no body.
            origin = self.headers.get("Origin")
            if origin and urlsplit(origin).hostname not in ("127.0.0.1", "localhost", "::1"):
                self._send(403, b"", "application/json")
                return
            version = self.headers.get("MCP-Protocol-Version")
            if version and version not in REVISIONS:
                self._send(400, b"", "application/json")
                return
            try:
                message = json.loads(body)
            except ValueError:  # conformant here (each mode breaks only what it names), but for the leak
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
                if mode == "http-leak-secret":  # an id that FAILs parse-error, so its transcript is kept
                    error["id"] = "leak"
                    error["error"]["message"] += f" (you sent {self.headers.get('Authorization')})"
                data = json.dumps(error).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if isinstance(message, dict) and "method" not in message and "id" in message:
                self._send(202, b"", "application/json")
                return
            response = server.handle(message)
            if mode == "http-leak-secret" and response is not None and "error" in response:
                response["error"]["message"] += f" (you sent {self.headers.get('Authorization')})"
            data = json.dumps(response).encode() if response is not None else b""
            method = message.get("method")
            if mode == "http-redirect":
                self.send_response(307)
                self.send_header("Location", "http://127.0.0.2:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif mode == "http-500":
                self._send(500, b"<html><body>Internal Server Error</body></html>", "text/html")
            elif mode == "http-ctype":
                self._send(200, b"<html><body>hello</body></html>", "text/html")
            elif mode == "http-reset" and method == "tools/list":
                self.close_connection = True
                self.connection.close()
            elif mode == "http-trickle" and method == "tools/list":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.5)
            elif mode == "http-sse-forever" and method == "tools/list":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for _ in range(7200):
                    self.wfile.write(b": ping\n\n")
                    self.wfile.flush()
                    time.sleep(0.5)
            elif mode == "http-near-cap" and method == "tools/list" and not sent_near:
                sent_near.append(True)
                event = b"event: message\ndata: " + near_cap(message["id"]) + b"\n\n"
                self._send(200, event, "text/event-stream")
            elif mode == "http-tiny-values" and method == "tools/list" and not sent_near:
                sent_near.append(True)
                self._send(200, tiny_values(message["id"]), "application/json")
            elif response is None:
                self._send(202, b"", "application/json")
            else:
                self._send(200, data, "application/json")

        def _send(self, status: int, data: bytes, ctype: str) -> None:
            loopback.send(self, status, data, ctype)

    loopback.serve(Handler)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--tag", default="", help="ignored: lets a test find exactly its own processes")
    parser.add_argument("--log", default="", help="a file the hostile-after-initialize modes log to")
    parser.add_argument("mode", choices=sorted({**STDIO_MODES, **HTTP_MODES}))
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve_http(args.mode) if args.http else serve_stdio(args.mode, args.log)


if __name__ == "__main__":
    main()

"""A hostile server that echoes the secret it was given back in every form, or bidi and control text.

The raw JSON-lines server (tests/servers/raw_server.py) with its secret echoed wherever a harness could
copy server text: the HTTP status line's reason phrase, a response header, the JSON body as it is,
JSON-escaped (`\\uXXXX` in both cases, every character or a mix, `\\/`), escaped twice,
percent-encoded (both cases), in base64 (standard and URL-safe, padded and not, at all three
alignments) and as a `Basic` credential, in error messages and their data, in serverInfo and tool
descriptions, on stdout as junk and on stderr. Error messages carry a traceback, so error hygiene
reports them and the forms reach a case's message, evidence and transcript.

The secret is the bearer token of the Authorization header it receives (HTTP), or the CANARY
environment variable (stdio). With `--bidi` it echoes no secret but bidi controls, zero-width
characters and terminal escape sequences in its names and messages instead.

    python -m tests.servers.echo_secret_server [--http] [--bidi] [--tag TAG]

`--tag` is ignored: it lets a test find exactly its own processes.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

from tests.servers.raw_server import TOOLS, RpcError, Server

#: Right-to-left override, isolates, marks, zero-width characters, a C1 control and terminal escapes
#: (clear screen, a window title, a colour).
BIDI = (
    "evil\u202eexe.txt \u2066isolated\u2069 \u202aembed\u202c zw\u200dj zw\u200bsp \u061c\u200e\u200f"
    " \ufeff \x85 \x1b[2J\x1b]0;pwned\x07\x1b[31mred"
)
#: The characters of BIDI that no view may show raw.
BIDI_RAW = (
    "\u202e",
    "\u2066",
    "\u2069",
    "\u202a",
    "\u202c",
    "\u200d",
    "\u200b",
    "\u061c",
    "\u200e",
    "\u200f",
    "\ufeff",
    "\x85",
    "\x1b",
    "\x07",
)


def _escaped(text: str, *, upper: bool = False, every: int = 1) -> str:
    """`text` with every `every`-th character as a JSON `\\uXXXX` escape (hex in the given case)."""
    out = []
    for i, char in enumerate(text):
        if i % every:
            out.append(char)
        else:
            code = f"{ord(char):04x}"
            out.append("\\u" + (code.upper() if upper else code))
    return "".join(out)


def _percent(text: str, *, upper: bool) -> str:
    """Every byte of `text` percent-encoded, hex in the given case."""
    return "".join(("%{:02X}" if upper else "%{:02x}").format(b) for b in text.encode("utf-8"))


def text_forms(secret: str) -> dict[str, str]:
    """Forms of `secret` that are text in any JSON string (no JSON escape of their own)."""
    forms = {
        "raw": secret,
        "percent-upper": _percent(secret, upper=True),
        "percent-lower": _percent(secret, upper=False),
        "percent-quoted": quote(secret, safe=""),
        "basic": "Basic " + base64.b64encode(f"user:{secret}".encode()).decode(),
    }
    for lead in ("", "a", "ab"):
        data = (lead + secret + "!").encode()
        for name, encode in (("std", base64.b64encode), ("url", base64.urlsafe_b64encode)):
            encoded = encode(data).decode()
            forms[f"base64-{name}-{len(lead)}"] = encoded
            forms[f"base64-{name}-{len(lead)}-unpadded"] = encoded.rstrip("=")
    return forms


#: JSON escapes put into a body as they are (the placeholder is replaced after serialising).
ESCAPED_FORMS = {
    "@@json-lower@@": lambda s: _escaped(s),
    "@@json-upper@@": lambda s: _escaped(s, upper=True),
    "@@json-mixed@@": lambda s: _escaped(s, upper=True, every=2),
    "@@json-slash@@": lambda s: s.replace("/", "\\/"),
    "@@json-twice@@": lambda s: _escaped(s).replace("\\", "\\\\"),
}


def body(message: Any, secret: str) -> bytes:
    """`message` as JSON, its placeholders replaced by the secret's JSON escapes (in the body as is)."""
    text = json.dumps(message)
    for placeholder, form in ESCAPED_FORMS.items():
        text = text.replace(placeholder, form(secret))
    return text.encode()


class EchoServer(Server):
    def __init__(self, secret: str, bidi: bool) -> None:
        super().__init__("none")
        self.secret = secret
        self.bidi = bidi

    def echo(self) -> str:
        """What this server echoes in a string: every form, or the bidi payload."""
        if self.bidi:
            return BIDI
        forms = [*text_forms(self.secret).values(), *ESCAPED_FORMS]
        return " | ".join(forms)

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        result = super().dispatch(method, params, headers)
        if method == "initialize":
            result["serverInfo"] = {"name": "echo " + self.echo(), "version": "1.0.0"}
            result["instructions"] = self.echo()
        return result

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        if method == "tools/list":
            name = f"echo{BIDI}" if self.bidi else "echo"
            tools = [{**TOOLS[0], "name": name, "description": self.echo()}, TOOLS[1]]
            return {"tools": tools}
        try:
            return super().method(method, params, revision)
        except RpcError as exc:
            trace = '\nTraceback (most recent call last):\n  File "/srv/app.py", line 1, in handle'
            data = {"echo": self.echo(), "forms": text_forms(self.secret) if not self.bidi else {}}
            raise RpcError(exc.code, f"{exc.message}: {self.echo()}{trace}", data) from None


def serve_stdio(server: EchoServer) -> None:
    out = sys.stdout.buffer
    sys.stderr.write(f"starting with {server.echo()}\n")
    sys.stderr.flush()
    out.write(b"debug: " + body(server.echo(), server.secret) + b"\n")  # junk on stdout (no JSON-RPC)
    out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        response = server.handle_line(line.rstrip(b"\r\n"))
        if response is not None:
            out.write(body(response, server.secret) + b"\n")
            out.flush()


def serve_http(bidi: bool) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, server: EchoServer, status: int, data: bytes) -> None:
            forms = text_forms(server.secret)
            reason = "OK " + (BIDI if bidi else f"{server.secret} {forms['percent-lower']} {forms['basic']}")
            self.send_response(status, reason.encode("utf-8").decode("latin-1"))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Echo", server.secret if not bidi else "bidi")
            self.send_header("X-Echo-Base64", forms["base64-std-1"])
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.reply(self.server_for_request(), 405, b"")

        def do_DELETE(self) -> None:
            self.reply(self.server_for_request(), 405, b"")

        def server_for_request(self) -> EchoServer:
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            server = SERVERS.get(token)
            if server is None:
                server = SERVERS[token] = EchoServer(token, bidi)
            return server

        def do_POST(self) -> None:
            server = self.server_for_request()
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            response = server.handle_line(data)
            if response is None:
                self.reply(server, 202, b"")
                return
            status = 200 if "error" not in response or response["error"]["code"] != -32700 else 400
            self.reply(server, status, body(response, server.secret))

    SERVERS: dict[str, EchoServer] = {}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    sys.stderr.write(f"starting; secrets are echoed as {BIDI if bidi else 'they come'}\n")
    print(f"LISTENING http://127.0.0.1:{httpd.server_address[1]}/mcp", flush=True)
    httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--bidi", action="store_true")
    parser.add_argument("--tag", default="", help="ignored: lets a test find exactly its own processes")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        if args.http:
            serve_http(args.bidi)
        else:
            serve_stdio(EchoServer(os.environ.get("CANARY", ""), args.bidi))


if __name__ == "__main__":
    main()

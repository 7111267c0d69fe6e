"""The reference base server with one planted transport defect, for proving the HTTP, session and stdio
checks of the base pack (BASE-ORIGIN-*, BASE-HTTP-010+, BASE-SESS-*, BASE-STDIO-010+).

HTTP defects wrap the reference's Streamable HTTP app in an ASGI middleware that changes one thing; stdio
defects change what the process does around the reference's stdio loop. Everything else is the
reference, in every revision it speaks.

    python -m tests.servers.base_http_mutants --defect NAME [--http [--sse] --port 0]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference import base_server, serving

HTTP_DEFECTS = {
    "origin-ignored": "serves a request whatever its Origin header says",
    "origin-400": "refuses a foreign Origin with 400, not 403",
    "origin-500": "refuses a foreign Origin with 500 text/plain, not 403",
    "notify-200": "answers a POSTed notification with 200 and a JSON body",
    "response-200": "answers a POSTed JSON-RPC response with 200 and a JSON body",
    "session-id-space": "assigns an Mcp-Session-Id with a space in it",
    "session-optional": "serves a legacy request without Mcp-Session-Id on the last session it assigned",
    "delete-ignored": "answers DELETE of a session with 200 but keeps the session",
    "reinit-refused": "refuses an initialize on a connection that was answered 404 for an ended session",
    "bad-version-accepted": "serves a legacy session's request whose MCP-Protocol-Version it does not know",
    "unknown-method-200": "answers an unknown 2026-07-28 method with HTTP 200 (the -32601 error kept)",
    "method-header-optional": "takes a 2026-07-28 request without Mcp-Method (as if it named the body's)",
    "name-header-unchecked": "ignores Mcp-Name: a 2026-07-28 request's body name wins",
    "meta-optional": "takes a 2026-07-28 request whose _meta has no clientCapabilities",
    "method-value-folded": "compares the Mcp-Method value without case",
    "sse-request": "sends a ping request on the SSE stream of each 2026-07-28 tools/list answer",
    "get-silent": "sends no status line to a GET until the client goes away (as a server that buffers a"
    " whole stream does)",
    "posts-one-at-a-time": "refuses with 409 a request POSTed while another is in flight",
    "own-origin-refused": "refuses with 403 every request that carries an Origin, its own included",
    "error-id-null": "answers a 2026-07-28 request with an error whose id is null",
    "client-info-required": "refuses a 2026-07-28 request whose _meta has no clientInfo (-32602, 400)",
    "priming-dropped": "leaves out the priming event (an ID, empty data) of each SSE stream a POST opens",
}
STDIO_DEFECTS = {
    "stdin-ignored": "keeps running after its stdin is closed (until signalled)",
    "stdout-request": "writes a JSON-RPC ping request to stdout when it starts",
    "stdio-meta-optional": "takes a 2026-07-28 request whose _meta has no clientCapabilities (stdio)",
    "stdio-version-accepted": "serves a 2026-07-28 request whose _meta names an unknown version (stdio)",
    "stdio-version-checked-early": "checks the _meta protocol version of a process's first three requests"
    " only, and serves a later one that names an unknown version (stdio)",
}
#: Defects of the legacy HTTP+SSE transport's endpoints (`--http --sse`).
SSE_DEFECTS = {
    "cancel-ignored": "accepts a POSTed notifications/cancelled (202) without passing it on, so the"
    " cancelled call runs on and is answered",
}
DEFECTS = {**HTTP_DEFECTS, **STDIO_DEFECTS, **SSE_DEFECTS}
MODERN = "2026-07-28"
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOCAL_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]")
#: The id prefix of the requests BASE-HTTP-023 POSTs at once, and how long the first of them is held
#: for a second to arrive (so they overlap whatever the machine's speed).
CONCURRENT_ID = "conformance-concurrent"
HOLD = 2.0


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _with_header(scope: Scope, name: bytes, value: str | None) -> Scope:
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != name]
    if value is not None:
        headers.append((name, value.encode("latin-1")))
    return {**scope, "headers": headers}


async def _body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a `receive` that replays it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


async def _respond(send: Send, status: int, body: bytes = b"", ctype: bytes = b"application/json") -> None:
    headers = [(b"content-type", ctype), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _on_status(send: Send, change: Callable[[int], int]) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "status": change(message["status"])}
        await send(message)

    return wrapped


class Defect:
    """ASGI middleware planting one defect in front of the reference's Streamable HTTP app."""

    def __init__(self, app: ASGIApp, defect: str) -> None:
        self.app = app
        self.defect = defect
        self.last_session: str | None = None
        self.ended: set[str] = set()
        self.answered_404: set[Any] = set()
        self.in_flight = 0
        self.arrived = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        handler = getattr(self, "_" + self.defect.replace("-", "_"))
        await handler(scope, receive, send)

    # -- cancellation
    async def _cancel_ignored(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            await _respond(send, 202)
            return
        await self.app(scope, replay, send)

    # -- Origin
    async def _origin_ignored(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(_with_header(scope, b"origin", None), receive, send)

    async def _origin_400(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin")
        if origin is not None and not origin.startswith(LOCAL_ORIGINS):
            await _respond(send, 400, b"bad origin\n", b"text/plain")
            return
        await self.app(scope, receive, send)

    async def _origin_500(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin")
        if origin is not None and not origin.startswith(LOCAL_ORIGINS):
            await _respond(send, 500, b"origin not allowed\n", b"text/plain")
            return
        await self.app(scope, receive, send)

    async def _own_origin_refused(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _header(scope, b"origin") is not None:
            await _respond(send, 403, b"origin not allowed\n", b"text/plain")
            return
        await self.app(scope, receive, send)

    # -- concurrent requests
    async def _posts_one_at_a_time(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        probe = isinstance(message, dict) and str(message.get("id", "")).startswith(CONCURRENT_ID)
        if not probe:
            await self.app(scope, replay, send)
            return
        if self.in_flight:
            self.arrived.set()
            await _respond(send, 409, b"another request is in flight\n", b"text/plain")
            return
        self.in_flight += 1
        self.arrived = asyncio.Event()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), HOLD)
            await self.app(scope, replay, send)
        finally:
            self.in_flight -= 1

    async def _priming_dropped(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return

        sse = False

        async def unprimed(message: Message) -> None:
            nonlocal sse
            if message["type"] == "http.response.start":
                sse = any(
                    v.startswith(b"text/event-stream")
                    for k, v in message.get("headers", [])
                    if k.lower() == b"content-type"
                )
            elif message["type"] == "http.response.body" and sse:
                message = {**message, "body": _without_empty_events(message.get("body", b""))}
            await send(message)

        await self.app(scope, receive, unprimed)

    # -- 2026-07-28 errors and _meta
    async def _error_id_null(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or _header(scope, b"mcp-protocol-version") != MODERN:
            await self.app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        answer = _json(body)
        if isinstance(answer, dict) and "error" in answer:
            body = json.dumps({**answer, "id": None}).encode()
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", b"%d" % len(body)))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _client_info_required(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if (
            isinstance(meta, dict)
            and CAPABILITIES_KEY in meta
            and "io.modelcontextprotocol/clientInfo" not in meta
        ):
            error = {"code": -32602, "message": "clientInfo is required"}
            answer = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error}).encode()
            await _respond(send, 400, answer)
            return
        await self.app(scope, replay, send)

    # -- notifications and responses POSTed
    async def _notify_200(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._answer_kind(scope, receive, send, lambda m: "method" in m and "id" not in m)

    async def _response_200(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._answer_kind(scope, receive, send, lambda m: "method" not in m and "id" in m)

    async def _answer_kind(
        self, scope: Scope, receive: Receive, send: Send, kind: Callable[[dict], bool]
    ) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        if scope["method"] == "POST" and isinstance(message, dict) and kind(message):
            # The reference sees it first (so a session still opens), then the answer is replaced.
            await self.app(scope, replay, _swallow())
            await _respond(send, 200, b'{"jsonrpc":"2.0","result":{}}')
            return
        await self.app(scope, replay, send)

    # -- sessions
    async def _session_id_space(self, scope: Scope, receive: Receive, send: Send) -> None:
        sid = _header(scope, b"mcp-session-id")
        if sid is not None:
            scope = _with_header(scope, b"mcp-session-id", sid.replace(" ", ""))

        async def spaced(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v[:8] + b" " + v[8:] if k.lower() == b"mcp-session-id" else v)
                    for k, v in message.get("headers", [])
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, spaced)

    async def _session_optional(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        legacy = _header(scope, b"mcp-protocol-version") != MODERN
        is_init = isinstance(message, dict) and message.get("method") == "initialize"
        if legacy and not is_init and _header(scope, b"mcp-session-id") is None and self.last_session:
            scope = _with_header(scope, b"mcp-session-id", self.last_session)

        async def remember(out: Message) -> None:
            if out["type"] == "http.response.start":
                for k, v in out.get("headers", []):
                    if k.lower() == b"mcp-session-id":
                        self.last_session = v.decode("latin-1")
            await send(out)

        await self.app(scope, replay, remember)

    async def _delete_ignored(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "DELETE" and _header(scope, b"mcp-session-id"):
            await _respond(send, 200)
            return
        await self.app(scope, receive, send)

    async def _reinit_refused(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        body, replay = await _body(receive)
        message = _json(body)
        if (
            isinstance(message, dict)
            and message.get("method") == "initialize"
            and client in self.answered_404
        ):
            await _respond(send, 400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}')
            return

        def note(status: int) -> int:
            if status == 404 and _header(scope, b"mcp-session-id"):
                self.answered_404.add(client)
            return status

        await self.app(scope, replay, _on_status(send, note))

    async def _bad_version_accepted(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = _header(scope, b"mcp-protocol-version")
        known = ("2025-03-26", "2025-06-18", "2025-11-25", MODERN)
        if _header(scope, b"mcp-session-id") and version is not None and version not in known:
            scope = _with_header(scope, b"mcp-protocol-version", None)
        await self.app(scope, receive, send)

    async def _get_silent(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        while (await receive())["type"] != "http.disconnect":
            pass  # nothing is sent: no status line, ever

    # -- 2026-07-28 request rules
    async def _unknown_method_200(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _header(scope, b"mcp-protocol-version") == MODERN:
            send = _on_status(send, lambda status: 200 if status == 404 else status)
        await self.app(scope, receive, send)

    async def _method_header_optional(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        modern = _header(scope, b"mcp-protocol-version") == MODERN
        if (
            modern
            and isinstance(message, dict)
            and "method" in message
            and _header(scope, b"mcp-method") is None
        ):
            scope = _with_header(scope, b"mcp-method", str(message["method"]))
        await self.app(scope, replay, send)

    async def _name_header_unchecked(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        if isinstance(message, dict) and message.get("method") in NAME_PARAMS:
            params = message.get("params") or {}
            value = params.get(NAME_PARAMS[message["method"]]) if isinstance(params, dict) else None
            if isinstance(value, str) and value.isascii():
                scope = _with_header(scope, b"mcp-name", value)
        await self.app(scope, replay, send)

    async def _method_value_folded(self, scope: Scope, receive: Receive, send: Send) -> None:
        value = _header(scope, b"mcp-method")
        if value is not None:
            scope = _with_header(scope, b"mcp-method", value.lower())
        await self.app(scope, receive, send)

    async def _sse_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _header(scope, b"mcp-protocol-version") != MODERN or _header(scope, b"mcp-method") != "tools/list":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        sse = False

        async def capture(message: Message) -> None:
            nonlocal sse
            if message["type"] == "http.response.start":
                sse = any(
                    v.startswith(b"text/event-stream")
                    for k, v in message.get("headers", [])
                    if k == b"content-type"
                )
            if message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        ping = b'event: message\ndata: {"jsonrpc":"2.0","id":"mutant-ping","method":"ping"}\n\n'
        stream = ping + (body if sse else b"event: message\ndata: " + body + b"\n\n")
        await _respond(send, 200, stream, b"text/event-stream")

    async def _meta_optional(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await _body(receive)
        message = _json(body)
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and CAPABILITIES_KEY not in meta:
            meta[CAPABILITIES_KEY] = {}
            body = json.dumps(message).encode()
            scope = _with_header(scope, b"content-length", str(len(body)))
            body_sent = False

            async def patched() -> Message:
                nonlocal body_sent
                if not body_sent:
                    body_sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            replay = patched
        await self.app(scope, replay, send)


def _without_empty_events(chunk: bytes) -> bytes:
    """An SSE chunk without its events that carry no data (whole events per chunk, as the SDK sends)."""
    events = chunk.replace(b"\r\n", b"\n").split(b"\n\n")
    kept = [
        e
        for e in events
        if not e.strip() or any(line.startswith(b"data:") and line[5:].strip() for line in e.split(b"\n"))
    ]
    return b"\n\n".join(kept)


def _swallow() -> Send:
    async def drop(message: Message) -> None:
        return None

    return drop


def _patch_meta(line: bytes, patch: Callable[[dict[str, Any]], None]) -> bytes:
    """The client line with `patch` applied to a 2026-07-28 request's `_meta` (other lines as they came)."""
    message = _json(line)
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or "io.modelcontextprotocol/protocolVersion" not in meta:
        return line
    patch(meta)
    return json.dumps(message).encode() + b"\n"


def _add_capabilities(meta: dict[str, Any]) -> None:
    meta.setdefault(CAPABILITIES_KEY, {})


def _known_version(meta: dict[str, Any]) -> None:
    key = "io.modelcontextprotocol/protocolVersion"
    if meta[key] not in ("2025-03-26", "2025-06-18", "2025-11-25", MODERN):
        meta[key] = MODERN


class _KnownVersionLater:
    """`_known_version` from a process's fourth 2026-07-28 request on: a server that validates the
    version while a connection starts and trusts it afterwards."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, meta: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen > 3:
            _known_version(meta)


#: stdio defects planted by rewriting what the client writes before the reference reads it.
STDIN_REWRITES: dict[str, Callable[[dict[str, Any]], None]] = {
    "stdio-meta-optional": _add_capabilities,
    "stdio-version-accepted": _known_version,
    "stdio-version-checked-early": _KnownVersionLater(),
}


def _rewrite_stdin(patch: Callable[[dict[str, Any]], None], argv: list[str]) -> int:
    """The reference as a child process, each client line rewritten on its way in (bounded: the child
    ends when our stdin does)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "conformance_reference.base_server", *argv], stdin=subprocess.PIPE
    )
    assert child.stdin is not None
    try:
        for line in sys.stdin.buffer:
            child.stdin.write(_patch_meta(line, patch))
            child.stdin.flush()
    except BrokenPipeError:
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            child.stdin.close()
    return child.wait()


def _stdio_defect(defect: str, argv: list[str]) -> int:
    if defect in STDIN_REWRITES:
        return _rewrite_stdin(STDIN_REWRITES[defect], argv)
    if defect == "stdout-request":
        sys.stdout.write('{"jsonrpc":"2.0","id":"mutant-ping","method":"ping"}\n')
        sys.stdout.flush()
    status = base_server.main(argv)
    if defect == "stdin-ignored":
        # Served until stdin closed; now linger until signalled (bounded: never an orphan for long).
        threading.Event().wait(120)
    return status


def take_defect(argv: list[str] | None, defects: dict[str, str]) -> tuple[str, list[str]]:
    """`--defect NAME` taken out of the command line (one of `defects`), and the arguments left."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--defect" not in args or args.index("--defect") + 1 >= len(args):
        raise SystemExit("--defect NAME is required: " + ", ".join(defects))
    at = args.index("--defect")
    defect = args[at + 1]
    del args[at : at + 2]
    if defect not in defects:
        raise SystemExit(f"unknown defect {defect!r}: " + ", ".join(defects))
    return defect, args


def main(argv: list[str] | None = None) -> int:
    defect, args = take_defect(argv, DEFECTS)
    if defect in STDIO_DEFECTS:
        return _stdio_defect(defect, args)
    build = serving.build_http_app

    def build_with_defect(server: Any, *, era: Any = "both") -> ASGIApp:
        return Defect(build(server, era=era), defect)

    serving.build_http_app = build_with_defect  # type: ignore[assignment]
    build_sse = serving.build_sse_app

    def build_sse_with_defect(server: Any) -> ASGIApp:
        return Defect(build_sse(server), defect)

    serving.build_sse_app = build_sse_with_defect  # type: ignore[assignment]
    return base_server.main(args)


if __name__ == "__main__":
    sys.exit(main())

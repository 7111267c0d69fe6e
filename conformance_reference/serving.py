"""The serving framework every reference server shares: stdio and Streamable HTTP, both protocol eras.

Why it exists: the four reference servers (base, dw, map, uwmd) must speak the wire alike, so a check that
passes against one passes for the same reason against another, and a correction of the SDK's wire
behaviour made once holds for all of them. A server builds its `mcp` SDK `Server` (its tools and
resources) and hands it to `serve` with the options `serving_parser` reads:

    python -m MODULE                          # stdio until EOF, SIGTERM or SIGINT
    python -m MODULE --http --port 0          # prints LISTENING http://127.0.0.1:<port>/mcp once it accepts
    python -m MODULE --era legacy|modern      # a handshake-only or a 2026-07-28-only server

It serves the legacy `initialize` handshake (2024-11-05 to 2025-11-25) and the stateless 2026-07-28
revision (`server/discover`, the per-request `_meta` envelope, the MCP-Protocol-Version / Mcp-Method /
Mcp-Name HTTP headers). Where the SDK's wire behaviour falls short of the specification a strict
harness enforces, a thin correction lives here, next to a comment naming the deviation, so the
reference servers stay fully conformant without forking the SDK. HTTP binds loopback addresses only.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Final, Literal, cast

import anyio
import mcp_types as types
import uvicorn
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server import Server
from mcp.server.connection import Connection, NotifyOnlyOutbound
from mcp.server.runner import serve_loop, serve_one
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.dispatcher import DispatchContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from mcp.shared.transport_context import TransportContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference.event_store import ScopedEventStore, scoped
from conformance_reference.handlers import JSON, clip
from conformance_reference.jsontext import compact

__all__ = [
    "ERAS",
    "MCP_PATH",
    "Era",
    "build_http_app",
    "build_sse_app",
    "log_to_stderr",
    "serve",
    "serve_http",
    "serve_stdio",
    "serve_with_state",
    "serving_parser",
    "stateful_parser",
]

logger = logging.getLogger("conformance_reference")

Era = Literal["both", "legacy", "modern"]
ERAS: Final[tuple[Era, ...]] = ("both", "legacy", "modern")

MCP_PATH: Final = "/mcp"


# --------------------------------------------------------------------------- stdio


async def _report_unparseable_lines(
    source: ReadStream[SessionMessage | Exception],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    write_stream: WriteStream[SessionMessage],
) -> None:
    """Relay stdin frames to the server, answering the ones that are not JSON-RPC messages.

    SDK deviation: `stdio_server` hands a line that fails to parse to the
    dispatcher as an exception item, which is logged and dropped, so the client
    never gets the JSON-RPC 2.0 `Parse error` (-32700) / `Invalid Request`
    (-32600) response with `id: null` it is owed.
    """
    async with sink:
        async for item in source:
            if not isinstance(item, Exception):
                await sink.send(item)
                continue
            is_json_error = isinstance(item, ValidationError) and any(
                e.get("type") == "json_invalid" for e in item.errors()
            )
            error = (
                types.ErrorData(code=types.PARSE_ERROR, message="Parse error")
                if is_json_error
                else types.ErrorData(code=types.INVALID_REQUEST, message="Invalid Request")
            )
            try:
                await write_stream.send(
                    SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))
                )
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


async def _serve_modern_only(
    server: Server[Any],
    read_stream: ReadStream[SessionMessage | Exception],
    write_stream: WriteStream[SessionMessage],
    lifespan_state: Any,
) -> None:
    """Serve only the 2026-07-28 era over a duplex stream.

    `Server.run` picks the era from the first request and then locks the
    connection, so a modern-only server cannot be built from it: after a
    refused `initialize` the connection would be stuck in the handshake era.
    Here every request is classified on its own envelope, and `initialize` is
    refused with UnsupportedProtocolVersion naming the served versions (the
    2026-07-28 versioning page: a modern-only server SHOULD name its versions
    in any error it returns to `initialize`).
    """
    dispatcher: JSONRPCDispatcher[TransportContext] = JSONRPCDispatcher(read_stream, write_stream)
    outbound = NotifyOnlyOutbound(dispatcher)

    async def on_request(
        dctx: DispatchContext[TransportContext], method: str, params: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if method == "initialize":
            raise _version_refusal((params or {}).get("protocolVersion"), handshake=True)
        route = classify_inbound_request({"method": method, "params": params})
        if isinstance(route, InboundLadderRejection):
            raise MCPError(code=route.code, message=route.message, data=route.data)
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities, outbound=outbound
        )
        return await serve_one(
            server, dctx, method, params, connection=connection, lifespan_state=lifespan_state
        )

    async def on_notify(
        dctx: DispatchContext[TransportContext], method: str, params: Mapping[str, Any] | None
    ) -> None:
        # The core 2026-07-28 protocol has no client notification this server acts on;
        # `notifications/cancelled` is applied by the dispatcher itself.
        logger.debug("ignored client notification %s", method)

    try:
        await dispatcher.run(on_request, on_notify)
    finally:
        await write_stream.aclose()


def _version_refusal(requested: Any, *, handshake: bool) -> MCPError:
    """UnsupportedProtocolVersion (-32022) naming the served revisions (`data.supported`).

    `handshake` marks a refused `initialize`: the 2026-07-28 versioning page asks a
    modern-only server to name its versions in any error it returns to one, since a
    legacy client has no other way to learn them.
    """
    served = ", ".join(MODERN_PROTOCOL_VERSIONS)
    data: JSON = {"supported": list(MODERN_PROTOCOL_VERSIONS)}
    if isinstance(requested, str):
        data["requested"] = requested
    if handshake:
        message = (
            f"Unsupported protocol version: this server speaks only {served} and has no initialize handshake"
        )
    else:
        message = f"Unsupported protocol version; supported: {served}"
    return MCPError(code=types.UNSUPPORTED_PROTOCOL_VERSION, message=message, data=data)


async def serve_stdio(server: Server[Any], era: Era = "both") -> None:
    """Serve `server` over stdin/stdout until stdin closes or the task is cancelled."""
    async with stdio_server() as (raw_read, write_stream):
        relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_report_unparseable_lines, raw_read, relay_send, write_stream)
            try:
                if era == "both":
                    await server.run(relay_receive, write_stream, server.create_initialization_options())
                else:
                    async with server.lifespan(server) as lifespan_state:
                        if era == "legacy":
                            # Handshake-only loop: enveloped requests get what a legacy server
                            # sends (server/discover -> -32601, anything before initialize -> -32602).
                            await serve_loop(
                                server,
                                relay_receive,
                                write_stream,
                                lifespan_state=lifespan_state,
                                init_options=server.create_initialization_options(),
                            )
                        else:
                            await _serve_modern_only(server, relay_receive, write_stream, lifespan_state)
            finally:
                # Closing the write side lets `stdio_server`'s writer task (and so the process) finish.
                await write_stream.aclose()
            tg.cancel_scope.cancel()


# --------------------------------------------------------------------------- HTTP


def _rpc_error_response(code: int, message: str, request_id: Any, status: int, data: Any = None) -> Response:
    error: JSON = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return Response(compact(body), status_code=status, media_type="application/json")


def _request_id(decoded: Any) -> Any:
    """The request's id when it is a valid JSON-RPC id, else None (serialised as `id: null`)."""
    if isinstance(decoded, dict):
        rid = cast(JSON, decoded).get("id")
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def _envelope_version(decoded: Any) -> tuple[bool, Any]:
    """Whether the body carries the 2026-07-28 envelope's protocol-version key, and its value."""
    if not isinstance(decoded, dict):
        return False, None
    params = cast(JSON, decoded).get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and types.PROTOCOL_VERSION_META_KEY in meta:
        return True, meta[types.PROTOCOL_VERSION_META_KEY]
    return False, None


_UNPARSEABLE: Final = object()
#: Session ids whose event store scope `_EraGate` remembers (the oldest are forgotten first).
SCOPES_KEPT: Final = 4096


class _EraGate:
    """ASGI wrapper around the SDK's Streamable HTTP app that enforces the selected era.

    The SDK routes on the MCP-Protocol-Version header alone: a modern value goes
    to its 2026-07-28 single-exchange entry, anything else (including no header)
    to the handshake-era session transport, and it has no modern-only mode.
    These spec deviations are corrected here, before the SDK sees the request:

    * A POST whose body carries the 2026-07-28 `_meta` envelope but whose
      MCP-Protocol-Version header is absent or names a handshake version reaches
      the legacy transport and gets 400 / -32600 (missing session); the
      2026-07-28 transport requires 400 / -32020 HeaderMismatch.
    * A header naming an unknown revision on a body without the envelope gets
      -32602 (missing `_meta`) from the modern entry; the server does not
      implement the requested version, so the spec wants -32022 naming the
      supported ones.
    * A body that is JSON but not one JSON-RPC message (e.g. a batch) gets
      -32602 with the full pydantic validation dump as its message; JSON-RPC
      says -32600 Invalid Request. A parse error's message carries parser detail.
    * A handshake-era error response to a request without a session (e.g. 400
      "Missing session ID" for GET/DELETE/POST) carries an `Mcp-Session-Id`
      the SDK minted for a session it then discarded.
    * modern-only: GET and DELETE without a modern header are answered 400
      (missing session); the 2026-07-28 transport says 405 with `Allow: POST`.
      A POST without the header, or with a handshake-era one, would open a
      legacy session; it gets 400 with -32020 (header missing or mismatched)
      or, for `initialize`, -32022 naming the served versions.
    * legacy-only: a modern MCP-Protocol-Version header is routed to the modern
      entry; a legacy server answers 400 without any modern error code.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        era: Era,
        security: TransportSecuritySettings | None,
        path: str = MCP_PATH,
        max_body: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
    ) -> None:
        self.app = app
        self.era = era
        self.security = TransportSecurityMiddleware(security)
        self.path = path
        self.max_body = max_body
        #: Session id -> the event store scope its session was created under, newest last.
        self._scopes: OrderedDict[str, str] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        # The event store's session scope (event_store.py): a request without a session id may open
        # one (initialize), whose id is then mapped to the scope it was created under.
        sid = Headers(scope=scope).get("mcp-session-id")
        if sid is None:
            session_scope = uuid.uuid4().hex
            send = self._remember_scope(send, session_scope)
        else:
            session_scope = self._scopes.get(sid, f"unknown:{sid}")
        with scoped(session_scope):
            await self._serve(scope, receive, send)

    def _remember_scope(self, send: Send, session_scope: str) -> Send:
        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == b"mcp-session-id":
                        self._scopes[value.decode("latin-1")] = session_scope
                        while len(self._scopes) > SCOPES_KEPT:
                            self._scopes.popitem(last=False)
            await send(message)

        return remember

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        version = headers.get("mcp-protocol-version")
        method = scope["method"]
        if self.era == "legacy" and version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            message = f"Bad Request: Unsupported protocol version: {clip(version, 64)}"
            await self._respond(
                scope, receive, send, _rpc_error_response(types.INVALID_REQUEST, message, None, 400)
            )
            return
        if self.era != "legacy" and version in MODERN_PROTOCOL_VERSIONS:
            # The SDK's 2026-07-28 entry answers these as the spec requires, except that
            # it refuses `initialize` with -32602 without naming the served versions.
            if self.era == "modern" and method == "POST":
                await self._refuse_initialize_or_pass(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        if method != "POST":
            if self.era == "modern":
                await self._respond(
                    scope, receive, send, Response(status_code=405, headers={"Allow": "POST"})
                )
            else:
                await self.app(scope, receive, _without_minted_session(send, headers))
            return
        body, replay = await self._buffer_body(receive)
        if body is None:
            await self.app(scope, replay, send)  # oversized: the SDK answers 413
            return
        rejection = self._reject(version, _decode(body))
        if rejection is not None:
            await self._respond(scope, replay, send, rejection)
        else:
            await self.app(scope, replay, _without_minted_session(send, headers))

    async def _refuse_initialize_or_pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, replay = await self._buffer_body(receive)
        decoded = _decode(body)
        if isinstance(decoded, dict) and decoded.get("method") == "initialize":
            params = decoded.get("params")
            proposed = params.get("protocolVersion") if isinstance(params, dict) else None
            refusal = _unsupported_version(proposed, _request_id(decoded), handshake=True)
            await self._respond(scope, replay, send, refusal)
        else:
            await self.app(scope, replay, send)

    def _reject(self, version: str | None, decoded: Any) -> Response | None:
        """The spec-mandated answer to a POST the SDK would answer wrongly, else None (let the SDK answer).

        `version` is the MCP-Protocol-Version header: absent, a handshake
        revision, or (not on a legacy-only server) an unknown one.
        """
        if decoded is _UNPARSEABLE:
            return _rpc_error_response(types.PARSE_ERROR, "Parse error", None, 400)
        request_id = _request_id(decoded)
        try:
            types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
        except ValidationError:
            return _rpc_error_response(types.INVALID_REQUEST, "Invalid Request", request_id, 400)
        if self.era == "legacy":
            return None
        enveloped, body_version = _envelope_version(decoded)
        rpc_method = cast(JSON, decoded).get("method")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            # Unknown revision: with an envelope the SDK's ladder answers (-32020 / -32022).
            return None if enveloped else _unsupported_version(version, request_id)
        if self.era == "both":
            if enveloped and rpc_method != "initialize":
                return _header_mismatch(version, body_version, request_id)
            return None
        # Modern-only server; the header is absent or names a handshake revision.
        if enveloped or (version is None and rpc_method != "initialize"):
            return _header_mismatch(version, body_version, request_id)
        if rpc_method != "initialize":
            return _unsupported_version(version, request_id)
        params = cast(JSON, decoded).get("params")
        proposed = params.get("protocolVersion") if isinstance(params, dict) else None
        return _unsupported_version(proposed, request_id, handshake=True)

    async def _buffer_body(self, receive: Receive) -> tuple[bytes | None, Receive]:
        """Read the whole request body (bounded) and return a `receive` that replays it."""
        chunks: list[bytes] = []
        size = 0
        pending: list[Message] = []
        complete = False
        while True:
            message = await receive()
            if message["type"] != "http.request":
                pending.append(message)
                break
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_body:
                break
            if not message.get("more_body", False):
                complete = True
                break
        body = b"".join(chunks)
        replayed: list[Message] = [
            {"type": "http.request", "body": body, "more_body": not complete},
            *pending,
        ]

        async def replay() -> Message:
            if replayed:
                return replayed.pop(0)
            return await receive()

        return (body if complete else None), replay

    async def _respond(self, scope: Scope, receive: Receive, send: Send, response: Response) -> None:
        """Send `response`, unless the SDK's Host/Origin/Content-Type checks refuse the request first."""
        request = Request(scope, receive)
        refused = await self.security.validate_request(request, is_post=scope["method"] == "POST")
        await (refused or response)(scope, receive, send)


def _decode(body: bytes | None) -> Any:
    """The POST body as JSON, or `_UNPARSEABLE` (also for an oversized body, which is not buffered)."""
    if body is None:
        return _UNPARSEABLE
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return _UNPARSEABLE


def _without_minted_session(send: Send, request_headers: Headers) -> Send:
    """Drop the `Mcp-Session-Id` the SDK stamps on an error answer to a session-less request.

    The SDK opens a session for every session-less request and discards it when
    the answer is an error, yet still sends its id; only a successful
    `initialize` establishes a session, so only that answer may carry one.
    """
    if "mcp-session-id" in request_headers:
        return send

    async def filtered(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"mcp-session-id"]
            message = {**message, "headers": kept}
        await send(message)

    return filtered


def _unsupported_version(requested: Any, request_id: Any, *, handshake: bool = False) -> Response:
    refusal = _version_refusal(requested, handshake=handshake)
    return _rpc_error_response(refusal.code, refusal.message, request_id, 400, refusal.data)


def _header_mismatch(header: str | None, body_version: Any, request_id: Any) -> Response:
    if header is None:
        message = "Header mismatch: the required MCP-Protocol-Version header is missing"
    else:
        message = (
            f"Header mismatch: MCP-Protocol-Version header {clip(header, 64)!r} does not match "
            f"the request's _meta protocol version {clip(str(body_version), 64)!r}"
        )
    return _rpc_error_response(types.HEADER_MISMATCH, message, request_id, 400)


def _loopback_security() -> TransportSecuritySettings:
    """Host/Origin allow-lists for loopback: the server only ever binds a loopback address."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def build_http_app(server: Server[Any], *, era: Era = "both", **sdk_options: Any) -> ASGIApp:
    """The SDK's Streamable HTTP app (endpoint `/mcp`) behind the era gate, with a per-session SSE event
    store (event_store.py) unless `sdk_options` names one.

    `sdk_options` go to the SDK's `streamable_http_app` as they are (the protected reference passes its
    `auth` settings and token verifier). Calling it twice on one `Server` is not supported: the SDK
    keeps one session manager per server.
    """
    security = _loopback_security()
    # Resumable streams (SSE event IDs, Last-Event-ID replay) in every legacy session.
    sdk_options.setdefault("event_store", ScopedEventStore())
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=security, **sdk_options
    )
    return _EraGate(app, era=era, security=security)


def _loopback_socket(host: str, port: int) -> tuple[socket.socket, str]:
    """Bind a listening socket on a loopback address only; returns it and the URL host part."""
    if host == "localhost":
        host = "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise SystemExit(f"--host must be a loopback IP address, got {host!r}") from None
    if not address.is_loopback:
        raise SystemExit(f"--host must be a loopback address, got {host!r}")
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    # Naming TCP lets asyncio set TCP_NODELAY on accepted connections; without it every response on a
    # kept-alive connection waits out Nagle's algorithm (~40 ms a request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((str(address), port))
    sock.listen(128)
    sock.setblocking(False)
    url_host = f"[{address}]" if address.version == 6 else str(address)
    return sock, url_host


def build_sse_app(server: Server[Any]) -> ASGIApp:
    """The deprecated HTTP+SSE transport of 2024-11-05: GET /sse streams, POST /messages/ sends.

    Deployed servers still speak it, so the harness's `sse:` adapter needs a real peer to be tested on.
    """
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    transport = SseServerTransport("/messages/", security_settings=_loopback_security())

    async def handle_sse(request: Request) -> Response:
        async with transport.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    routes = [
        Route("/sse", endpoint=handle_sse, methods=["GET"]),
        Mount("/messages/", app=transport.handle_post_message),
    ]
    return Starlette(routes=routes)


#: Builds the HTTP app once the socket is bound, from the server's origin (`http://127.0.0.1:PORT`):
#: a server whose app must name its own URL (the protected reference's resource identifier) needs it.
AppFactory = Callable[[str], ASGIApp]


async def serve_http(
    server: Server[Any], *, era: Era, host: str, port: int, sse: bool = False, app: AppFactory | None = None
) -> bool:
    """Serve over Streamable HTTP until SIGTERM/SIGINT.

    Prints exactly one `LISTENING <url>` line to stdout once the socket accepts
    connections; returns False if the server never started.
    """
    sock, url_host = _loopback_socket(host, port)
    bound_port = sock.getsockname()[1]
    origin = f"http://{url_host}:{bound_port}"
    if app is not None:
        asgi = app(origin)
    else:
        asgi = build_sse_app(server) if sse else build_http_app(server, era=era)
    config = uvicorn.Config(
        asgi,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    uv = uvicorn.Server(config)
    async with AsyncExitStack() as stack:
        stack.callback(sock.close)
        serving = asyncio.ensure_future(uv.serve(sockets=[sock]))
        while not uv.started and not serving.done():
            await asyncio.sleep(0.01)
        if uv.started:
            print(f"LISTENING {origin}{'/sse' if sse else MCP_PATH}", flush=True)
        if _stop_requested.is_set():
            uv.should_exit = True  # a signal arrived before uvicorn took over the handlers
        await serving
    return bool(uv.started)


_stop_requested = threading.Event()


def _request_stop(signum: int, frame: object) -> None:
    """Pre- and post-uvicorn SIGTERM/SIGINT handler.

    uvicorn installs its own handlers while serving and, after its graceful
    shutdown, re-raises the captured signal; landing here makes that a clean
    exit (status 0) instead of a death by signal.
    """
    _stop_requested.set()


# --------------------------------------------------------------------------- CLI


def serving_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser with the options every reference server takes: transport, address and eras."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default 0)")
    parser.add_argument("--era", choices=ERAS, default="both", help="protocol eras to serve (default both)")
    return parser


def stateful_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """`serving_parser` plus `--db`, for a server whose state lives in SQLite (map, uwmd)."""
    parser = serving_parser(prog, description)
    parser.add_argument(
        "--db", help="SQLite file shared by every process of one service (created if missing)"
    )
    return parser


def serve_with_state(
    args: argparse.Namespace, prefix: str, build: Callable[[str | None], Server[Any]]
) -> int:
    """Serve the server `build` makes over the state file `--db` names.

    Without `--db`, stdio keeps its state in memory (None) and HTTP in a temporary file removed at exit:
    HTTP requests run in worker threads, each with its own connection to the one file.
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        path = args.db or (str(Path(scratch) / "state.db") if args.http else None)
        return serve(build(path), args)


def log_to_stderr() -> None:
    """Warnings and errors on stderr: stdout carries only protocol messages (and LISTENING)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


def serve(
    server: Server[Any], args: argparse.Namespace, *, sse: bool = False, app: AppFactory | None = None
) -> int:
    """Serve as `serving_parser`'s options say: Streamable HTTP until SIGTERM/SIGINT, or stdio until
    EOF (or those signals), logging warnings to stderr; the process exit status."""
    log_to_stderr()
    era = cast(Era, args.era)
    if args.http:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _request_stop)
        started = asyncio.run(serve_http(server, era=era, host=args.host, port=args.port, sse=sse, app=app))
        return 0 if started else 1
    return anyio.run(_stdio_main, server, era)


async def _stdio_main(server: Server[Any], era: Era) -> int:
    async with anyio.create_task_group() as tg:
        tg.start_soon(_cancel_on_signal, tg.cancel_scope)
        await serve_stdio(server, era)
        tg.cancel_scope.cancel()
    return 0


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    """Stop serving on SIGTERM/SIGINT and exit 0.

    The SDK's stdin reader blocks in a worker thread that cancellation cannot
    interrupt, so if the graceful unwind has not finished within half a second the
    process exits directly (stdout is flushed after every message already).
    """
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            watchdog = threading.Timer(0.5, os._exit, args=(0,))
            watchdog.daemon = True
            watchdog.start()
            scope.cancel()
            return

"""The harness's embedded reference MCP server.

Why this exists: the conformance harness needs a default target that is known
to pass every check it ships, so that a failing check against the reference is
a bug in the check (or in the harness), never in the target. It is also the
control specimen for suite authors: each wire shape the suites assert can be
reproduced against this server with nothing but a JSON-RPC client.

It is built on the official `mcp` SDK's low-level `Server` so that it exercises
the same dispatch code real servers use, and it serves both protocol eras: the
legacy `initialize` handshake (2025-06-18, 2025-11-25) and the stateless
2026-07-28 revision (`server/discover`, per-request `_meta` envelope,
`resultType` on every result, the MCP-Protocol-Version / Mcp-Method / Mcp-Name
HTTP headers). Where the SDK's wire behaviour falls short of the specification
a strict harness enforces, a thin correction lives here, next to a comment
naming the deviation, so the reference stays fully conformant without forking
the SDK.

Run it as ``python -m conformance_reference.base_server`` (stdio), or with
``--http`` to serve Streamable HTTP on a loopback socket; ``--era`` selects a
dual-era, legacy-only or modern-only server.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import ipaddress
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

import anyio
import jsonschema
import mcp_types as types
import uvicorn
from anyio.streams.memory import MemoryObjectSendStream
from jsonschema.exceptions import best_match
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection, NotifyOnlyOutbound
from mcp.server.context import CallNext, HandlerResult
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
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, is_version_at_least
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conformance_reference.jsontext import compact

__all__ = [
    "ERAS",
    "REFERENCE_VERSION",
    "Era",
    "build_http_app",
    "build_server",
    "log_to_stderr",
    "main",
    "serve",
    "serving_parser",
]

logger = logging.getLogger("conformance_reference")

Era = Literal["both", "legacy", "modern"]
ERAS: Final[tuple[Era, ...]] = ("both", "legacy", "modern")

REFERENCE_VERSION: Final = "0.1.0"
MCP_PATH: Final = "/mcp"

RESOURCE_NOT_FOUND_LEGACY: Final = -32002
"""Resource-not-found code through 2025-11-25; 2026-07-28 (SEP-2164) retired it in favour of -32602."""

TOOL_NAME_RE: Final = re.compile(r"^[a-zA-Z0-9_.-]{1,128}$")
_ITEM_URI_RE: Final = re.compile(r"^ref://items/(?P<item_id>[A-Za-z0-9_-]{1,64})$")
_CURSOR_PREFIX: Final = "offset:"
_MAX_ERROR_TEXT: Final = 200

JSON = dict[str, Any]
ToolRun = Callable[[JSON], JSON | types.CallToolResult]


def structured_result(body: Any, *, error: bool = False, text: str | None = None) -> types.CallToolResult:
    """A tool result carrying `body` as structuredContent and, as its one text block, the same value as
    compact JSON (or `text`, when a server stores the exact text it must return)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=compact(body) if text is None else text)],
        structured_content=body,
        is_error=error,
    )


def _clip(text: str, limit: int = _MAX_ERROR_TEXT) -> str:
    """Bound client-echoed text in error messages so a huge argument cannot bloat an error."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _object_schema(properties: JSON, required: Sequence[str] = ()) -> JSON:
    """A closed root-object schema: the harness asserts `additionalProperties: false` on every tool."""
    schema: JSON = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


@dataclass(frozen=True, slots=True)
class _ToolSpec:
    """A tool's advertised definition, its compiled argument validator, and its implementation."""

    tool: types.Tool
    validator: jsonschema.protocols.Validator
    run: ToolRun


def _tool(
    name: str, description: str, input_schema: JSON, output_schema: JSON | None, run: ToolRun
) -> _ToolSpec:
    if not TOOL_NAME_RE.fullmatch(name):
        raise ValueError(f"tool name {name!r} violates the MCP tool-name pattern")
    validator_cls = jsonschema.validators.validator_for(input_schema, default=jsonschema.Draft202012Validator)
    validator_cls.check_schema(input_schema)
    if output_schema is not None:
        jsonschema.Draft202012Validator.check_schema(output_schema)
    # Every tool only computes from its arguments: clients (and the harness's safe policy) may call it.
    tool = types.Tool(
        name=name,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )
    return _ToolSpec(tool=tool, validator=validator_cls(input_schema), run=run)


def _fail_politely(args: JSON) -> types.CallToolResult:
    """A tool-execution error: the model-visible failure channel, never a protocol error."""
    reason = str(args["reason"])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"The tool declined the request: {_clip(reason)}")],
        is_error=True,
    )


def _build_tools() -> tuple[_ToolSpec, ...]:
    """The fixed tool catalogue, in the deterministic order `tools/list` pages through."""
    text_in = _object_schema({"text": {"type": "string"}}, ["text"])
    text_out = _object_schema({"text": {"type": "string"}}, ["text"])
    return (
        _tool("echo", "Return the given text unchanged.", text_in, text_out, lambda a: {"text": a["text"]}),
        _tool(
            "add",
            "Add two integers.",
            _object_schema({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
            _object_schema({"sum": {"type": "integer"}}, ["sum"]),
            lambda a: {"sum": int(a["a"]) + int(a["b"])},
        ),
        _tool(
            "reverse",
            "Return the given text reversed.",
            text_in,
            text_out,
            lambda a: {"text": a["text"][::-1]},
        ),
        _tool(
            "now",
            "Return the current time as integer milliseconds since the Unix epoch.",
            _object_schema({}),
            _object_schema({"epoch_ms": {"type": "integer"}}, ["epoch_ms"]),
            lambda _a: {"epoch_ms": time.time_ns() // 1_000_000},
        ),
        _tool(
            "fail_politely",
            "Always fail with a tool-execution error (isError: true) that explains the given reason.",
            _object_schema({"reason": {"type": "string"}}, ["reason"]),
            None,
            _fail_politely,
        ),
    )


_STATIC_RESOURCES: Final[tuple[tuple[types.Resource, str], ...]] = (
    (
        types.Resource(
            uri="ref://docs/readme",
            name="readme",
            title="Reference server readme",
            description="What this server is for.",
            mime_type="text/plain",
        ),
        "This is the MCP conformance harness reference server. Every behaviour it shows is expected.\n",
    ),
    (
        types.Resource(
            uri="ref://docs/config",
            name="config",
            title="Reference server configuration",
            description="The server's fixed settings as JSON.",
            mime_type="application/json",
        ),
        compact({"name": "mcp-conformance-reference", "eras": list(ERAS), "tools": 5}),
    ),
)

_ITEM_TEMPLATE: Final = types.ResourceTemplate(
    uri_template="ref://items/{item_id}",
    name="item",
    title="Reference item",
    description="A synthetic item; any id of 1-64 letters, digits, '_' or '-' exists.",
    mime_type="text/plain",
)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode("ascii")).decode("ascii")


def _decode_cursor(cursor: str | None, total: int, page_size: int) -> int:
    """Map a cursor back to an offset, accepting only cursors this server could have issued.

    Anything else is INVALID_PARAMS (-32602), the code the spec assigns to invalid or expired cursors.
    """
    if cursor is None:
        return 0
    invalid = MCPError(code=types.INVALID_PARAMS, message="Invalid pagination cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (UnicodeError, binascii.Error, ValueError):
        raise invalid from None
    digits = raw[len(_CURSOR_PREFIX) :] if raw.startswith(_CURSOR_PREFIX) else ""
    if not digits.isdigit() or len(digits) > 9:
        raise invalid
    offset = int(digits)
    if _encode_cursor(offset) != cursor or not 0 < offset < total or offset % page_size:
        raise invalid
    return offset


def _page(items: Sequence[Any], cursor: str | None, page_size: int) -> tuple[list[Any], str | None]:
    """One page of `items` and the cursor of the next page (None on the last page)."""
    start = _decode_cursor(cursor, len(items), page_size)
    end = start + page_size
    return list(items[start:end]), (_encode_cursor(end) if end < len(items) else None)


def _argument_error_text(tool_name: str, error: jsonschema.ValidationError) -> str:
    """A one-line, traceback-free description of the first schema violation."""
    where = "/".join(str(p) for p in error.absolute_path)
    location = f" at '/{where}'" if where else ""
    return _clip(f"Invalid arguments for tool '{tool_name}'{location}: {error.message}")


def _resource_not_found(protocol_version: str, uri: str) -> MCPError:
    """Resource-not-found in the code of the request's era.

    -32002 through 2025-11-25; 2026-07-28 changed it to -32602 (changelog minor change 6, SEP-2164)
    and reserves -32002 as never-reused, so a modern request must not see it.
    """
    code = types.INVALID_PARAMS if protocol_version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND_LEGACY
    return MCPError(code=code, message="Resource not found", data={"uri": uri})


class _NoLeakMiddleware:
    """Turns any unexpected handler exception into a generic INTERNAL_ERROR.

    SDK deviation: on the handshake-era (loop) path `JSONRPCDispatcher` answers an
    unmapped handler exception with ``code: 0`` and ``message: str(exc)``, which is
    neither a JSON-RPC code nor leak-free. `MCPError` (protocol errors) and pydantic
    `ValidationError` (the SDK's own INVALID_PARAMS mapping) pass through untouched.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise
        except Exception:
            logger.exception("reference handler for %r raised", ctx.method)
            raise MCPError(code=types.INTERNAL_ERROR, message="Internal error") from None


def build_server(*, name: str = "mcp-conformance-reference", page_size: int = 2) -> Server[Any]:
    """Build the reference server: five tools, two static resources, one resource template.

    `page_size` is how many entries each list method returns per page; the
    default of 2 makes `tools/list` span three pages, so pagination is always exercised.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    tools = _build_tools()
    by_name = {spec.tool.name: spec for spec in tools}
    static = {resource.uri: (resource, text) for resource, text in _STATIC_RESOURCES}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        page, next_cursor = _page([spec.tool for spec in tools], params.cursor if params else None, page_size)
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            # Unknown tool is a protocol error in every era (not a tool-execution error).
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {_clip(params.name, 128)}")
        arguments: JSON = dict(params.arguments or {})
        error = best_match(spec.validator.iter_errors(arguments))
        if error is not None:
            text = _argument_error_text(spec.tool.name, error)
            # SEP-1303 (2025-11-25 onwards): input validation failures are tool-execution
            # errors the model can read and correct; before that they were INVALID_PARAMS.
            if not is_version_at_least(ctx.protocol_version, "2025-11-25"):
                raise MCPError(code=types.INVALID_PARAMS, message=text)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        outcome = spec.run(arguments)
        if isinstance(outcome, types.CallToolResult):
            return outcome
        return structured_result(outcome)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        page, next_cursor = _page(
            [r for r, _ in _STATIC_RESOURCES], params.cursor if params else None, page_size
        )
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        page, next_cursor = _page([_ITEM_TEMPLATE], params.cursor if params else None, page_size)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=next_cursor)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = params.uri
        if uri in static:
            resource, text = static[uri]
            contents = types.TextResourceContents(uri=uri, mime_type=resource.mime_type, text=text)
            return types.ReadResourceResult(contents=[contents])
        match = _ITEM_URI_RE.fullmatch(uri)
        if match is not None:
            text = f"Item {match.group('item_id')}\n"
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
            )
        raise _resource_not_found(ctx.protocol_version, uri)

    def tool_input_schema(tool_name: str) -> Mapping[str, Any] | None:
        # Lets the SDK's Mcp-Param-* header check (2026-07-28 HTTP) look a schema up
        # directly instead of paging through tools/list on every tools/call.
        spec = by_name.get(tool_name)
        return spec.tool.input_schema if spec is not None else None

    server: Server[Any] = Server(
        name,
        version=REFERENCE_VERSION,
        title="MCP conformance reference server",
        instructions="Reference target of the MCP conformance harness; every behaviour shown is expected.",
        get_tool_input_schema=tool_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )
    server.middleware.append(_NoLeakMiddleware())
    return server


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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        version = headers.get("mcp-protocol-version")
        method = scope["method"]
        if self.era == "legacy" and version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            message = f"Bad Request: Unsupported protocol version: {_clip(version, 64)}"
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
            f"Header mismatch: MCP-Protocol-Version header {_clip(header, 64)!r} does not match "
            f"the request's _meta protocol version {_clip(str(body_version), 64)!r}"
        )
    return _rpc_error_response(types.HEADER_MISMATCH, message, request_id, 400)


def _loopback_security() -> TransportSecuritySettings:
    """Host/Origin allow-lists for loopback: the server only ever binds a loopback address."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def build_http_app(server: Server[Any], *, era: Era = "both") -> ASGIApp:
    """The SDK's Streamable HTTP app (endpoint `/mcp`) behind the era gate.

    Calling it twice on one `Server` is not supported: the SDK keeps one session manager per server.
    """
    security = _loopback_security()
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
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


async def serve_http(server: Server[Any], *, era: Era, host: str, port: int, sse: bool = False) -> bool:
    """Serve over Streamable HTTP until SIGTERM/SIGINT.

    Prints exactly one `LISTENING <url>` line to stdout once the socket accepts
    connections; returns False if the server never started.
    """
    sock, url_host = _loopback_socket(host, port)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_sse_app(server) if sse else build_http_app(server, era=era),
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
            print(f"LISTENING http://{url_host}:{bound_port}{'/sse' if sse else MCP_PATH}", flush=True)
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


def log_to_stderr() -> None:
    """Warnings and errors on stderr: stdout carries only protocol messages (and LISTENING)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


def serve(server: Server[Any], args: argparse.Namespace, *, sse: bool = False) -> int:
    """Serve as `serving_parser`'s options say: Streamable HTTP until SIGTERM/SIGINT, or stdio until
    EOF (or those signals); the process exit status."""
    era = cast(Era, args.era)
    if args.http:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _request_stop)
        started = asyncio.run(serve_http(server, era=era, host=args.host, port=args.port, sse=sse))
        return 0 if started else 1
    return anyio.run(_stdio_main, server, era)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = serving_parser(
        "python -m conformance_reference.base_server",
        "Run the MCP conformance harness's reference server (stdio by default).",
    )
    parser.add_argument(
        "--sse",
        action="store_true",
        help="with --http: serve the 2024-11-05 HTTP+SSE transport at /sse instead",
    )
    parser.add_argument("--page-size", type=int, default=2, help="entries per list page (default 2)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the process exit status (0 on EOF, SIGTERM or SIGINT)."""
    args = _parse_args(argv)
    log_to_stderr()
    return serve(build_server(page_size=args.page_size), args, sse=args.sse)


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


if __name__ == "__main__":
    sys.exit(main())

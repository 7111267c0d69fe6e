"""What every reference server's handlers share: results, pagination, argument and lookup errors.

Why apart from `serving`: these shape the answers a server's own tools and resources give (the same
wording, codes and cursor format in every reference server, so a check that passes on one passes for the
same reason on another), while `serving` moves those answers over stdio and HTTP. Nothing here knows
a transport.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import jsonschema
import mcp_types as types
from jsonschema.exceptions import best_match
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least
from pydantic import ValidationError

from conformance_reference.jsontext import compact

__all__ = [
    "JSON",
    "REFERENCE_VERSION",
    "RESOURCE_NOT_FOUND_LEGACY",
    "NoLeakMiddleware",
    "argument_error_text",
    "checked_call",
    "clip",
    "format_validators",
    "invalid_arguments",
    "object_schema",
    "one_page_tools",
    "paginate",
    "reference_server",
    "refuse_before_sep1303",
    "refuse_cursor",
    "resource_not_found",
    "structured_result",
    "unknown_tool",
]

logger = logging.getLogger("conformance_reference")

REFERENCE_VERSION: Final = "0.1.0"

RESOURCE_NOT_FOUND_LEGACY: Final = -32002
"""Resource-not-found code through 2025-11-25; 2026-07-28 (SEP-2164) retired it in favour of -32602."""

_CURSOR_PREFIX: Final = "offset:"
_MAX_ERROR_TEXT: Final = 200

JSON = dict[str, Any]


def structured_result(body: Any, *, error: bool = False, text: str | None = None) -> types.CallToolResult:
    """A tool result carrying `body` as structuredContent and, as its one text block, the same value as
    compact JSON (or `text`, when a server stores the exact text it must return)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=compact(body) if text is None else text)],
        structured_content=body,
        is_error=error,
    )


def clip(text: str, limit: int = _MAX_ERROR_TEXT) -> str:
    """Bound client-echoed text in error messages so a huge argument cannot bloat an error."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def object_schema(properties: JSON, required: Sequence[str] = (), **extra: Any) -> JSON:
    """A closed object schema (the harness asserts `additionalProperties: false` on every tool's root),
    with any `extra` keywords after its own."""
    schema: JSON = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


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


def paginate(items: Sequence[Any], cursor: str | None, page_size: int) -> tuple[list[Any], str | None]:
    """One page of `items` and the cursor of the next page (None on the last page)."""
    start = _decode_cursor(cursor, len(items), page_size)
    end = start + page_size
    return list(items[start:end]), (_encode_cursor(end) if end < len(items) else None)


def argument_error_text(tool_name: str, error: jsonschema.ValidationError) -> str:
    """A one-line, traceback-free description of the first schema violation."""
    where = "/".join(str(p) for p in error.absolute_path)
    location = f" at '/{where}'" if where else ""
    return clip(f"Invalid arguments for tool '{tool_name}'{location}: {error.message}")


def resource_not_found(protocol_version: str, uri: str) -> MCPError:
    """Resource-not-found in the code of the request's era.

    -32002 through 2025-11-25; 2026-07-28 changed it to -32602 (changelog minor change 6, SEP-2164)
    and reserves -32002 as never-reused, so a modern request must not see it.
    """
    code = types.INVALID_PARAMS if protocol_version in MODERN_PROTOCOL_VERSIONS else RESOURCE_NOT_FOUND_LEGACY
    return MCPError(code=code, message="Resource not found", data={"uri": uri})


class NoLeakMiddleware:
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


def refuse_cursor(params: types.PaginatedRequestParams | None) -> None:
    """A list that is one page has no cursor to accept: any cursor is INVALID_PARAMS (-32602)."""
    if params is not None and params.cursor is not None:
        raise MCPError(code=types.INVALID_PARAMS, message="Invalid pagination cursor")


def one_page_tools(listed: Sequence[types.Tool]) -> Callable[..., Any]:
    """The `list_tools` handler of a server whose tools fit one page: all of them, and any cursor
    refused (`refuse_cursor`)."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        refuse_cursor(params)
        return types.ListToolsResult(tools=list(listed))

    return list_tools


def format_validators(definitions: Iterable[JSON]) -> dict[str, jsonschema.protocols.Validator]:
    """Each tool's inputSchema compiled as 2020-12 with `format` asserted, by tool name (the profile
    servers refuse a malformed date or URI where the schema names a format)."""
    return {
        t["name"]: jsonschema.Draft202012Validator(
            t["inputSchema"], format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        for t in definitions
    }


def refuse_before_sep1303(protocol_version: str, message: str, data: Any = None) -> None:
    """Invalid tool arguments in a revision before 2025-11-25: a protocol error (INVALID_PARAMS).

    SEP-1303 (2025-11-25 onwards) made them tool-execution errors the model can read and correct,
    which the caller returns when this does not raise.
    """
    if not is_version_at_least(protocol_version, "2025-11-25"):
        raise MCPError(code=types.INVALID_PARAMS, message=message, data=data)


def invalid_arguments(protocol_version: str, text: str) -> types.CallToolResult:
    """The answer to invalid tool arguments: INVALID_PARAMS before 2025-11-25, else an isError result
    whose one text block says what is wrong."""
    refuse_before_sep1303(protocol_version, text)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def reference_server(
    name: str,
    *,
    handlers: Iterable[Callable[..., Any]],
    title: str,
    instructions: str,
    tool_input_schema: Callable[[str], Mapping[str, Any] | None],
) -> Server[Any]:
    """An SDK `Server` of the reference family: its version, its request handlers, each named after the
    request it answers (`list_tools` is the SDK's `on_list_tools`), and the guard every reference
    server has against leaking an exception's text (`NoLeakMiddleware`).

    `tool_input_schema` lets the SDK's Mcp-Param-* header check (2026-07-28 HTTP) look a tool's schema
    up directly instead of paging through tools/list on every tools/call.
    """
    on: dict[str, Any] = {f"on_{handler.__name__}": handler for handler in handlers}
    server: Server[Any] = Server(
        name,
        version=REFERENCE_VERSION,
        title=title,
        instructions=instructions,
        get_tool_input_schema=tool_input_schema,
        **on,
    )
    server.middleware.append(NoLeakMiddleware())
    return server


def unknown_tool(name: str) -> MCPError:
    """A tools/call naming no tool: a protocol error in every revision, never a tool-execution error."""
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {clip(name, 128)}")


def checked_call(
    protocol_version: str,
    name: str,
    validator: jsonschema.protocols.Validator,
    arguments: JSON,
    run: Callable[[JSON], JSON | types.CallToolResult],
) -> types.CallToolResult:
    """Run a tool on arguments its schema admits: invalid ones are answered as the revision wants
    (`invalid_arguments`), and a plain result becomes structuredContent with its JSON text."""
    error = best_match(validator.iter_errors(arguments))
    if error is not None:
        return invalid_arguments(protocol_version, argument_error_text(name, error))
    outcome = run(arguments)
    return outcome if isinstance(outcome, types.CallToolResult) else structured_result(outcome)

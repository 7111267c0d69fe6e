"""The harness's embedded reference MCP server.

Why this exists: the conformance harness needs a default target that is known
to pass every check it ships, so that a failing check against the reference is
a bug in the check (or in the harness), never in the target. It is also the
control specimen for suite authors: each wire shape the suites assert can be
reproduced against this server with nothing but a JSON-RPC client.

It is built on the official `mcp` SDK's low-level `Server` so that it exercises
the same dispatch code real servers use. This module holds only what the base
server offers (five tools, two resources, one template); how it is served (both
protocol eras over stdio and Streamable HTTP, the SDK corrections) is the shared
framework in `conformance_reference.serving`.

Run it as ``python -m conformance_reference.base_server`` (stdio), or with
``--http`` to serve Streamable HTTP on a loopback socket; ``--era`` selects a
dual-era, legacy-only or modern-only server.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import jsonschema
import mcp_types as types
from mcp.server import Server, ServerRequestContext

from conformance_reference.base_input import ASK_TOOL, ask_for_input
from conformance_reference.base_prompts import PromptFeatures
from conformance_reference.base_resources import ResourceFeatures
from conformance_reference.base_tasks import TaskSupport
from conformance_reference.handlers import (
    JSON,
    checked_call,
    clip,
    object_schema,
    paginate,
    reference_server,
    resource_not_found,
    unknown_tool,
)
from conformance_reference.jsontext import compact
from conformance_reference.serving import ERAS, serve, serving_parser

__all__ = ["build_server", "main"]

TOOL_NAME_RE: Final = re.compile(r"^[a-zA-Z0-9_.-]{1,128}$")
_ITEM_URI_RE: Final = re.compile(r"^ref://items/(?P<item_id>[A-Za-z0-9_-]{1,64})$")

#: The tools that may be called as tasks in 2025-11-25 (`execution.taskSupport`); the others may not.
TASK_SUPPORT: Final = {"echo": "optional", "add": "optional", "reverse": "optional"}

ToolRun = Callable[[JSON], JSON | types.CallToolResult]


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
        content=[types.TextContent(type="text", text=f"The tool declined the request: {clip(reason)}")],
        is_error=True,
    )


def _build_tools() -> tuple[_ToolSpec, ...]:
    """The fixed tool catalogue, in the deterministic order `tools/list` pages through."""
    text_in = object_schema({"text": {"type": "string"}}, ["text"])
    text_out = object_schema({"text": {"type": "string"}}, ["text"])
    return (
        _tool("echo", "Return the given text unchanged.", text_in, text_out, lambda a: {"text": a["text"]}),
        _tool(
            "add",
            "Add two integers.",
            object_schema({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
            object_schema({"sum": {"type": "integer"}}, ["sum"]),
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
            object_schema({}),
            object_schema({"epoch_ms": {"type": "integer"}}, ["epoch_ms"]),
            lambda _a: {"epoch_ms": time.time_ns() // 1_000_000},
        ),
        _tool(
            "fail_politely",
            "Always fail with a tool-execution error (isError: true) that explains the given reason.",
            object_schema({"reason": {"type": "string"}}, ["reason"]),
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
        compact({"name": "mcp-conformance-reference", "eras": list(ERAS), "tools": 6}),
    ),
)

_ITEM_TEMPLATE: Final = types.ResourceTemplate(
    uri_template="ref://items/{item_id}",
    name="item",
    title="Reference item",
    description="A synthetic item; any id of 1-64 letters, digits, '_' or '-' exists.",
    mime_type="text/plain",
)


def build_server(
    *,
    name: str = "mcp-conformance-reference",
    page_size: int = 2,
    prompts: PromptFeatures | None = None,
    resources: ResourceFeatures | None = None,
    tasks: TaskSupport | None = None,
    task_support: bool = True,
) -> Server[Any]:
    """Build the reference server: its tools, two static resources, one resource template, the
    prompts, completions and logging of `prompts` (`base_prompts`), the binary and counter resources,
    subscriptions and progress tool of `resources` (`base_resources`), and the tool that asks for
    input (`base_input`); a test mutant passes its own `prompts` or `resources`.

    `page_size` is how many entries each list method returns per page; the
    default of 2 makes `tools/list` span three pages, so pagination is always exercised.
    `features` adds the binary and counter resources, subscriptions and the progress tool
    (`conformance_reference.base_resources`; a mutant passes its own). In 2025-11-25 the tools of
    `TASK_SUPPORT` may be called as tasks (`conformance_reference.base_tasks`; a mutant passes its own
    `tasks`, or `task_support=False` for a server that declares none).
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    tools = _build_tools()
    extra = resources or ResourceFeatures()
    by_name = {spec.tool.name: spec for spec in tools}
    static = {resource.uri: (resource, text) for resource, text in _STATIC_RESOURCES}
    features = prompts or PromptFeatures(page_size=page_size)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        page, next_cursor = paginate(
            [*(spec.tool for spec in tools), ASK_TOOL, *extra.tools()],
            params.cursor if params else None,
            page_size,
        )
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name == ASK_TOOL.name:
            return await ask_for_input(ctx, params)
        spec = by_name.get(params.name)
        if (
            spec is None
            and (answer := await extra.call(ctx, params.name, dict(params.arguments or {}))) is not None
        ):
            return answer
        if spec is None:
            raise unknown_tool(params.name)
        arguments: JSON = dict(params.arguments or {})
        await features.log_call(ctx, spec.tool.name)
        return checked_call(ctx.protocol_version, spec.tool.name, spec.validator, arguments, spec.run)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        page, next_cursor = paginate(
            [*(r for r, _ in _STATIC_RESOURCES), *extra.resources()],
            params.cursor if params else None,
            page_size,
        )
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        page, next_cursor = paginate(
            [_ITEM_TEMPLATE, *extra.templates()], params.cursor if params else None, page_size
        )
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=next_cursor)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = params.uri
        if (refusal := extra.refused(uri)) is not None:
            raise refusal
        if uri in static:
            resource, text = static[uri]
            contents = types.TextResourceContents(uri=uri, mime_type=resource.mime_type, text=text)
            return types.ReadResourceResult(contents=[contents])
        if (found := await extra.read(ctx, uri)) is not None:
            return found
        match = _ITEM_URI_RE.fullmatch(uri)
        if match is not None:
            text = f"Item {match.group('item_id')}\n"
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
            )
        raise resource_not_found(ctx.protocol_version, uri)

    def tool_input_schema(tool_name: str) -> Mapping[str, Any] | None:
        # Lets the SDK's Mcp-Param-* header check (2026-07-28 HTTP) look a schema up
        # directly instead of paging through tools/list on every tools/call.
        spec = by_name.get(tool_name)
        if tool_name == ASK_TOOL.name:
            return ASK_TOOL.input_schema
        return spec.tool.input_schema if spec is not None else extra.tool_input_schema(tool_name)

    server = reference_server(
        name,
        handlers=(
            list_tools,
            call_tool,
            list_resources,
            *((list_resource_templates,) if extra.serves_templates else ()),
            read_resource,
            *features.handlers(),
            *extra.handlers(),
        ),
        title="MCP conformance reference server",
        instructions="Reference target of the MCP conformance harness; every behaviour shown is expected.",
        tool_input_schema=tool_input_schema,
    )
    if task_support:
        (tasks or TaskSupport(TASK_SUPPORT, page_size=page_size)).install(server)
    return server


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
    return serve(build_server(page_size=args.page_size), args, sse=args.sse)


if __name__ == "__main__":
    sys.exit(main())

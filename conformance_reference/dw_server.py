"""Reference Durable Workflow MCP server: the embedded default target of the `dw-discovery` suite.

Why this exists: the dw-discovery suite needs a target known to meet every row it checks, so that a
failing check against it is a harness bug, and the project's mutants (tests/servers/dw_mutants.py)
need a base to plant one defect each into. It mirrors the Durable sample app's MCP surface
(`list_workflows`, `get_workflow_result`, `get_workflow_history` with byte-limited payload previews)
and serves the `durable-workflow.v2.mcp-discovery` document both as a JSON resource and from a
read-only tool, with input schemas that match the document.

Everything a mutant may change is a method of `DwReference`: the tool set, the document, the listed
tools, the preview cut. The fixture workflow's payloads cover a small payload, exactly the limit, the
limit plus one byte, ten times the limit, and 2-, 3- and 4-byte UTF-8 characters that straddle the
limit at every offset, so a wrong cut shows.

Built on the `mcp` SDK's low-level `Server` and on the shared serving framework (`serving`) (stdio with
JSON-RPC error answers, loopback-only Streamable HTTP, both protocol eras, clean exit on signals).

    python -m conformance_reference.dw_server                     # stdio
    python -m conformance_reference.dw_server --http --port 0     # prints LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import jsonschema
import mcp_types as types
from mcp.server import Server, ServerRequestContext

from conformance_reference.handlers import (
    REFERENCE_VERSION,
    checked_call,
    object_schema,
    paginate,
    reference_server,
    resource_not_found,
    structured_result,
    unknown_tool,
)
from conformance_reference.jsontext import compact
from conformance_reference.serving import serve, serving_parser

__all__ = ["DISCOVERY_URI", "DwReference", "DwTool", "build_server", "main"]

logger = logging.getLogger("conformance_reference.dw")

DISCOVERY_ID: Final = "durable-workflow.v2.mcp-discovery"
TOOL_RESULTS_ID: Final = "durable-workflow.v2.mcp-tool-results"
ENVELOPE_MARKER: Final = "durable-workflow.v2.mcp-tool-result"
DISCOVERY_URI: Final = "dw://mcp/discovery"
WORKFLOW_ID: Final = "wf-fixture-1"
RUN_ID: Final = "run-fixture-1"
DEFAULT_PREVIEW_LIMIT: Final = 64
#: `{"v":"` + text + `"}`: the bytes a fixture payload adds around its text when encoded.
_FRAME_BEFORE, _FRAME_AFTER = 6, 2

JSON = dict[str, Any]
Run = Callable[["DwReference", JSON], "JSON | types.CallToolResult"]


def encode(payload: Any) -> str:
    """The one payload encoding: compact JSON, UTF-8, nothing escaped that need not be."""
    return compact(payload)


def _without_descriptions(schema: JSON) -> JSON:
    """The document's copy of an input schema: property descriptions left out (they are diagnostic)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return dict(schema)
    return {
        **schema,
        "properties": {
            name: {k: v for k, v in sub.items() if k != "description"} if isinstance(sub, dict) else sub
            for name, sub in properties.items()
        },
    }


#: MCP outputSchemas (what structuredContent holds), so MCP clients and the base suite can check results.
_ENVELOPE_SHAPE: Final[JSON] = {
    "type": "object",
    "required": ["schema", "version", "status"],
    "properties": {
        "schema": {"const": ENVELOPE_MARKER},
        "version": {"type": "integer", "minimum": 1},
        "status": {"enum": ["ok", "error"]},
    },
}
_DISCOVERY_SHAPE: Final[JSON] = {
    "type": "object",
    "required": ["schema", "version", "tools"],
    "properties": {
        "schema": {"const": DISCOVERY_ID},
        "version": {"type": "integer"},
        "tools": {"type": "array"},
    },
}


def _mcp_output_schema(tool: DwTool) -> JSON | None:
    if tool.output_schema == TOOL_RESULTS_ID:
        return _ENVELOPE_SHAPE
    return _DISCOVERY_SHAPE if tool.name == "get_mcp_discovery" else None


@dataclass(frozen=True)
class DwTool:
    """One tool as both the document and tools/list describe it, with its implementation."""

    name: str
    description: str
    input_schema: JSON
    run: Run
    output_schema: str | None = None
    durable_surface: str | None = None
    read_only: bool = True
    #: The document's copy of the input schema when it must differ from the live one (mutants only).
    documented_schema: JSON | None = None


@dataclass
class DwReference:
    """The reference's data and behaviour. Mutants subclass it and override exactly one method."""

    preview_limit: int = DEFAULT_PREVIEW_LIMIT

    # ------------------------------------------------------------------ the tool surface

    def tools(self) -> list[DwTool]:
        return [
            DwTool(
                "get_mcp_discovery",
                "Return this server's Durable Workflow MCP discovery document.",
                object_schema({}),
                lambda ref, _a: ref.document(),
            ),
            DwTool(
                "list_workflows",
                "List workflow types and, with show_recent, recent workflow runs.",
                object_schema(
                    {
                        "show_recent": {"type": "boolean", "description": "Include recent workflow runs."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                        "status": {"type": "string", "description": "Filter recent runs by status."},
                    }
                ),
                lambda ref, a: ref.list_workflows(a),
                output_schema=TOOL_RESULTS_ID,
                durable_surface="control_plane",
            ),
            DwTool(
                "get_workflow_result",
                "Return the status and output of a workflow run.",
                object_schema(
                    {"workflow_id": {"type": "string"}, "run_id": {"type": "string"}},
                    ["workflow_id"],
                    examples=[{"workflow_id": WORKFLOW_ID}],
                ),
                lambda ref, a: ref.workflow_result(a),
                output_schema=TOOL_RESULTS_ID,
                durable_surface="control_plane",
            ),
            DwTool(
                "get_workflow_history",
                "Inspect a bounded slice of typed history, with byte-limited payload previews.",
                object_schema(
                    {
                        "workflow_id": {"type": "string", "description": "Workflow instance id."},
                        "run_id": {"type": "string"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "include_payloads": {"type": "boolean", "description": "Add payload previews."},
                    }
                ),
                lambda ref, a: ref.history(a),
                durable_surface="history_export",
            ),
        ]

    def document(self) -> JSON:
        """The discovery document, built from `tools()` so the two cannot drift apart by accident."""
        return {
            "schema": DISCOVERY_ID,
            "version": 1,
            "server": {
                "name": "mcp-conformance-dw-reference",
                "version": REFERENCE_VERSION,
                "cluster_info_url": None,
            },
            "payload_preview_limit_bytes": self.preview_limit,
            "tools": [self.document_tool(tool) for tool in self.tools()],
        }

    def document_tool(self, tool: DwTool) -> JSON:
        return {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.documented_schema or _without_descriptions(tool.input_schema),
            "output_schema": tool.output_schema,
            "annotations": {"readOnlyHint": tool.read_only},
            "durable_surface": tool.durable_surface,
        }

    def listed_tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                output_schema=_mcp_output_schema(tool),
                annotations=types.ToolAnnotations(
                    read_only_hint=tool.read_only, destructive_hint=False, open_world_hint=False
                ),
            )
            for tool in self.tools()
        ]

    # ------------------------------------------------------------------ the fixture workflow

    def payloads(self) -> list[tuple[str, JSON]]:
        """(label, payload) in history order; sizes are of the encoded payload."""
        limit = self.preview_limit
        out = [
            ("small", _sized(10)),
            ("exactly-limit", _sized(limit)),
            ("limit-plus-one", _sized(limit + 1)),
            ("ten-times-limit", _sized(10 * limit if limit else 100)),
        ]
        for char in ("é", "€", "😀"):
            width = len(char.encode("utf-8"))
            for inside in range(1, width):
                # The character starts `inside` bytes before the limit, so a byte cut splits it.
                start = limit - inside
                if start >= _FRAME_BEFORE:
                    text = "a" * (start - _FRAME_BEFORE) + char + "z" * 10
                    out.append((f"straddle-{width}byte-{inside}", {"v": text}))
        return out

    def preview(self, encoded: str) -> JSON:
        """The preview of one encoded payload: at most `limit` bytes, never a split character."""
        data = encoded.encode("utf-8")
        # A prefix of valid UTF-8 can only be broken at its end; "ignore" drops that partial character.
        text = data[: self.preview_limit].decode("utf-8", "ignore")
        return {
            "encoding": "json",
            "size_bytes": len(data),
            "preview_bytes": len(text.encode("utf-8")),
            "truncated": len(data) > self.preview_limit,
            "preview": text,
        }

    def event(self, sequence: int, label: str, payload: JSON, include_payloads: bool) -> JSON:
        encoded = encode(payload)
        event: JSON = {
            "id": f"evt-{sequence}",
            "sequence": sequence,
            "event_type": "ActivityCompleted",
            "label": label,
            "recorded_at": f"2026-01-01T00:00:{sequence:02d}Z",
            "payload_keys": sorted(payload),
            "payload_size_bytes": len(encoded.encode("utf-8")),
        }
        if include_payloads:
            event["payload_preview"] = self.preview(encoded)
            event["payload"] = payload  # the complete machine payload lives in the result
        return event

    def history(self, args: JSON) -> JSON:
        workflow_id = args.get("workflow_id")
        if workflow_id != WORKFLOW_ID and args.get("run_id") != RUN_ID:
            return {
                "found": False,
                "workflow_id": workflow_id,
                "run_id": args.get("run_id"),
                "message": "Workflow run not found.",
            }
        include = bool(args.get("include_payloads", False))
        limit = int(args.get("limit", 50))
        events = [self.event(i + 1, label, p, include) for i, (label, p) in enumerate(self.payloads())]
        shown = events[-limit:]
        return {
            "found": True,
            "workflow_id": WORKFLOW_ID,
            "run_id": RUN_ID,
            "status": "completed",
            "history_event_count": len(events),
            "returned_event_count": len(shown),
            "events_are_most_recent": True,
            "payloads_included": include,
            "payload_preview_limit_bytes": self.preview_limit,
            "events": shown,
            "failures": [],
        }

    def envelope(self, result: Any) -> JSON:
        return {"schema": ENVELOPE_MARKER, "version": 1, "status": "ok", "result": result}

    def list_workflows(self, args: JSON) -> JSON:
        result: JSON = {
            "available_workflows": [{"key": "fixture", "class": "App\\Workflows\\FixtureWorkflow"}],
            "workflow_id_kind": "workflow_instance_id",
            "run_id_kind": "workflow_run_id",
        }
        if args.get("show_recent"):
            recent = [{"workflow_id": WORKFLOW_ID, "run_id": RUN_ID, "status": "completed"}]
            status = args.get("status")
            result["recent_workflows"] = [r for r in recent if status in (None, r["status"])]
        return self.envelope(result)

    def workflow_result(self, args: JSON) -> JSON | types.CallToolResult:
        if args.get("workflow_id") != WORKFLOW_ID:
            body = {
                "schema": ENVELOPE_MARKER,
                "version": 1,
                "status": "error",
                "error": {"code": "workflow_not_found", "message": "Workflow not found.", "retryable": False},
            }
            return structured_result(body, error=True)
        return self.envelope(
            {"workflow_id": WORKFLOW_ID, "run_id": RUN_ID, "status": "completed", "output": {"ok": True}}
        )

    # ------------------------------------------------------------------ resources

    def resources(self) -> list[tuple[types.Resource, Callable[[], str]]]:
        """A JSON resource that is not the document and a text one come first: the search must skip them."""
        return [
            (
                types.Resource(
                    uri="dw://cluster/info",
                    name="cluster-info",
                    mime_type="application/json",
                    description="Fixed cluster facts.",
                ),
                lambda: compact({"schema": "durable-workflow.v2.cluster-info", "version": 1, "nodes": 1}),
            ),
            (
                types.Resource(
                    uri="dw://docs/readme",
                    name="readme",
                    mime_type="text/plain",
                    description="What this server is for.",
                ),
                lambda: "Reference Durable Workflow MCP server of the MCP conformance harness.\n",
            ),
            (
                types.Resource(
                    uri=DISCOVERY_URI,
                    name="mcp-discovery",
                    mime_type="application/json",
                    description="The durable-workflow.v2.mcp-discovery document.",
                ),
                lambda: compact(self.document()),
            ),
        ]


def _sized(size: int) -> JSON:
    """A payload whose encoding is exactly `size` bytes (at least the 8 bytes of its frame)."""
    return {"v": "x" * max(size - _FRAME_BEFORE - _FRAME_AFTER, 0)}


def build_server(reference: DwReference | None = None, *, page_size: int = 3) -> Server[Any]:
    """The SDK server over `reference`; `page_size` makes tools/list span pages."""
    ref = reference or DwReference()
    if page_size < 1:
        raise ValueError("page_size must be at least 1")

    def listed() -> list[types.Tool]:
        return ref.listed_tools()

    def by_name() -> dict[str, tuple[DwTool | None, types.Tool]]:
        specs = {t.name: t for t in ref.tools()}
        return {tool.name: (specs.get(tool.name), tool) for tool in listed()}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        page, next_cursor = paginate(listed(), params.cursor if params else None, page_size)
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec, tool = by_name().get(params.name, (None, None))
        if tool is None:
            raise unknown_tool(params.name)
        arguments: JSON = dict(params.arguments or {})
        validator_cls = jsonschema.validators.validator_for(
            tool.input_schema, default=jsonschema.Draft202012Validator
        )

        def run(args: JSON) -> JSON | types.CallToolResult:
            # A listed tool without an implementation exists only in mutants (an undocumented extra tool).
            return spec.run(ref, args) if spec is not None else {"ok": True}

        return checked_call(ctx.protocol_version, tool.name, validator_cls(tool.input_schema), arguments, run)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        page, next_cursor = paginate(
            [r for r, _ in ref.resources()], params.cursor if params else None, page_size
        )
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        for resource, body in ref.resources():
            if resource.uri == params.uri:
                contents = types.TextResourceContents(
                    uri=params.uri, mime_type=resource.mime_type, text=body()
                )
                return types.ReadResourceResult(contents=[contents])
        raise resource_not_found(ctx.protocol_version, params.uri)

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # None to list, but paged like every list: a cursor it never gave is refused (-32602).
        page, next_cursor = paginate([], params.cursor if params else None, page_size)
        return types.ListResourceTemplatesResult(resource_templates=page, next_cursor=next_cursor)

    def tool_input_schema(tool_name: str) -> Mapping[str, Any] | None:
        entry = by_name().get(tool_name)
        return entry[1].input_schema if entry is not None else None

    return reference_server(
        "mcp-conformance-dw-reference",
        handlers=(list_tools, call_tool, list_resources, list_resource_templates, read_resource),
        title="MCP conformance Durable Workflow reference server",
        instructions="Reference target of the dw-discovery suite; the discovery document is at "
        f"{DISCOVERY_URI} and from get_mcp_discovery.",
        tool_input_schema=tool_input_schema,
    )


def _parse_args(argv: Sequence[str] | None, prog: str) -> argparse.Namespace:
    parser = serving_parser(prog, "Run the reference Durable Workflow MCP server.")
    parser.add_argument("--page-size", type=int, default=3, help="entries per list page (default 3)")
    parser.add_argument(
        "--preview-limit",
        type=int,
        default=DEFAULT_PREVIEW_LIMIT,
        help=f"payload_preview_limit_bytes (default {DEFAULT_PREVIEW_LIMIT}; 0 means no preview bytes)",
    )
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None,
    reference: Callable[[int], DwReference] = DwReference,
    prog: str = "python -m conformance_reference.dw_server",
) -> int:
    """CLI entry point (mutants pass their own `reference` factory); 0 on EOF, SIGTERM or SIGINT."""
    args = _parse_args(argv, prog)
    if args.preview_limit < 0:
        raise SystemExit("--preview-limit must be 0 or more")
    return serve(build_server(reference(args.preview_limit), page_size=args.page_size), args)


if __name__ == "__main__":
    sys.exit(main())

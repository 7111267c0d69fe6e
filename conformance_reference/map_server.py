"""The reference MAP publication-approval review service: `read_review` and `decide_review` of seed 000.

Why it exists: the `map-review` suite needs a target known to meet every row it checks, so that a failing
check against it is a bug in the harness. It serves the two tools exactly as the seed shows them (names,
descriptions, input and output schemas), seeds the seed's review p7 so that `read_review` returns the
seed's structuredContent byte for byte with the seed's compact JSON text block, and keeps its state in
SQLite (`map_state`), where every decision is one atomic compare-and-set. Refusals are tool-execution
errors carrying `{status, code, message}` as structuredContent, the encoding gap rule G-M1 calls best.

The acting account comes from the environment of a stdio process (`MAP_REFERENCE_ACCOUNT`,
`MAP_REFERENCE_TENANT`) or from the `X-Map-Account` / `X-Map-Tenant` headers of an HTTP request; the seed
leaves authentication out, and so does the reference.

    python -m conformance_reference.map_server [--db FILE] [--clock ISO|system]        # stdio
    python -m conformance_reference.map_server --http --port 0 [--db FILE]             # Streamable HTTP

Racers over stdio are separate processes: give them one `--db FILE` (the embedded default does) so that
they share one database. Without `--db`, stdio keeps its state in memory, and HTTP in a temporary file
that is removed at exit (HTTP requests run in worker threads, each with its own connection).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import jsonschema
import mcp_types as types
from jsonschema.exceptions import best_match
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from conformance_reference.handlers import (
    JSON,
    format_validators,
    one_page_tools,
    reference_server,
    refuse_before_sep1303,
    structured_result,
)
from conformance_reference.map_state import (
    DEFAULT_CLOCK,
    ENV_ACCOUNT,
    ENV_TENANT,
    HEADER_ACCOUNT,
    HEADER_TENANT,
    PRIMARY_ACCOUNT,
    PRIMARY_TENANT,
    MapStore,
    Principal,
    ServiceError,
)
from conformance_reference.serving import serve_with_state, stateful_parser

__all__ = ["MapService", "build_server", "main", "seed_tools"]

SCHEMA_ID: Final = "urn:mcp-conformance:map-review:1"


def seed_tools() -> list[JSON]:
    """The seed's two tool definitions (name, description, inputSchema, outputSchema when declared)."""
    from conformance import schemas

    contract = schemas.schema(SCHEMA_ID)
    tools = []
    for entry in contract["x-tools"]:
        tool: JSON = {"name": entry["name"], "description": entry["description"]}
        tool["inputSchema"] = contract["$defs"][entry["inputSchema"]]
        if "outputSchema" in entry:
            tool["outputSchema"] = contract["$defs"][entry["outputSchema"]]
        tools.append(tool)
    return tools


@dataclass
class MapService:
    """The two tools over one store; the principal of a call comes from the process or the request."""

    store: MapStore
    default: Principal

    def principal(self, ctx: ServerRequestContext[Any]) -> Principal:
        request = ctx.request
        headers = getattr(request, "headers", None)
        if isinstance(headers, Mapping):
            return Principal(
                account=headers.get(HEADER_ACCOUNT.lower(), self.default.account),
                tenant=headers.get(HEADER_TENANT.lower(), self.default.tenant),
            )
        return self.default

    def read_review(self, principal: Principal, args: JSON) -> str:
        return self.store.read(principal, args["reference"])

    def decide_review(self, principal: Principal, args: JSON) -> JSON:
        return self.store.decide(
            principal, args["review_id"], args["decision"], args["expected_revision"], args.get("comment")
        )

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        """The first schema violation of the arguments as one line, or None when they are valid."""
        error = best_match(validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return (
            f"Invalid arguments for tool '{tool}'"
            + (f" at '/{where}'" if where else "")
            + f": {error.message}"[:300]
        )

    def refusal(self, exc: ServiceError) -> types.CallToolResult:
        """A refused read or decision: isError with `{status, code, message}` as structuredContent and
        as the JSON text block (gap rule G-M1's best encoding; C-2 maps the code)."""
        return _result(exc.body(), error=True)

    def tools(self) -> list[JSON]:
        """The listed tools: the seed's, unchanged."""
        return seed_tools()

    def read_text_block(self, document: str) -> str:
        """The text block mirrors structuredContent: the stored compact JSON itself."""
        return document


def _result(body: JSON, text: str | None = None, *, error: bool = False) -> types.CallToolResult:
    return structured_result(body, error=error, text=text)


def build_server(service: MapService) -> Server[Any]:
    """A low-level SDK server with the seed's two tools; both eras, as the base reference serves them.

    `service.tools()` is what tools/list shows; calls are always dispatched and validated against the
    seed's own definitions (so a test double can misstate its listing without changing its behaviour).
    """
    tools = seed_tools()
    listed = [
        types.Tool(
            name=t["name"],
            description=t["description"],
            input_schema=t["inputSchema"],
            output_schema=t.get("outputSchema"),
        )
        for t in service.tools()
    ]
    validators = format_validators(tools)
    schemas_by_name = {t["name"]: t["inputSchema"] for t in tools}

    list_tools = one_page_tools(listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        if name not in validators:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name[:128]}")
        arguments: JSON = dict(params.arguments or {})
        problem = service.validate(name, validators[name], arguments)
        if problem is not None:
            body = {"status": 400, "code": "invalid_argument", "message": problem}
            refuse_before_sep1303(ctx.protocol_version, problem, body)
            return _result(body, error=True)
        principal = service.principal(ctx)
        try:
            if name == "read_review":
                document = await anyio.to_thread.run_sync(service.read_review, principal, arguments)
                return _result(json.loads(document), service.read_text_block(document))
            outcome = await anyio.to_thread.run_sync(service.decide_review, principal, arguments)
            return _result(outcome)
        except ServiceError as exc:
            return service.refusal(exc)

    return reference_server(
        "mcp-conformance-map-reference",
        handlers=(list_tools, call_tool),
        title="MCP conformance reference MAP review service",
        instructions="Reference target of the map-review suite: an example publication-approval service.",
        tool_input_schema=schemas_by_name.get,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = stateful_parser(
        "python -m conformance_reference.map_server",
        "Run the reference MAP review service (stdio by default).",
    )
    parser.add_argument(
        "--clock",
        default=os.environ.get("MAP_REFERENCE_CLOCK", DEFAULT_CLOCK),
        help=f"clock of a new database: an RFC 3339 instant to run on from, or `system` ({DEFAULT_CLOCK})",
    )
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None,
    *,
    store_class: type[MapStore] = MapStore,
    service_class: type[MapService] = MapService,
) -> int:
    """CLI entry point; `store_class`/`service_class` let the project's tests plant one defect each."""
    args = parse_args(argv)
    default = Principal(
        account=os.environ.get(ENV_ACCOUNT, PRIMARY_ACCOUNT),
        tenant=os.environ.get(ENV_TENANT, PRIMARY_TENANT),
    )

    def build(path: str | None) -> Server[Any]:
        try:
            store = store_class(path, clock=args.clock)
        except ValueError as exc:
            raise SystemExit(
                f"map_server: --clock {args.clock!r} is not an RFC 3339 instant or 'system' ({exc})"
            ) from None
        return build_server(service_class(store, default))

    return serve_with_state(args, "map-reference-", build)


if __name__ == "__main__":
    sys.exit(main())

"""The fixture's listed tools (FIXTURE-008, -009): the 2020-12 schema tool keeps its keywords, and the
2026-07-28 fixture offers a tool with a string x-mcp-header parameter. Read from the shared tools/list,
nothing called.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, check, missed
from conformance_packs.official_fixture.fixture import fixture_tool, incomplete, offered

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The keywords SEP-2106 (2026-07-28) lets an inputSchema carry beside SEP-1613's.
FIRST_SEP_2106 = "2026-07-28"


def sep_1613_misses(schema: dict[str, Any]) -> list[str]:
    """$schema, $defs.address and additionalProperties: false, as the fixture declares them."""
    misses = []
    if schema.get("$schema") != DIALECT:
        misses.append(f"$schema is {schema.get('$schema')!r}, not {DIALECT!r}")
    defs = schema.get("$defs")
    if not (isinstance(defs, dict) and isinstance(defs.get("address"), dict)):
        misses.append("$defs has no address definition")
    if schema.get("additionalProperties") is not False:
        misses.append("additionalProperties is not false")
    return misses


def sep_2106_misses(schema: dict[str, Any]) -> list[str]:
    """allOf holding an anyOf, if/then/else, and $anchor in $defs.address."""
    misses = []
    all_of = schema.get("allOf")
    if not (
        isinstance(all_of, list)
        and any(isinstance(s, dict) and isinstance(s.get("anyOf"), list) for s in all_of)
    ):
        misses.append("allOf with a nested anyOf is missing")
    absent = [k for k in ("if", "then", "else") if k not in schema]
    if absent:
        misses.append("conditional keyword(s) missing: " + ", ".join(absent))
    defs = schema.get("$defs")
    address = defs.get("address") if isinstance(defs, dict) else None
    if not (isinstance(address, dict) and "$anchor" in address):
        misses.append("$anchor is missing from $defs.address")
    return misses


@check(
    "official-fixture.listed.json-schema-2020-12",
    "FIXTURE-008",
    "json_schema_2020_12_tool is listed with its 2020-12 keywords kept",
)
async def json_schema_2020_12(ctx: CaseContext) -> None:
    tool = await fixture_tool(ctx, "json_schema_2020_12_tool", "json-schema-2020-12-tool-found")
    schema = tool.get("inputSchema")
    schema = schema if isinstance(schema, dict) else {}
    misses = sep_1613_misses(schema)
    if ctx.revision >= FIRST_SEP_2106:
        misses += sep_2106_misses(schema)
    if misses:
        missed(
            "json_schema_2020_12_tool's inputSchema lost what the fixture declares: " + "; ".join(misses),
            diagnostics=f"inputSchema keys: {sorted(schema)}",
        )


def header_params(tool: dict[str, Any]) -> list[tuple[str, Any]]:
    """(property, its type) of each inputSchema property that declares x-mcp-header."""
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return [
        (name, prop.get("type"))
        for name, prop in (props.items() if isinstance(props, dict) else [])
        if isinstance(prop, dict) and "x-mcp-header" in prop
    ]


@check(
    "official-fixture.listed.x-mcp-header",
    "FIXTURE-009",
    "the fixture offers a tool with a string x-mcp-header parameter",
    eras=("modern",),
)
async def x_mcp_header(ctx: CaseContext) -> None:
    named = await offered(ctx)
    listed = await ctx.list_all("tools/list", "tools")
    with_header = [t for t in listed.items if isinstance(t, dict) and header_params(t)]
    if not with_header:
        incomplete("a tool with an x-mcp-header parameter", "sep-2243-server-no-xmcp-tool", named)
    if not any(kind == "string" for t in with_header for _, kind in header_params(t)):
        missed(
            "no listed tool has a string-typed x-mcp-header parameter; the official suite fails "
            "sep-2243-server-no-string-param without one",
            diagnostics="x-mcp-header tools: " + ", ".join(str(t.get("name")) for t in with_header[:10]),
        )


@check(
    "official-fixture.listed.reconnection",
    "FIXTURE-017",
    "the 2025-11-25 fixture offers test_reconnection over Streamable HTTP",
    revisions=("2025-11-25",),
    transports=("http",),
)
async def reconnection(ctx: CaseContext) -> None:
    # Listed, not called: the tool closes its POST stream before its result, which a client then polls
    # for with a GET and Last-Event-ID (the base pack's BASE-HTTP-019 to -022 judge the stream rules).
    await fixture_tool(ctx, "test_reconnection", "server-sse-test-reconnection-tool")

"""A tool's JSON Schema as a client holds it: a network $ref never fetched (SEP-2106), the 2020-12
vocabulary kept (SEP-1613, SEP-2106)."""

from __future__ import annotations

from typing import Any

from conformance.pack_api import ClientContext, client_check, missed
from conformance_packs.client.scenarios import CANARY_PATH, ECHO_TOOL, SCHEMA_2020_12

#: The keywords the echoed schema must keep, each with where it stands in the schema.
KEPT = {
    "$schema": ("$schema",),
    "$defs with $anchor": ("$defs", "address", "$anchor"),
    "$ref": ("properties", "address", "$ref"),
    "allOf/anyOf": ("allOf",),
    "if": ("if",),
    "then": ("then",),
    "else": ("else",),
    "additionalProperties": ("additionalProperties",),
}


@client_check(
    "client.schemas.no-network-ref",
    "CLIENT-SCHEMA-001",
    "a $ref to a network URI in a tool's inputSchema is not dereferenced",
    scenario="json-schema-ref-no-deref",
    revisions=("2026-07-28",),
    transports=("http",),
)
async def no_network_ref(ctx: ClientContext) -> None:
    ctx.needs("tools/list", "list the tools")
    fetched = [a for a in ctx.recording.arrivals if a.path.split("?")[0] == CANARY_PATH]
    if fetched:
        missed(
            f"the client fetched the network $ref {CANARY_PATH} "
            f"({len(fetched)} request(s), {fetched[0].method})"
        )


def _at(schema: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        schema = schema.get(key) if isinstance(schema, dict) else None
    return schema


@client_check(
    "client.schemas.keywords-kept",
    "CLIENT-SCHEMA-002",
    "a tool's 2020-12 inputSchema keeps its keywords as the client holds it",
    scenario="json-schema-2020-12-preservation",
    revisions=("2025-11-25", "2026-07-28"),
    transports=("http", "stdio"),
)
async def keywords_kept(ctx: ClientContext) -> None:
    echoes = [
        m
        for m in ctx.needs("tools/call", f"echo the schema through {ECHO_TOOL}")
        if m.params.get("name") == ECHO_TOOL
    ]
    if not echoes:
        ctx.unless_failed(f"the client did not call {ECHO_TOOL}")
        ctx.absent(f"the client did not echo the schema through {ECHO_TOOL}: nothing shows what it kept")
    echoed = (echoes[0].params.get("arguments") or {}).get("schema")
    lost = [name for name, path in KEPT.items() if _at(echoed, path) != _at(SCHEMA_2020_12, path)]
    if lost:
        missed(f"the schema the client holds lost or changed: {', '.join(lost)}", request=echoes[0].value)

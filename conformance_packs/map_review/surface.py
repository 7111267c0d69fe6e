"""MAP-TOOL rows: the two tools are listed with the seed's schemas."""

from __future__ import annotations

import json
from typing import Any, Final

from jsonschema import Draft202012Validator

from conformance.pack_api import CaseContext, meta, missed, skip, weak
from conformance_packs.map_review.common import (
    DECIDE,
    PROFILE_CHECK,
    READ,
    listed_tool,
    listed_tools,
    map_check,
    seed_tool,
)

DIALECT_2020: Final = "https://json-schema.org/draft/2020-12/schema"
#: Keywords that annotate without constraining: a listed schema may add or drop them freely.
ANNOTATIONS: Final = frozenset(
    {"title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"}
)
#: Keywords whose value maps names to subschemas (the names are data, not keywords).
NAMED_SCHEMAS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
ONE_SCHEMA: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    }
)
SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SETS: Final = frozenset({"required", "enum"})


def normalise(schema: Any) -> Any:
    """A schema with its annotations dropped and its set-valued keywords sorted, walked keyword-aware.

    Property names such as `title` inside `properties` are data, so they stay; only the keyword `title`
    of a schema object goes. `$schema` goes when it names 2020-12, the dialect MCP assumes anyway.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS or (key == "$schema" and value == DIALECT_2020):
            continue
        if key in NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: normalise(sub) for name, sub in value.items()}
        elif key in ONE_SCHEMA:
            out[key] = normalise(value)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalise(sub) for sub in value]
        elif key in SETS and isinstance(value, list):
            out[key] = sorted(value, key=lambda v: json.dumps(v, sort_keys=True))
        else:
            out[key] = value
    return out


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """The JSON pointer of the first place two normalised schemas differ, with both values."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            if key not in actual:
                return f"{path}/{key}: missing (the seed has {json.dumps(expected[key])[:120]})"
            if key not in expected:
                return f"{path}/{key}: not in the seed ({json.dumps(actual[key])[:120]})"
            found = first_difference(expected[key], actual[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(a, b, f"{path}/{index}")
            if found:
                return found
        return None
    if expected != actual:
        seed, listing = json.dumps(expected)[:120], json.dumps(actual)[:120]
        return f"{path or '/'}: the seed has {seed}, the listing {listing}"
    return None


def compare(tool: str, key: str, listed: dict[str, Any]) -> None:
    expected = seed_tool(tool).get(key)
    if key not in listed:
        why = (
            " (a SHOULD: MCP makes outputSchema optional and the seed is an illustrative example, not a "
            "normative binding; MAP-READ-001 still judges every result against the seed's schema)"
            if key == "outputSchema"
            else ""
        )
        missed(
            f"{tool} lists no {key}; the seed declares one, so its results have no declared contract{why}",
            listed=json.dumps(listed)[:1500],
        )
    difference = first_difference(normalise(expected), normalise(listed[key]))
    if difference:
        missed(f"{tool} {key} differs from the seed's at {difference}", listed=json.dumps(listed[key])[:1500])


@map_check(PROFILE_CHECK, "MAP-PROFILE-001", "the server shows the MAP review tools it claims")
async def profile_is_shown(ctx: CaseContext) -> None:
    tools, calls = await listed_tools(ctx)
    shown = [name for name in (READ, DECIDE) if name in tools]
    if not shown:
        names = sorted(tools)
        missed(
            f"the server is tested against the map-review profile, but tools/list lists neither {READ} nor "
            f"{DECIDE} ({len(names)} tools: {', '.join(names[:12]) or 'none'}): the server claims a "
            "profile it does not show; the other map-review rows are SKIP, blocked by this one",
            **(calls[-1].excerpt() if calls else {}),
        )
    ctx.note(f"tools/list shows {', '.join(shown)}")


@map_check("map-review.tools.listed", "MAP-TOOL-001", "read_review and decide_review are listed")
async def tools_listed(ctx: CaseContext) -> None:
    tools, calls = await listed_tools(ctx)
    missing = [name for name in (READ, DECIDE) if name not in tools]
    if missing:
        missed(f"tools/list does not list {', '.join(missing)}", **(calls[-1].excerpt() if calls else {}))
    ctx.note(f"{len(tools)} tools listed in {len(calls)} page(s)")


@map_check("map-review.tools.read-input-schema", "MAP-TOOL-002", "read_review inputSchema equals the seed's")
async def read_input_schema(ctx: CaseContext) -> None:
    compare(READ, "inputSchema", await listed_tool(ctx, READ))


@map_check(
    "map-review.tools.read-output-schema", "MAP-TOOL-003", "read_review declares the seed's outputSchema"
)
async def read_output_schema(ctx: CaseContext) -> None:
    compare(READ, "outputSchema", await listed_tool(ctx, READ))


@map_check(
    "map-review.tools.decide-input-schema", "MAP-TOOL-004", "decide_review inputSchema equals the seed's"
)
async def decide_input_schema(ctx: CaseContext) -> None:
    compare(DECIDE, "inputSchema", await listed_tool(ctx, DECIDE))


@map_check(
    "map-review.tools.schemas-meta-valid", "MAP-TOOL-005", "listed schemas are valid JSON Schema 2020-12"
)
async def schemas_meta_valid(ctx: CaseContext) -> None:
    checked = 0
    tools, _ = await listed_tools(ctx)
    present = [tools[name] for name in (READ, DECIDE) if name in tools]
    if not present:
        skip("needs read_review or decide_review in tools/list (see map-review.tools.listed)")
    patterns: list[str] = []
    for tool in present:
        name = tool["name"]
        for key in ("inputSchema", "outputSchema"):
            if key not in tool:
                continue
            checked += 1
            judged = meta.judge(Draft202012Validator, tool[key])
            if judged.error is not None:
                missed(
                    f"{name} {key} is not a valid 2020-12 schema at {meta.where(judged.error)}:"
                    f" {judged.error.message[:200]}",
                    listed=json.dumps(tool[key])[:1500],
                )
            patterns.extend(f"{name} {key} at {meta.where(e)}: {e.instance!r}" for e in judged.bad_patterns)
    ctx.note(f"{checked} schemas are meta-valid")
    if patterns:
        weak(meta.bad_patterns_message(patterns))

"""Schema validity of the discovery document, one check per DWD-DOC row, plus version skew.

The document is validated once; each violation belongs to exactly one row (by its schema path, see
`document.row_of`), so one defect fails one check. Checks whose member is absent from the document
pass when the row only constrains a present member ("if present"), and SKIP when another row already
reports the absence.
"""

from __future__ import annotations

from jsonschema import validators

from conformance.pack_api import CaseContext, blocked, check, meta, missed, skip, weak
from conformance_packs.dw_discovery.common import REQUIRED, SERVE, fail_on, judged, with_tools
from conformance_packs.dw_discovery.document import (
    TOOL_RESULTS_ID,
    V14_SURFACES,
    catalog_version,
    describe,
    integral_float,
    is_absolute_url,
    violations_of,
)
from conformance_packs.dw_discovery.locate import find_document


@check("dw-discovery.doc.object", "DWD-DOC-001", "the document is a JSON object", once=True)
async def is_object(ctx: CaseContext) -> None:
    found = await find_document(ctx)
    if found.refused is not None or found.source is None or found.problem is not None:
        blocked(SERVE, "no document delivered (see dw-discovery.serve.located)")
    if found.parse_error is not None:
        missed(f"the {found.source.describe()} is not JSON: {found.parse_error}", **found.evidence)
    if not isinstance(found.document, dict):
        kind = type(found.document).__name__
        missed(f"the document's root is a JSON {kind}, not an object", **found.evidence)
    found, _, violations = await judged(ctx)
    fail_on(found, violations, "DWD-DOC-001")


@check("dw-discovery.doc.required", "DWD-DOC-002", "schema, version and tools are present", once=True)
async def required(ctx: CaseContext) -> None:
    found, _, violations = await judged(ctx)
    fail_on(found, violations, "DWD-DOC-002")


@check("dw-discovery.doc.schema-id", "DWD-DOC-003", "schema is the exact discovery id", once=True)
async def schema_id(ctx: CaseContext) -> None:
    found, document, violations = await judged(ctx)
    if "schema" not in document:
        blocked(REQUIRED, "the document has no schema member (DWD-DOC-002 reports its absence)")
    fail_on(found, violations, "DWD-DOC-003")


@check("dw-discovery.doc.version", "DWD-DOC-004", "version is an integer >= 1", once=True)
async def version(ctx: CaseContext) -> None:
    found, document, violations = await judged(ctx)
    if "version" not in document:
        blocked(REQUIRED, "the document has no version member (DWD-DOC-002 reports its absence)")
    fail_on(found, violations, "DWD-DOC-004")
    if integral_float(document["version"]):
        weak(f"version is {document['version']!r}: an integer for 2020-12, but written as a fraction")


@check("dw-discovery.doc.server", "DWD-DOC-005", "server, when present, is well formed", once=True)
async def server(ctx: CaseContext) -> None:
    found, document, violations = await judged(ctx)
    fail_on(found, violations, "DWD-DOC-005")
    value = document.get("server")
    if value is None:
        ctx.note("no server member (optional)")
        return
    url = value.get("cluster_info_url") if isinstance(value, dict) else None
    if isinstance(url, str) and not is_absolute_url(url):
        ctx.soft_warn(f"server.cluster_info_url {url!r} is not an absolute URL")


@check(
    "dw-discovery.doc.preview-limit",
    "DWD-DOC-006",
    "payload_preview_limit_bytes, when present, is an integer >= 0",
    once=True,
)
async def preview_limit(ctx: CaseContext) -> None:
    found, document, violations = await judged(ctx)
    fail_on(found, violations, "DWD-DOC-006")
    if "payload_preview_limit_bytes" not in document:
        ctx.note("no payload_preview_limit_bytes (optional)")
    elif integral_float(document["payload_preview_limit_bytes"]):
        ctx.soft_warn("payload_preview_limit_bytes is written as a fraction; many consumers want an integer")


@check(
    "dw-discovery.doc.tools",
    "DWD-DOC-007",
    "tools is an array of tools with name and input_schema",
    once=True,
)
async def tools(ctx: CaseContext) -> None:
    found, document, violations = await judged(ctx)
    if "tools" not in document:
        blocked(REQUIRED, "the document has no tools member (DWD-DOC-002 reports its absence)")
    fail_on(found, violations, "DWD-DOC-007")
    if document["tools"] == []:
        weak("tools is empty: schema-valid, but a discovery surface without tools says nothing")
    ctx.note(f"{len(document['tools'])} tools")


@check("dw-discovery.doc.tool-names", "DWD-DOC-008", "tool names match ^[a-zA-Z0-9_.:-]+$", once=True)
async def tool_names(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    if not any("name" in t for t in tools):
        skip("no tool has a name (DWD-DOC-007 reports it)")
    fail_on(found, violations, "DWD-DOC-008")


@check("dw-discovery.doc.descriptions", "DWD-DOC-009", "tool descriptions are strings or null", once=True)
async def descriptions(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    fail_on(found, violations, "DWD-DOC-009")
    if not any("description" in t for t in tools):
        ctx.note("no tool has a description (optional)")


@check("dw-discovery.doc.input-schemas", "DWD-DOC-010", "input_schema is a JSON Schema object", once=True)
async def input_schemas(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    if not any("input_schema" in t for t in tools):
        skip("no tool has an input_schema (DWD-DOC-007 reports it)")
    fail_on(found, violations, "DWD-DOC-010")
    for tool in tools:
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            continue
        dialect = schema.get("$schema")
        cls = (
            validators.validator_for({"$schema": dialect}, default=validators.Draft202012Validator)
            if isinstance(dialect, str)
            else validators.Draft202012Validator
        )
        judged = meta.judge(cls, schema)
        if judged.error is not None:
            ctx.soft_warn(
                f"tool {tool.get('name')!r}: input_schema is not a valid JSON Schema at"
                f" {meta.where(judged.error)}: {judged.error.message[:160]}"
                " (the seed does not demand meta-validity)"
            )
        for bad in judged.bad_patterns:
            ctx.soft_warn(
                f"tool {tool.get('name')!r}: input_schema pattern at {meta.where(bad)} is not an"
                f" ECMA-262 regular expression: {bad.instance!r}"[:300]
            )


@check("dw-discovery.doc.output-schema", "DWD-DOC-011", "output_schema is a schema id or null", once=True)
async def output_schema(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    fail_on(found, violations, "DWD-DOC-011")
    unknown = sorted(
        {t["output_schema"] for t in tools if isinstance(t.get("output_schema"), str)} - {TOOL_RESULTS_ID}
    )
    if unknown:
        ctx.soft_warn(f"unknown-output-schema-id: {unknown[:5]!r} (the seed names {TOOL_RESULTS_ID!r})")
    if not any("output_schema" in t for t in tools):
        ctx.note("no tool has an output_schema (optional)")


@check("dw-discovery.doc.annotations", "DWD-DOC-012", "annotations, when present, are objects", once=True)
async def tool_annotations(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    fail_on(found, violations, "DWD-DOC-012")
    if not any("annotations" in t for t in tools):
        ctx.note("no tool has annotations (optional)")


@check(
    "dw-discovery.doc.durable-surface",
    "DWD-DOC-013",
    "durable_surface is one of the catalog-13 values or null",
    once=True,
)
async def durable_surface(ctx: CaseContext) -> None:
    found, _, violations, tools = await with_tools(ctx)
    fail_on(found, violations, "DWD-DOC-013")
    if not any("durable_surface" in t for t in tools):
        ctx.note("no tool has a durable_surface (optional)")


@check(
    "dw-discovery.doc.version-skew",
    "DWD-SCHEMA-002",
    "durable_surface values of a later catalog are version skew",
    once=True,
)
async def version_skew(ctx: CaseContext) -> None:
    _, _, violations, _ = await with_tools(ctx)
    skew = violations_of(violations, "DWD-SCHEMA-002")
    ctx.note(f"judged against catalog version {catalog_version()}")
    if not skew:
        return
    message = (
        f"version-skew: durable_surface values that catalog version 14 added ({', '.join(V14_SURFACES)}) "
        f"are not in catalog version {catalog_version()}: {describe(skew)}"
    )
    evidence = {"violations": [v.as_dict() for v in skew]}
    if ctx.options.strict:
        missed(message + " (--strict)", **evidence)
    weak(message + " (additive under additive_minor_breaking_major; --strict makes this a FAIL)", **evidence)

"""The binding's surface: the five tools, their annotations, list_representations, the resource template.

These rows need no fixture: they read what any UWMD server lists. Each runs on every revision the server
speaks, because listings and the input-validation encoding of C-3 differ between revisions.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from conformance.pack_api import CaseContext, missed, skip
from conformance_packs.uwmd.common import (
    EDIT,
    LIST,
    MODELS,
    PROFILE_CHECK,
    READ_TOOLS,
    TEMPLATE,
    TOOLS,
    VIEWS,
    expect_success,
    listed_tool,
    listed_tools,
    listing,
    tool,
    uwmd_check,
    walk,
)


@uwmd_check(PROFILE_CHECK, "UWMD-PROFILE-001", "the server shows the uwmd tools of the binding it claims")
async def profile_is_shown(ctx: CaseContext) -> None:
    tools = await listed_tools(ctx)
    shown = [name for name in TOOLS if name in tools]
    if not shown:
        names = sorted(tools)
        missed(
            f"the server is tested against the uwmd binding, but tools/list lists none of {', '.join(TOOLS)} "
            f"({len(names)} tools: {', '.join(names[:12]) or 'none'}): the server claims a binding it does "
            "not show; the other uwmd rows are SKIP, blocked by this one"
        )
    ctx.note(f"tools/list shows {len(shown)} of the {len(TOOLS)} uwmd tools")


@uwmd_check("uwmd.tool.listed", "UWMD-TOOL-001", "the five uwmd tools are listed with object inputSchemas")
async def listed(ctx: CaseContext) -> None:
    tools = await listed_tools(ctx)
    missing = [name for name in TOOLS if name not in tools]
    if missing:
        missed(f"tools/list lacks {', '.join(missing)} (it lists {sorted(tools)[:12]})")
    bad = [name for name in TOOLS if not isinstance(tools[name].get("inputSchema"), dict)]
    if bad:
        missed(f"{', '.join(bad)} have no object inputSchema")


@uwmd_check(
    "uwmd.ann.read-only",
    "UWMD-ANN-001",
    "get_document, validate, convert, list_representations are read-only",
)
async def read_only_hints(ctx: CaseContext) -> None:
    tools = await listed_tools(ctx)
    present = [name for name in READ_TOOLS if name in tools]
    if not present:
        skip("needs the read tools in tools/list (see uwmd.tool.listed)")
    lacking = [
        name
        for name in present
        if not (
            isinstance(tools[name].get("annotations"), dict)
            and tools[name]["annotations"].get("readOnlyHint") is True
        )
    ]
    if lacking:
        missed(f"not annotated readOnlyHint: true: {', '.join(lacking)}")


@uwmd_check("uwmd.ann.apply-edit", "UWMD-ANN-002", "apply_edit is not annotated read-only or idempotent")
async def apply_edit_hints(ctx: CaseContext) -> None:
    annotations = (await listed_tool(ctx, EDIT)).get("annotations")
    if not isinstance(annotations, dict):
        ctx.note("no annotations: the MCP defaults (readOnlyHint false, idempotentHint false) apply")
        return
    wrong = [hint for hint in ("readOnlyHint", "idempotentHint") if annotations.get(hint) is True]
    if wrong:
        missed(f"uwmd.apply_edit is annotated {' and '.join(f'{h}: true' for h in wrong)}; it is neither")


@uwmd_check("uwmd.tool.list-input", "UWMD-TOOL-020", "list_representations takes an empty object")
async def list_input(ctx: CaseContext) -> None:
    schema = (await listed_tool(ctx, LIST)).get("inputSchema")
    try:
        problems = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors({})]
    except (SchemaError, TypeError) as exc:
        missed(f"list_representations' inputSchema is not a usable schema: {exc}"[:300])
    if problems:
        missed(f"list_representations' inputSchema rejects {{}}: {problems[0]}"[:300])
    expect_success(await tool(ctx, LIST, {}), "list_representations{}")


def _descriptors(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


@uwmd_check(
    "uwmd.tool.list-output", "UWMD-TOOL-021", "list_representations: template, ordered descriptors, views"
)
async def list_output(ctx: CaseContext) -> None:
    reply = await tool(ctx, LIST, {})
    sc = expect_success(reply, "list_representations{}")
    if not sc:
        missed("list_representations has no structuredContent object", **reply.excerpt())
    if TEMPLATE not in [v for v in sc.values() if isinstance(v, str)]:
        missed(
            f"no member holds the template {TEMPLATE} (reference key: resource_template)", **reply.excerpt()
        )
    arrays = [_descriptors(v) for v in sc.values()]
    models = next(
        (a for a in arrays if a and all("id" in d for d in a) and a[0].get("id") == "uw-json"), None
    )
    if models is None:
        missed(
            "no descriptor array starting with uw-json (reference key: representations)", **reply.excerpt()
        )
    ids = [d.get("id") for d in models[:3]]
    if ids != list(MODELS):
        missed(f"the descriptors start {ids}, not {list(MODELS)}", **reply.excerpt())
    required = ("id", "media_types", "directions", "fidelity", "representation_version")
    for descriptor in models:
        lacking = [k for k in required if k not in descriptor]
        if lacking:
            missed(f"descriptor {descriptor.get('id')!r} lacks {', '.join(lacking)}", **reply.excerpt())
    named = set()
    for value in sc.values():
        if isinstance(value, list):
            for item in value:
                name = (
                    item if isinstance(item, str) else (item.get("view") if isinstance(item, dict) else None)
                )
                if isinstance(name, str):
                    named.add(name)
    missing = [v for v in VIEWS if v not in named]
    if missing:
        missed(f"no view list names {', '.join(missing)} (reference key: views)", **reply.excerpt())
    if not any("max_bytes" in d for d in models):
        ctx.note("no descriptor states max_bytes (limits are optional per codec)")


@uwmd_check("uwmd.tool.view-fidelity", "UWMD-TOOL-022", "no view descriptor advertises model fidelity")
async def view_fidelity(ctx: CaseContext) -> None:
    reply = await tool(ctx, LIST, {})
    sc = expect_success(reply, "list_representations{}")
    views = [
        (path, node)
        for path, node in walk(sc)
        if isinstance(node, dict) and ("view" in node or node.get("id") in VIEWS)
    ]
    wrong = [(path, node.get("fidelity")) for path, node in views if node.get("fidelity") != "view"]
    if wrong:
        path, fidelity = wrong[0]
        missed(
            f"the view descriptor at {path or '/'} advertises fidelity {fidelity!r}, not 'view'",
            **reply.excerpt(),
        )
    if not views:
        ctx.note("list_representations describes no view on its own: no view claims model fidelity")
    else:
        ctx.note(f"{len(views)} view descriptors, all fidelity view")


@uwmd_check(
    "uwmd.res.template-listed", "UWMD-RES-002", "the RFC 6570 deal template is in resources/templates/list"
)
async def template_listed(ctx: CaseContext) -> None:
    templates, calls = await listing(ctx, "resources/templates/list", "resourceTemplates")
    found = [t.get("uriTemplate") for t in templates]
    if TEMPLATE in found:
        return
    message = f"resources/templates/list does not contain {TEMPLATE} (it has {found[:5]})"
    evidence = calls[-1].excerpt() if calls else {}
    if ctx.identity.has("resources"):
        missed(message, **evidence)
    ctx.soft_warn(message + "; the server does not declare the resources capability")

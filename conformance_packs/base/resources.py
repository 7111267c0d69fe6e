"""resources/list, resources/templates/list and resources/read checks (when the capability is offered)."""

from __future__ import annotations

from conformance.pack_api import CaseContext, check, jsonrpc, missed, shape_errors, skip, weak

UNKNOWN_URI = "conformance://no-such-resource/7f3a"


@check("base.resources.list-shape", "BASE-RES-001", "resources/list result shape", capability="resources")
async def list_shape(ctx: CaseContext) -> None:
    paged = await ctx.list_all("resources/list", "resources")
    calls, problem = paged.calls, paged.problem
    for index, call in enumerate(calls):
        problems = shape_errors("listResourcesResult", call.result, ctx.revision)
        if problems:
            missed(f"page {index + 1}: " + "; ".join(problems), **call.excerpt())
    if problem:
        missed(problem, **(calls[-1].excerpt() if calls else {}))


@check(
    "base.resources.templates-shape",
    "BASE-RES-002",
    "resources/templates/list result shape",
    capability="resources",
)
async def templates_shape(ctx: CaseContext) -> None:
    call = await ctx.request("resources/templates/list")
    if call.error_code == jsonrpc.METHOD_NOT_FOUND:
        weak(
            "the resources capability is offered but resources/templates/list is not implemented",
            **call.excerpt(),
        )
    problems = shape_errors("listResourceTemplatesResult", call.result, ctx.revision)
    if problems:
        missed("; ".join(problems), **call.excerpt())


@check("base.resources.read-shape", "BASE-RES-003", "resources/read returns contents", capability="resources")
async def read_shape(ctx: CaseContext) -> None:
    items = (await ctx.list_all("resources/list", "resources")).items
    uris = [r["uri"] for r in items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    if not uris:
        skip("resources/list offers no resource to read")
    call = await ctx.request("resources/read", {"uri": uris[0]})
    problems = shape_errors("readResourceResult", call.result, ctx.revision)
    if problems:
        missed(f"reading {uris[0]!r}: " + "; ".join(problems), **call.excerpt())


@check(
    "base.resources.unknown-uri",
    "BASE-RES-004",
    "reading an unknown resource is an error",
    capability="resources",
)
async def unknown_uri(ctx: CaseContext) -> None:
    call = await ctx.request("resources/read", {"uri": UNKNOWN_URI})
    if call.error is None:
        missed(f"resources/read of {UNKNOWN_URI!r} did not answer with an error", **call.excerpt())
    documented = jsonrpc.INVALID_PARAMS if ctx.era == "modern" else jsonrpc.RESOURCE_NOT_FOUND
    if call.error_code != documented:
        ctx.note(f"{call.drew()} ({documented} is the documented one)")

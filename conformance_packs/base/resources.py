"""resources/list, resources/templates/list and resources/read checks (when the capability is offered)."""

from __future__ import annotations

from conformance.pack_api import CaseContext, check, jsonrpc, missed, shape_errors, skip
from conformance_packs.base.common import judge_pages

UNKNOWN_URI = "conformance://no-such-resource/7f3a"
#: Listed resources BASE-RES-003 tries, in listed order, until one is read with a result.
MAX_READ_TRIES = 20


@check("base.resources.list-shape", "BASE-RES-001", "resources/list result shape", capability="resources")
async def list_shape(ctx: CaseContext) -> None:
    await judge_pages(
        ctx,
        "resources/list",
        "resources",
        lambda result: shape_errors("listResourcesResult", result, ctx.revision),
    )


@check(
    "base.resources.templates-shape",
    "BASE-RES-002",
    "resources/templates/list result shape",
    capability="resources",
)
async def templates_shape(ctx: CaseContext) -> None:
    call = await ctx.request("resources/templates/list")
    if call.error is not None and not isinstance(call.result, dict):
        # No revision requires resources/templates/list: a server without templates may not serve it,
        # and an error answer is judged as an error, never validated as a result.
        skip(f"resources/templates/list was refused with {call.drew()}; no revision requires the method")
    problems = shape_errors("listResourceTemplatesResult", call.result, ctx.revision)
    if problems:
        missed("; ".join(problems), **call.excerpt())


@check("base.resources.read-shape", "BASE-RES-003", "resources/read returns contents", capability="resources")
async def read_shape(ctx: CaseContext) -> None:
    """The first listed resource the server reads now is validated: a listed resource that answers with
    an error (a file gone, a host unreachable) is read past, since no sentence requires every listed
    resource to be readable at every moment; BASE-RES-004 judges the error for one that does not exist."""
    items = (await ctx.list_all("resources/list", "resources")).items
    uris = [r["uri"] for r in items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    if not uris:
        skip("resources/list offers no resource to read")
    refused: list[str] = []
    for uri in uris[:MAX_READ_TRIES]:
        call = await ctx.request("resources/read", {"uri": uri})
        if call.error is not None and not isinstance(call.result, dict):
            refused.append(f"{uri!r} ({call.drew()})")
            continue
        problems = shape_errors("readResourceResult", call.result, ctx.revision)
        if problems:
            missed(f"reading {uri!r}: " + "; ".join(problems), **call.excerpt())
        if refused:
            ctx.note(f"read {uri!r}; read past {len(refused)} refused: " + ", ".join(refused[:3]))
        return
    skip(
        f"every listed resource tried ({len(refused)}) was refused with an error, which no rule forbids: "
        + ", ".join(refused[:3])
    )


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

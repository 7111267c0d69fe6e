"""Lifecycle checks: the opening exchange of each era and legacy version negotiation."""

from __future__ import annotations

from conformance.pack_api import (
    CLIENT_INFO,
    MODERN_REVISIONS,
    Call,
    CaseContext,
    check,
    is_known,
    missed,
    result_of,
    shape_errors,
    unjudgeable,
)


@check("base.lifecycle.initialize-shape", "BASE-LIFE-002", "initialize result shape", eras=("legacy",))
async def initialize_shape(ctx: CaseContext) -> None:
    # The session opened on an answer with a result, whatever its shape (`Session.open`): it is judged here.
    opening = ctx.identity.opening
    if opening is None:
        unjudgeable("the session has no initialize result to inspect")
    problems = shape_errors("initializeResult", result_of(opening)[1], ctx.revision)
    if problems:
        missed("; ".join(problems), **opening.excerpt())


@check(
    "base.lifecycle.version-negotiation",
    "BASE-LIFE-003",
    "unknown version answered with a supported one",
    eras=("legacy",),
)
async def version_negotiation(ctx: CaseContext) -> None:
    # The request carries nothing of the revision: one server process answers it for every legacy
    # revision, each judging the same answer.
    call, where = await ctx.target_once(
        "base:version-negotiation", "initialize with an unknown version", lambda: _unknown_version(ctx)
    )
    ctx.calls.append(call)
    if where != ctx.revision:
        ctx.note(f"the same initialize as in {where}'s case, answered once for every revision")
    result = call.result
    if not isinstance(result, dict):
        missed("initialize with protocolVersion 1999-01-01 was not answered with a result", **call.excerpt())
    offered = result.get("protocolVersion")
    if not isinstance(offered, str) or offered == "1999-01-01":
        missed(
            f"the server answered protocolVersion {offered!r}, not a version it supports", **call.excerpt()
        )
    # Any revision the server offers answers the MUST (2024-11-05 to 2025-11-25 alike); the harness can
    # only say whether it knows that revision.
    if is_known(offered):
        ctx.note(f"offered {offered}")
    else:
        ctx.note(f"offered {offered!r}, a revision this harness does not know")


async def _unknown_version(ctx: CaseContext) -> tuple[Call, str]:
    """An initialize offering 1999-01-01 on a process of its own, closed once answered, and the
    revision whose case sent it."""
    session = await ctx.fresh_session_unopened()
    try:
        call = await session.request(
            "initialize",
            {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": CLIENT_INFO},
            envelope=False,
        )
    finally:
        await session.close()
    return call, ctx.revision


@check("base.discover.shape", "BASE-DISC-001", "server/discover result shape", eras=("modern",))
async def discover_shape(ctx: CaseContext) -> None:
    # The session opened on an answer with a result, whatever its shape (`Session.open`): a missing
    # supportedVersions is judged here, not read as the revision not being spoken.
    opening = ctx.identity.opening
    if opening is None:
        unjudgeable("the session has no server/discover result to inspect")
    result = result_of(opening)[1]
    problems = shape_errors("discoverResult", result, "modern")
    supported = result.get("supportedVersions") if isinstance(result, dict) else None
    if isinstance(supported, list) and not any(v in supported for v in MODERN_REVISIONS):
        problems.append(f"supportedVersions lacks {MODERN_REVISIONS[0]}")
    if problems:
        missed("; ".join(problems), **opening.excerpt())


@check("base.modern.result-type", "BASE-MODERN-001", "every result carries resultType", eras=("modern",))
async def result_type(ctx: CaseContext) -> None:
    calls = [ctx.identity.opening] if ctx.identity.opening else []
    calls.append(await ctx.request("tools/list"))
    if ctx.identity.has("resources"):
        calls.append(await ctx.request("resources/list"))
    for call in calls:
        if call is None or not isinstance(call.result, dict):
            continue
        if not isinstance(call.result.get("resultType"), str):
            missed(
                f"a {call.request and call.request.get('method')} result has no string resultType",
                **call.excerpt(),
            )

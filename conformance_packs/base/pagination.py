"""Pagination and caching of every list method the server declares (tools/list ending is BASE-TOOLS-006).

Every listing is the engine's one (`ctx.list_all`: fetched once per revision, capped, a repeated or
non-string cursor ending it), so what these checks judge is what every other check read.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import Call, CaseContext, check, jsonrpc, missed, skip
from conformance_packs.base.wirelog import excerpt, read_log

#: (capability, method, key) of each paginated list method.
LISTS = (
    ("tools", "tools/list", "tools"),
    ("resources", "resources/list", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates"),
    ("prompts", "prompts/list", "prompts"),
)
INVALID_CURSOR = "conformance-invalid-cursor-7f3a"
#: Methods whose complete results 2026-07-28 requires caching hints on (server/utilities/caching).
CACHEABLE = (
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


def _declared(ctx: CaseContext, *, with_tools: bool = True) -> list[tuple[str, str, str]]:
    return [entry for entry in LISTS if ctx.identity.has(entry[0]) and (with_tools or entry[0] != "tools")]


def _unimplemented(calls: list[Call]) -> bool:
    """A listing refused on its first page (resources/templates/list answered -32601 by a server with
    resources, say): no pages to follow; the method's shape row judges the refusal (BASE-RES-002 SKIPs
    it, since no revision requires that method; a declared capability's list method refused is WARN)."""
    return bool(calls) and calls[0].error is not None and not isinstance(calls[0].result, dict)


@check("base.page.lists-end", "BASE-PAGE-001", "every list method pages to its end")
async def lists_end(ctx: CaseContext) -> None:
    wanted = _declared(ctx, with_tools=False)
    if not wanted:
        skip("the server declares neither resources nor prompts (tools/list is BASE-TOOLS-006's)")
    judged = []
    for _, method, key in wanted:
        listing = await ctx.list_all(method, key)
        if _unimplemented(listing.calls):
            continue
        if listing.problem:
            missed(f"{method}: {listing.problem}", **listing.calls[-1].excerpt())
        judged.append(f"{method} ({len(listing.calls)} page(s), {len(listing.items)} items)")
    if not judged:
        skip("no declared list method is implemented")
    ctx.note("ended: " + ", ".join(judged))


@check("base.page.invalid-cursor", "BASE-PAGE-002", "an invalid cursor is answered with -32602")
async def invalid_cursor(ctx: CaseContext) -> None:
    wanted = _declared(ctx)
    if not wanted:
        skip("the server declares no list method (tools, resources, prompts)")
    judged = []
    for _, method, key in wanted:
        listing = await ctx.list_all(method, key)
        if _unimplemented(listing.calls):
            continue
        call = await ctx.request(method, {"cursor": INVALID_CURSOR})
        if call.error_code == jsonrpc.INVALID_PARAMS:
            judged.append(method)
            continue
        if call.error is None:
            ctx.miss_should(f"{method} with cursor {INVALID_CURSOR!r} was answered with a result, not -32602")
        else:
            ctx.miss_should(
                f"{method} with cursor {INVALID_CURSOR!r} was refused with {call.drew()}, not -32602"
            )
        judged.append(method)
    if not judged:
        skip("no declared list method is implemented")
    ctx.note(f"cursor {INVALID_CURSOR!r} sent to " + ", ".join(judged))


def _hint_faults(result: dict[str, Any]) -> list[str]:
    faults = []
    ttl = result.get("ttlMs")
    if "ttlMs" not in result:
        faults.append("no ttlMs")
    elif isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        faults.append(f"ttlMs {ttl!r} is not an integer >= 0")
    scope = result.get("cacheScope")
    if "cacheScope" not in result:
        faults.append("no cacheScope")
    elif scope not in ("public", "private"):
        faults.append(f'cacheScope {scope!r} is neither "public" nor "private"')
    return faults


@check(
    "base.page.caching-hints",
    "BASE-PAGE-003",
    "cacheable results carry ttlMs and cacheScope",
    eras=("modern",),
    last=True,
)
async def caching_hints(ctx: CaseContext) -> None:
    entries, seen = read_log(ctx)
    results = [
        s
        for s in seen
        if s.kind == "response"
        and s.method in CACHEABLE
        and isinstance(s.message.get("result"), dict)
        and s.message["result"].get("resultType", "complete") == "complete"
    ]
    if not results:
        skip("no complete result of a cacheable method in this revision's exchanges")
    for item in results:
        faults = _hint_faults(item.message["result"])
        if faults:
            missed(
                f"message {item.entry} ({item.method} result): " + ", ".join(faults), **excerpt(entries, item)
            )
    methods = sorted({s.method or "" for s in results})
    ctx.note(f"{len(results)} complete results judged ({', '.join(methods)})")


@check(
    "base.page.same-cache-scope",
    "BASE-PAGE-004",
    "every page of a listing has the same cacheScope",
    eras=("modern",),
)
async def same_cache_scope(ctx: CaseContext) -> None:
    wanted = _declared(ctx)
    judged = []
    for _, method, key in wanted:
        listing = await ctx.list_all(method, key)
        scopes = [c.result.get("cacheScope") for c in listing.calls if isinstance(c.result, dict)]
        if len(scopes) < 2:
            continue
        if len(set(map(repr, scopes))) > 1:
            index = next(i for i, s in enumerate(scopes) if s != scopes[0])
            missed(
                f"{method}: page 1 has cacheScope {scopes[0]!r}, page {index + 1} {scopes[index]!r}",
                **listing.calls[index].excerpt(),
            )
        judged.append(f"{method} ({len(scopes)} pages, {scopes[0]!r})")
    if not judged:
        skip("no declared listing spans more than one page: nothing to compare")
    ctx.note("one cacheScope on every page: " + ", ".join(judged))

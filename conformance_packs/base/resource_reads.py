"""Reading every listed resource and a few template expansions: contents, base64, template syntax, and
the error for a resource that does not exist, each revision by its own words."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    Call,
    CaseContext,
    blocked,
    check,
    jsonrpc,
    missed,
    shape_errors,
    skip,
)
from conformance_packs.base.resources import UNKNOWN_URI
from conformance_packs.base.uritemplate import expand, template_problem

#: Listed resources read (a server may list thousands) and template expansions tried.
MAX_READS = 20
MAX_EXPANSIONS = 3
#: The value put in every template variable: digits fit the most ids (a number, a name, a path part).
EXPANSION_VALUE = "1"


@dataclass
class Reads:
    """The reads made for the contents checks: (uri, call, where the URI came from)."""

    done: list[tuple[str, Call, str]] = field(default_factory=list)
    #: URIs of templates expanded whose read the server refused (no fault: the value may not exist).
    refused: list[str] = field(default_factory=list)
    listed: int = 0

    def results(self) -> list[tuple[str, Call, dict[str, Any]]]:
        return [(uri, call, call.result) for uri, call, _ in self.done if isinstance(call.result, dict)]

    def line(self) -> str:
        expanded = sum(1 for _, _, origin in self.done if origin != "listed")
        text = f"read {self.listed} listed resource(s) and {expanded} template expansion(s)"
        unreadable = [uri for uri, call, origin in self.done if origin == "listed" and call.error is not None]
        refused = unreadable + self.refused
        if refused:
            text += f"; refused (not held against the server): {', '.join(refused[:5])}"
        return text


async def templates(ctx: CaseContext) -> list[dict[str, Any]]:
    items = (await ctx.list_all("resources/templates/list", "resourceTemplates")).items
    return [t for t in items if isinstance(t, dict) and isinstance(t.get("uriTemplate"), str)]


async def reads(ctx: CaseContext) -> Reads:
    """Read each listed resource (at most MAX_READS) and MAX_EXPANSIONS template expansions, once per
    (target, revision). A refused expansion is no fault: the server cannot know every value exists."""

    async def read_all() -> Reads:
        out = Reads()
        items = (await ctx.list_all("resources/list", "resources")).items
        uris = [r["uri"] for r in items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        for uri in uris[:MAX_READS]:
            out.done.append((uri, await ctx.request("resources/read", {"uri": uri}), "listed"))
            out.listed += 1
        listing = await ctx.list_all("resources/templates/list", "resourceTemplates")
        if listing.calls and listing.calls[0].error is None:
            for template in await templates(ctx):
                if len(out.done) - out.listed >= MAX_EXPANSIONS:
                    break
                if template_problem(template["uriTemplate"]):
                    continue
                uri = expand(template["uriTemplate"], EXPANSION_VALUE)
                call = await ctx.request("resources/read", {"uri": uri})
                if isinstance(call.result, dict):
                    out.done.append((uri, call, template["uriTemplate"]))
                else:
                    out.refused.append(uri)
        return out

    return await ctx.remember_once("resource-reads", "reading the listed resources", read_all)


@check(
    "base.resources.contents-valid",
    "BASE-RES-010",
    "every resource read returns valid contents",
    capability="resources",
)
async def contents_valid(ctx: CaseContext) -> None:
    done = await reads(ctx)
    if not done.done:
        skip("resources/list offers nothing to read and no template expansion was accepted")
    for uri, call, _ in done.done:
        if call.error is not None and call.result is None:
            continue  # a listed resource the server would not read: BASE-RES-003 and others judge errors
        problems = shape_errors("readResourceResult", call.result, ctx.revision)
        if problems:
            missed(f"reading {uri!r}: " + "; ".join(problems), **call.excerpt())
    judged = len(done.results())
    if not judged:
        skip("no read was answered with a result: " + done.line())
    ctx.note(f"{judged} result(s) judged; " + done.line())


#: RFC 4648 section 4 base64: the standard alphabet, padded to a multiple of four characters.
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def base64_problem(blob: str) -> str:
    if not _BASE64.fullmatch(blob):
        return "is not RFC 4648 base64 (standard alphabet, padded, no whitespace)"
    try:
        base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"does not decode as base64: {exc}"
    return ""


@check(
    "base.resources.blob-base64",
    "BASE-RES-011",
    "binary contents are properly base64-encoded",
    capability="resources",
)
async def blob_base64(ctx: CaseContext) -> None:
    done = await reads(ctx)
    blobs = 0
    for uri, call, result in done.results():
        contents = result.get("contents")
        for index, item in enumerate(contents if isinstance(contents, list) else []):
            if not isinstance(item, dict) or not isinstance(item.get("blob"), str):
                continue
            blobs += 1
            problem = base64_problem(item["blob"])
            if problem:
                missed(f"reading {uri!r}: contents[{index}].blob {problem}", **call.excerpt())
    if not blobs:
        skip("no resource read returned a blob: " + done.line())
    ctx.note(f"{blobs} blob(s) decoded; " + done.line())


@check(
    "base.resources.template-syntax",
    "BASE-RES-012",
    "resource templates are RFC 6570 URI templates",
    capability="resources",
)
async def template_syntax(ctx: CaseContext) -> None:
    listing = await ctx.list_all("resources/templates/list", "resourceTemplates")
    if listing.calls and listing.calls[0].error is not None:
        skip("resources/templates/list was answered with an error (BASE-RES-002 judges it)")
    found = await templates(ctx)
    if not found:
        skip("resources/templates/list offers no template")
    for template in found:
        problem = template_problem(template["uriTemplate"])
        if problem:
            missed(f"uriTemplate {template['uriTemplate']!r} is not an RFC 6570 template: {problem}")
    ctx.note(f"{len(found)} template(s) parsed")


async def _unknown(ctx: CaseContext) -> Call:
    return await ctx.remember_once(
        "resource-unknown",
        "reading an unknown resource",
        lambda: ctx.request("resources/read", {"uri": UNKNOWN_URI}),
    )


@check(
    "base.resources.unknown-code-modern",
    "BASE-RES-014",
    "an unknown resource is -32602",
    capability="resources",
    revisions=MODERN_REVISIONS,
)
async def unknown_code_modern(ctx: CaseContext) -> None:
    call = await _unknown(ctx)
    if call.error is None:
        skip("the server answered with a result (BASE-RES-004 and BASE-RES-016 judge it)")
    if call.error_code != jsonrpc.INVALID_PARAMS:
        missed(f"{call.drew()}, not -32602", **call.excerpt())


@check(
    "base.resources.unknown-data-uri",
    "BASE-RES-017",
    "an unknown resource's error names the URI in data.uri",
    capability="resources",
    revisions=MODERN_REVISIONS,
)
async def unknown_data_uri(ctx: CaseContext) -> None:
    call = await _unknown(ctx)
    if call.error is None:
        skip("the server answered with a result (BASE-RES-004 and BASE-RES-016 judge it)")
    if call.error_code != jsonrpc.INVALID_PARAMS:
        blocked("base.resources.unknown-code-modern", f"{call.drew()}, not the -32602 whose data is shown")
    data = call.error.get("data") if isinstance(call.error, dict) else None
    uri = data.get("uri") if isinstance(data, dict) else None
    if uri != UNKNOWN_URI:
        missed(f"error.data.uri is {uri!r}, not the URI read ({UNKNOWN_URI!r})", **call.excerpt())
    ctx.note(f"error.data.uri names {UNKNOWN_URI!r}")


@check(
    "base.resources.unknown-code-legacy",
    "BASE-RES-015",
    "an unknown resource is -32002",
    capability="resources",
    revisions=LEGACY_REVISIONS,
)
async def unknown_code_legacy(ctx: CaseContext) -> None:
    call = await _unknown(ctx)
    if call.error is None:
        skip("the server answered with a result (BASE-RES-004 judges it)")
    if call.error_code != jsonrpc.RESOURCE_NOT_FOUND:
        hint = " (the code 2026-07-28 adopted, SEP-2164)" if call.error_code == jsonrpc.INVALID_PARAMS else ""
        missed(f"{call.drew()}{hint}, not the -32002 this revision asks for", **call.excerpt())


@check(
    "base.resources.unknown-not-empty",
    "BASE-RES-016",
    "no empty contents for a non-existent resource",
    capability="resources",
    revisions=MODERN_REVISIONS,
)
async def unknown_not_empty(ctx: CaseContext) -> None:
    call = await _unknown(ctx)
    result = call.result
    if isinstance(result, dict) and result.get("contents") == []:
        missed(f"resources/read of {UNKNOWN_URI!r} returned an empty contents array", **call.excerpt())
    if call.error is not None:
        ctx.note(f"answered with {call.drew()}")
    else:
        ctx.note("answered with contents the server holds for that URI")

"""UWMD-RESULT and CTX rows: where a result's value goes, and how much of it.

Every row here judges one tour of successful calls of the five tools (each representation and two views of
get_document, validate, convert to uw-xml and to the bundle, list_representations, and an apply_edit on a
deal of its own), made once per (target, revision) and shared: the rows differ in what they look for, not
in what they send. A call of the tour that fails is left to the TOOL rows.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.pack_api import CaseContext, missed, skip
from conformance_packs.uwmd.common import (
    CONVERT,
    EDIT,
    GET,
    LIST,
    VALIDATE,
    Reply,
    edit,
    etag_of,
    fx_optional,
    load,
    note_once,
    shared_deal,
    text_blocks,
    tool,
    uwmd_check,
    walk,
)

TOUR = "uwmd:tour"
STRUCTURED_LIMIT = 16 * 1024
LONG_TEXT = 1024


async def tour(ctx: CaseContext) -> list[tuple[str, str, Reply]]:
    """(tool, label, reply) for every call of the tour; cached, its wire entries attached to each row."""
    if TOUR not in ctx.shared:
        mark = ctx.mark()
        deal = await shared_deal(ctx)
        calls: list[tuple[str, str, dict[str, Any]]] = [
            (GET, "get_document", {"deal_id": deal.deal_id}),
            (GET, "get_document uw-xml", {"deal_id": deal.deal_id, "representation": "uw-xml"}),
            (GET, "get_document uw-csv-bundle", {"deal_id": deal.deal_id, "representation": "uw-csv-bundle"}),
            (GET, "get_document view rent_roll", {"deal_id": deal.deal_id, "view": "rent_roll"}),
            (GET, "get_document view deal_summary", {"deal_id": deal.deal_id, "view": "deal_summary"}),
            (VALIDATE, "validate", {"deal_id": deal.deal_id}),
            (CONVERT, "convert uw-xml", {"deal_id": deal.deal_id, "target_representation": "uw-xml"}),
            (
                CONVERT,
                "convert uw-csv-bundle",
                {"deal_id": deal.deal_id, "target_representation": "uw-csv-bundle"},
            ),
            (LIST, "list_representations", {}),
        ]
        replies = [(name, label, await tool(ctx, name, args)) for name, label, args in calls]
        fixture = await fx_optional(ctx)
        if fixture is not None and fixture.has("load_deal"):
            own = await load(ctx)
            digest = (await tool(ctx, GET, {"deal_id": own.deal_id})).sc.get("semantic_digest")
            if isinstance(digest, str):
                operation = {"kind": "frontmatter_set", "path": "recommendation", "value": "approve"}
                replies.append((EDIT, "apply_edit", await edit(ctx, own, etag_of(digest), operation)))
        ctx.shared[TOUR] = (replies, ctx.wire_since(mark))
    replies, entries = ctx.shared[TOUR]
    ctx.attach(entries)
    if not any(name == EDIT for name, _, _ in replies):
        note_once(ctx, "no load_deal: apply_edit is not part of the tour")
    return replies


async def successes(ctx: CaseContext, *names: str) -> list[tuple[str, str, Reply]]:
    chosen = [(n, label, r) for n, label, r in await tour(ctx) if r.success and (not names or n in names)]
    failed = [label for n, label, r in await tour(ctx) if not r.success and (not names or n in names)]
    if failed:
        note_once(ctx, f"not judged here (they did not succeed; see the TOOL rows): {', '.join(failed)}")
    if not chosen:
        skip("needs successful calls of the uwmd tools (see the uwmd.tool rows)")
    return chosen


@uwmd_check("uwmd.result.structured", "UWMD-RESULT-001", "successful tool results use structuredContent")
async def structured(ctx: CaseContext) -> None:
    results = await successes(ctx)
    lacking = [label for _, label, r in results if not isinstance(r.result.get("structuredContent"), dict)]
    if lacking:
        missed(f"no structuredContent object in: {', '.join(lacking)}")
    ctx.note(f"{len(results)} results")


def compact(text: str) -> bool:
    """No whitespace outside string literals: the text re-tokenised, strings skipped."""
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in " \t\r\n":
            return False
    return True


def json_blocks(reply: Reply) -> list[tuple[str, Any]]:
    out = []
    for text in text_blocks(reply.result):
        try:
            out.append((text, json.loads(text)))
        except ValueError:
            continue
    return out


@uwmd_check(
    "uwmd.result.text-mirror", "UWMD-RESULT-002", "one compact JSON text block carries the same value"
)
async def text_mirror(ctx: CaseContext) -> None:
    problems = []
    for _, label, reply in await successes(ctx):
        sc = reply.result.get("structuredContent")
        if not isinstance(sc, dict):
            continue
        blocks = json_blocks(reply)
        equal = [text for text, value in blocks if value == sc]
        if not equal:
            problems.append(
                f"{label}: no text block deep-equals structuredContent ({len(blocks)} JSON blocks)"
            )
        elif len(blocks) > 1:
            problems.append(f"{label}: {len(blocks)} JSON text blocks, not one")
        elif not compact(equal[0]):
            problems.append(f"{label}: the JSON text block is not compact")
    if problems:
        missed("; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""))


@uwmd_check(
    "uwmd.result.text-agrees",
    "UWMD-RESULT-002-EQUAL",
    "a JSON text block of a uwmd tool equals its structuredContent",
)
async def text_agrees(ctx: CaseContext) -> None:
    for _, label, reply in await successes(ctx):
        sc = reply.result.get("structuredContent")
        if not isinstance(sc, dict):
            continue
        for text, value in json_blocks(reply):
            if isinstance(value, dict) and value != sc:
                differing = sorted(k for k in {*value, *sc} if value.get(k) != sc.get(k))
                missed(
                    f"{label}: a JSON text block differs from structuredContent at {differing[:5]}",
                    text=text[:600],
                    **reply.excerpt(),
                )


def inline_problems(sc: Any) -> list[str]:
    """Documents or binary artifacts inside structuredContent (RESULT-003)."""
    found = []
    for path, value in walk(sc):
        key = path.rsplit("/", 1)[-1]
        if key in ("frontmatter", "sections", "blob") and path:
            found.append(f"a {key} member at {path}")
        elif isinstance(value, str) and len(value) > LONG_TEXT and _base64_like(value):
            found.append(f"{len(value)} characters of base64 at {path}")
    return found


def _base64_like(text: str) -> bool:
    import re

    return re.fullmatch(r"[A-Za-z0-9+/=\s]+", text) is not None


@uwmd_check(
    "uwmd.result.links-not-inline",
    "UWMD-RESULT-003",
    "documents and binaries are resource links, not members",
)
async def links_not_inline(ctx: CaseContext) -> None:
    problems = []
    for _, label, reply in await successes(ctx, GET, CONVERT, EDIT):
        found = inline_problems(reply.result.get("structuredContent"))
        if found:
            problems.append(f"{label}: {found[0]}")
        if not reply.links():
            problems.append(f"{label}: no resource_link in content")
    if problems:
        missed("; ".join(problems[:4]))


@uwmd_check("uwmd.ctx.bundle-link", "UWMD-CTX-003", "CSV bundles stay resource links in tool results")
async def bundle_link(ctx: CaseContext) -> None:
    problems = []
    bundles = [
        (n, label, r) for n, label, r in await successes(ctx, GET, CONVERT) if "uw-csv-bundle" in label
    ]
    if not bundles:
        skip(
            "needs a successful get_document or convert of uw-csv-bundle (see uwmd.res.model-representations)"
        )
    for _, label, reply in bundles:
        embedded = [
            b.get("type")
            for b in reply.result.get("content") or []
            if isinstance(b, dict) and b.get("type") == "resource"
        ]
        blobs = [path for path, _ in walk(reply.result) if path.endswith("/blob")]
        if embedded or blobs:
            problems.append(
                f"{label}: carries the bundle ({'an embedded resource' if embedded else blobs[0]})"
            )
        if not reply.links():
            problems.append(f"{label}: no resource_link")
    if problems:
        missed("; ".join(problems))


@uwmd_check(
    "uwmd.ctx.structured-receipts", "UWMD-CTX-004", "issues, descriptors, receipts, summaries are structured"
)
async def structured_receipts(ctx: CaseContext) -> None:
    problems = []
    by_label = {label: reply for _, label, reply in await successes(ctx)}
    validated = by_label.get("validate")
    if validated is not None and not isinstance(validated.sc.get("issues"), list):
        problems.append("validate's structuredContent has no issues array")
    listed = by_label.get("list_representations")
    if listed is not None and not any(
        isinstance(v, list) and v and all(isinstance(d, dict) and "id" in d for d in v)
        for v in listed.sc.values()
    ):
        problems.append("list_representations' structuredContent has no descriptor array")
    edited = by_label.get("apply_edit")
    if edited is not None and not {"semantic_digest", "etag"} <= set(edited.sc):
        problems.append("apply_edit's structuredContent is not a receipt (semantic_digest, etag)")
    summary = by_label.get("get_document view deal_summary")
    six = {
        "deal_id",
        "resource_uri",
        "representation_id",
        "view",
        "fidelity",
        "media_type",
        "semantic_digest",
    }
    if summary is not None and not any(
        isinstance(v, dict | list) and v for k, v in summary.sc.items() if k not in six
    ):
        problems.append("get_document{view: deal_summary} carries no summary rows in structuredContent")
    if problems:
        missed("; ".join(problems))


def _markdown(text: str) -> bool:
    return len(text) > LONG_TEXT and ("\n#" in text or text.lstrip().startswith("#") or "\n\n" in text)


@uwmd_check("uwmd.ctx.no-prose-metadata", "UWMD-CTX-005", "no prose-heavy documents in tool metadata")
async def no_prose_metadata(ctx: CaseContext) -> None:
    problems = []
    for _, label, reply in await successes(ctx):
        for where, value in (
            ("structuredContent", reply.result.get("structuredContent")),
            ("_meta", reply.result.get("_meta")),
        ):
            if value is None:
                continue
            size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
            if size > STRUCTURED_LIMIT:
                problems.append(f"{label}: {where} is {size} bytes (over 16 KiB)")
            for path, node in walk(value):
                if path.rsplit("/", 1)[-1] == "prose":
                    problems.append(f"{label}: a prose member at {where}{path}")
                    break
                if isinstance(node, str) and _markdown(node):
                    problems.append(f"{label}: {len(node)} characters of Markdown at {where}{path}")
                    break
    if problems:
        missed("; ".join(problems[:4]))

"""Payload-preview semantics (DWD-PREV-001..004, gap rule G-D4), one check per property.

Each property has its own check, so one defect (a long preview, a split character, a wrong flag)
fails one check. Previews come from `previews.collect`; without a preview-bearing result every check
SKIPs, naming what was looked for.
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.pack_api import CaseContext, check, missed, skip
from conformance_packs.dw_discovery.previews import (
    Preview,
    byte_count,
    full_payload,
    previews_or_skip,
    truncated_flag,
    utf8_cut,
    within_limit,
)


def _judge(
    ctx: CaseContext, previews: list[Preview], rule: Callable[[Preview], str | None], what: str
) -> None:
    problems = [problem for p in previews if (problem := rule(p)) is not None]
    if problems:
        missed(
            f"{len(problems)} of {len(previews)} previews: " + "; ".join(problems[:8]), problems=problems[:50]
        )
    ctx.note(f"{len(previews)} previews {what}")


@check("dw-discovery.preview.within-limit", "DWD-PREV-001", "previews fit the byte limit", once=True)
async def preview_within_limit(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    limited = [p for p in found.previews if p.limit is not None and p.text is not None]
    if not limited:
        skip("no preview has a limit: neither the result nor the document gives payload_preview_limit_bytes")
    _judge(ctx, limited, within_limit, "within their limit")


@check(
    "dw-discovery.preview.byte-count",
    "DWD-PREV-002",
    "preview_bytes and size_bytes are true counts",
    once=True,
)
async def preview_byte_count(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    events = [p for p in found.previews if p.kind == "event"]
    if not events:
        skip("no event preview (preview, size_bytes, preview_bytes, truncated) to count")
    _judge(ctx, events, byte_count, "with true byte counts")


@check(
    "dw-discovery.preview.truncated-flag",
    "DWD-PREV-002",
    "truncated is true exactly when size_bytes exceeds the limit",
    once=True,
)
async def preview_truncated_flag(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    events = [p for p in found.previews if p.kind == "event" and p.limit is not None]
    if not events:
        skip("no event preview with a known limit")
    _judge(ctx, events, truncated_flag, "with a consistent truncated flag")


@check("dw-discovery.preview.utf8-cut", "DWD-PREV-002", "a cut keeps whole UTF-8 characters", once=True)
async def preview_utf8_cut(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    problems, notes = [], []
    for p in found.previews:
        problem, note = utf8_cut(p)
        if problem:
            problems.append(problem)
        if note:
            notes.append(note)
    if problems:
        missed(
            f"{len(problems)} previews split a character: " + "; ".join(problems[:8]), problems=problems[:50]
        )
    for note in notes[:5]:
        ctx.soft_warn(note)
    cut = sum(1 for p in found.previews if p.cut)
    ctx.note(f"{len(found.previews)} previews, {cut} cut, every cut on a character boundary")


@check(
    "dw-discovery.preview.limit-matches",
    "DWD-PREV-003",
    "the per-result limit equals the document's",
    once=True,
)
async def preview_limit_matches(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    if found.document_limit is None:
        skip("the discovery document (if any) gives no payload_preview_limit_bytes")
    if not found.result_limits:
        skip("no preview-bearing result gives payload_preview_limit_bytes")
    wrong = [f"{where} = {value!r}" for where, value in found.result_limits if value != found.document_limit]
    if wrong:
        missed(
            f"per-result limits differ from the document's {found.document_limit}: " + "; ".join(wrong[:8])
        )
    ctx.note(f"{len(found.result_limits)} per-result limits equal {found.document_limit}")


@check(
    "dw-discovery.preview.full-payload",
    "DWD-PREV-004",
    "a cut preview's full payload is retrievable or marked unavailable",
    once=True,
)
async def preview_full_payload(ctx: CaseContext) -> None:
    found = await previews_or_skip(ctx)
    cut = [p for p in found.previews if p.cut]
    if not cut:
        skip("no preview is cut (truncated, or shorter than its payload)")
    _judge(ctx, cut, full_payload, "cut with the full payload available")

"""UWMD-ERR rows: how refusals look. One set of provoked errors per (target, revision) and deal kind, judged
four ways: isError with a compact text (ERR-001), a structured code and precondition details (ERR-002), no
stack trace (ERR-003), and, against a deal that carries a canary marker, no confidential body (ERR-004).

Edits are provoked on a deal of the provocation set's own, so a server that wrongly accepts one cannot
disturb another row; without load_deal only the read-only provocations run.
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import CaseContext, missed
from conformance_packs.uwmd.common import (
    CANARY,
    CONVERT,
    EDIT,
    GET,
    UNKNOWN_DEAL,
    VALIDATE,
    ZERO_TAG,
    Deal,
    Reply,
    current_digest,
    edit,
    edit_args,
    etag_of,
    find_trace,
    fx_optional,
    load,
    rename,
    shared_deal,
    text_blocks,
    tool,
    uwmd_check,
    walk,
)

BUSINESS = (406, 409, 412, 428)
TEXT_LIMIT = 2048


async def provocations(ctx: CaseContext, kind: str = "harbor") -> list[tuple[str, Reply]]:
    """The catalog's ERR-003 list against a deal of `kind` (cached per revision and kind)."""
    key = f"uwmd:provoked:{kind}"
    if key not in ctx.shared:
        mark = ctx.mark()
        fixture = await fx_optional(ctx)
        loadable = fixture is not None and fixture.has("load_deal")
        deal: Deal = await load(ctx, kind) if loadable else await shared_deal(ctx, kind)
        did = deal.deal_id
        out: list[tuple[str, Reply]] = [
            ("an unknown deal_id", await tool(ctx, GET, {"deal_id": UNKNOWN_DEAL})),
            ("a bad view", await tool(ctx, GET, {"deal_id": did, "view": "foo"})),
            ("a bad representation", await tool(ctx, GET, {"deal_id": did, "representation": "uw-pdf"})),
            (
                "view with uw-xml",
                await tool(ctx, GET, {"deal_id": did, "representation": "uw-xml", "view": "rent_roll"}),
            ),
            ("a 100 KB deal_id", await tool(ctx, GET, {"deal_id": "d" * 100_000})),
            (
                "convert to uw-pdf",
                await tool(ctx, CONVERT, {"deal_id": did, "target_representation": "uw-pdf"}),
            ),
            ("validate of an unknown deal", await tool(ctx, VALIDATE, {"deal_id": UNKNOWN_DEAL})),
        ]
        if loadable:
            digest, _ = await current_digest(ctx, deal)
            tag = etag_of(digest) if digest else ZERO_TAG
            mapping = await edit_args(ctx)
            out += [
                ("kind nope", await edit(ctx, deal, tag, {"kind": "nope"})),
                (
                    "frontmatter_set on deal_id",
                    await edit(ctx, deal, tag, {"kind": "frontmatter_set", "path": "deal_id", "value": "x"}),
                ),
                ("a stale if_match", await edit(ctx, deal, ZERO_TAG, rename("stale"))),
                (
                    "a missing if_match",
                    await tool(ctx, EDIT, mapping.build(did, None, rename("no tag"), omit=("if_match",))),
                ),
            ]
            if kind == "mesa-canary":
                conflict = {
                    "kind": "section_replace",
                    "section_id": "risk_assessment",
                    "content": {"overall_rating": "low", "risk_score": 2, "key_risks": []},
                    "meta": {"source": "user"},
                }
                out.append(
                    (
                        "a section_replace of an agent block (policy conflict)",
                        await edit(ctx, deal, tag, conflict),
                    )
                )
        ctx.shared[key] = (out, ctx.wire_since(mark), loadable)
    replies, entries, loadable = ctx.shared[key]
    ctx.attach(entries)
    if not loadable:
        ctx.note("no load_deal: the apply_edit provocations were not sent")
    return replies


def errors_of(replies: list[tuple[str, Reply]]) -> list[tuple[str, Reply]]:
    return [(label, reply) for label, reply in replies if not reply.success]


def strings(value: Any) -> list[str]:
    return [node for _, node in walk(value) if isinstance(node, str)]


@uwmd_check("uwmd.err.is-error", "UWMD-ERR-001", "tool errors are isError results with a compact text")
async def is_error(ctx: CaseContext) -> None:
    replies = await provocations(ctx)
    accepted = [label for label, reply in replies if reply.success]
    if accepted:
        ctx.note(f"accepted (judged by other rows): {', '.join(accepted)}")
    for label, reply in errors_of(replies):
        call = reply.call
        if call.error is not None:
            status = reply.outcome.status
            if status in BUSINESS:
                ctx.soft_warn(f"{label}: a {status} answered as a JSON-RPC error, not an isError result")
            elif call.error_code != -32602:
                missed(
                    f"{label}: answered with JSON-RPC error {call.error_code}, not an isError result",
                    **reply.excerpt(),
                )
            continue
        if reply.result.get("isError") is not True:
            missed(f"{label}: refused without isError: true", **reply.excerpt())
        texts = [t for t in text_blocks(reply.result) if t.strip()]
        if not texts:
            missed(f"{label}: the isError result has no non-empty text block", **reply.excerpt())
        size = max(len(t.encode("utf-8")) for t in texts)
        if size >= TEXT_LIMIT:
            missed(f"{label}: the error text is {size} bytes, not compact (under 2 KiB)", **reply.excerpt())
    ctx.note(f"{len(errors_of(replies))} provoked errors")


PRECONDITION_KEYS = ("current_etag", "expected", "if_match", "retryable", "precondition")


@uwmd_check(
    "uwmd.err.structured", "UWMD-ERR-002", "errors carry a structured code, message and precondition details"
)
async def structured_errors(ctx: CaseContext) -> None:
    problems = []
    for label, reply in errors_of(await provocations(ctx)):
        if reply.call.error is not None:
            body = reply.call.error.get("data") if isinstance(reply.call.error, dict) else None
        else:
            body = reply.sc
        body = body if isinstance(body, dict) else {}
        inner: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
        if not (isinstance(inner.get("code"), str) and isinstance(inner.get("message"), str)):
            problems.append(f"{label}: no string code and message")
            continue
        if reply.outcome.status in (412, 428):
            places = [body, inner, body.get("precondition"), body.get("details")]
            if not any(isinstance(p, dict) and any(k in p for k in PRECONDITION_KEYS) for p in places):
                problems.append(f"{label}: a {reply.outcome.status} without precondition details")
    if problems:
        missed("; ".join(problems[:4]))


@uwmd_check("uwmd.err.no-stack-traces", "UWMD-ERR-003", "no stack traces in tool errors")
async def no_stack_traces(ctx: CaseContext) -> None:
    for label, reply in errors_of(await provocations(ctx)):
        for text in strings(reply.call.response):
            trace = find_trace(text)
            if trace:
                missed(f"{label}: the error exposes a stack trace ({trace!r})", **reply.excerpt())


@uwmd_check("uwmd.err.no-confidential", "UWMD-ERR-004", "no confidential source bodies in tool errors")
async def no_confidential(ctx: CaseContext) -> None:
    replies = await provocations(ctx, "mesa-canary")
    for label, reply in errors_of(replies):
        if CANARY in reply.raw() or any(CANARY in text for text in strings(reply.call.response)):
            missed(f"{label}: the error carries the deal's confidential marker {CANARY}", **reply.excerpt())
    ctx.note(f"{len(errors_of(replies))} errors against the canary deal, none carries {CANARY}")

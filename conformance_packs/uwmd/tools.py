"""UWMD-TOOL rows: what each of the five tools takes and returns, and the Tier-2 editor's rules.

Rows that edit load a deal of their own (load_deal) so that nothing they do can change what another row
reads. After every expected refusal the deal's digest is read again (C-4): a refusal that committed is a
FAIL of the row that provoked it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.pack_api import CaseContext, load_vectors, missed, skip
from conformance_packs.uwmd import jcs
from conformance_packs.uwmd.common import (
    CONVERT,
    DIGEST,
    EDIT,
    GET,
    LIST,
    MEDIA,
    SUITE,
    VALIDATE,
    Deal,
    Reply,
    current_digest,
    edit,
    edit_args,
    etag_of,
    expect_refused,
    expect_rejected_input,
    expect_status,
    expect_success,
    expect_unchanged,
    load,
    read,
    readable,
    rename,
    shared_deal,
    tool,
    uw_json,
    uwmd_check,
    walk,
)

CODE_FAMILY = re.compile(r"^(CC-\d{2}|FV_.+|META_.+)$")
DOCUMENT_KEYS = ("deal_id", "resource_uri", "fidelity", "media_type", "semantic_digest")


def document_problems(
    sc: dict[str, Any], *, representation: str | None = None, view: str | None = None
) -> list[str]:
    """TOOL-004's tests of one get_document/convert structured result."""
    problems = [f"lacks {k}" for k in DOCUMENT_KEYS if k not in sc]
    if ("representation_id" in sc) == ("view" in sc):
        problems.append("must carry exactly one of representation_id and view")
    digest = sc.get("semantic_digest")
    if not (isinstance(digest, str) and DIGEST.match(digest)):
        problems.append(f"semantic_digest {digest!r} does not match ^sha256:[0-9a-f]{{64}}$")
    if sc.get("fidelity") not in ("model", "view"):
        problems.append(f"fidelity {sc.get('fidelity')!r} is not model or view")
    if "view" in sc and sc.get("fidelity") != "view":
        problems.append("a view result must have fidelity view")
    if representation is not None and sc.get("representation_id") != representation:
        problems.append(f"representation_id is {sc.get('representation_id')!r}, not {representation!r}")
    if view is not None and sc.get("view") != view:
        problems.append(f"view is {sc.get('view')!r}, not {view!r}")
    return problems


def link_problems(reply: Reply) -> list[str]:
    """TOOL-005's tests: a resource_link to resource_uri with a name and (when given) the media type."""
    sc = reply.sc
    links = [link for link in reply.links() if link.get("uri") == sc.get("resource_uri")]
    if not links:
        return [
            f"no resource_link with uri {sc.get('resource_uri')!r} "
            f"(links: {[link.get('uri') for link in reply.links()]})"
        ]
    link = links[0]
    problems = []
    if not isinstance(link.get("name"), str) or not link["name"]:
        problems.append("the resource_link has no name")
    if "mimeType" in link and link["mimeType"] != sc.get("media_type"):
        problems.append(
            f"the resource_link's mimeType {link['mimeType']!r} is not media_type {sc.get('media_type')!r}"
        )
    return problems


async def _document_results(ctx: CaseContext, deal: Deal) -> list[tuple[dict[str, Any], Reply]]:
    out = []
    for selection in ({}, {"representation": "uw-xml"}, {"view": "rent_roll"}):
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id, **selection})
        expect_success(reply, f"get_document {selection or 'default'}")
        out.append((selection, reply))
    return out


@uwmd_check(
    "uwmd.tool.default-representation", "UWMD-TOOL-002", "get_document defaults to uw-json at model fidelity"
)
async def default_representation(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    reply = await tool(ctx, GET, {"deal_id": deal.deal_id})
    sc = expect_success(reply, "get_document{deal_id}")
    got = (sc.get("representation_id"), sc.get("fidelity"), sc.get("media_type"))
    if got != ("uw-json", "model", MEDIA["uw-json"]):
        missed(
            f"default get_document gives {got}, expected ('uw-json', 'model', {MEDIA['uw-json']!r})",
            **reply.excerpt(),
        )


@uwmd_check("uwmd.tool.view-exclusive", "UWMD-TOOL-003", "view excludes a non-default representation")
async def view_exclusive(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    conflict = await tool(
        ctx, GET, {"deal_id": deal.deal_id, "representation": "uw-xml", "view": "rent_roll"}
    )
    expect_status(ctx, conflict, (400,), "view rent_roll with uw-xml", strict=False)
    for selection in ({"representation": "uw-json", "view": "rent_roll"}, {"view": "rent_roll"}):
        reply = await tool(ctx, GET, {"deal_id": deal.deal_id, **selection})
        sc = expect_success(reply, f"get_document {selection}")
        if sc.get("view") != "rent_roll" or sc.get("fidelity") != "view":
            missed(f"{selection} did not give the rent_roll view: {json.dumps(sc)[:200]}", **reply.excerpt())


@uwmd_check("uwmd.tool.result-keys", "UWMD-TOOL-004", "get_document's result has the six keys")
async def result_keys(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for selection, reply in await _document_results(ctx, deal):
        problems = document_problems(
            reply.sc, view=selection.get("view"), representation=selection.get("representation")
        )
        if problems:
            missed(f"get_document {selection or 'default'}: {'; '.join(problems)}", **reply.excerpt())


@uwmd_check("uwmd.tool.resource-link", "UWMD-TOOL-005", "get_document's content includes a resource_link")
async def resource_link(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for selection, reply in await _document_results(ctx, deal):
        problems = link_problems(reply)
        if problems:
            missed(f"get_document {selection or 'default'}: {'; '.join(problems)}", **reply.excerpt())


@uwmd_check("uwmd.tool.link-resolves", "UWMD-TOOL-006", "the resource_link resolves for the same principal")
async def link_resolves(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import contents, media_equal

    deal = await shared_deal(ctx)
    for selection, reply in await _document_results(ctx, deal):
        links = [link for link in reply.links() if isinstance(link.get("uri"), str)]
        if not links:
            skip("needs a resource_link in get_document's result (see uwmd.tool.resource-link)")
        target = await read(ctx, links[0]["uri"])
        expect_success(target, f"resources/read of the link {links[0]['uri']}")
        items = contents(target)
        media = reply.sc.get("media_type")
        if not items or not all(media_equal(i.get("mimeType"), str(media)) for i in items):
            missed(
                f"the link of {selection or 'default'} reads as {[i.get('mimeType') for i in items]}, "
                f"not media_type {media!r}",
                **target.excerpt(),
            )
        if not selection:
            try:
                envelope = json.loads(items[0].get("text") or "")
                recomputed = jcs.semantic_digest(envelope)
            except (ValueError, AttributeError) as exc:
                missed(f"the uw-json link's text is not a JSON envelope: {exc}", **target.excerpt())
            if recomputed != reply.sc.get("semantic_digest"):
                missed(
                    f"the linked uw-json recomputes to {recomputed}, "
                    f"get_document said {reply.sc.get('semantic_digest')}",
                    **target.excerpt(),
                )


@uwmd_check("uwmd.tool.validate-requires-deal", "UWMD-TOOL-007", "validate{} is rejected")
async def validate_requires_deal(ctx: CaseContext) -> None:
    expect_rejected_input(ctx, await tool(ctx, VALIDATE, {}), "validate without deal_id")


@uwmd_check(
    "uwmd.tool.validate-output", "UWMD-TOOL-008", "validate's output has its six keys at the current digest"
)
async def validate_output(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    digest = await readable(ctx, deal)
    reply = await tool(ctx, VALIDATE, {"deal_id": deal.deal_id})
    sc = expect_success(reply, "validate")
    keys = ("deal_id", "resource_uri", "semantic_digest", "overall_status", "stage_readiness", "issues")
    lacking = [k for k in keys if k not in sc]
    if lacking:
        missed(f"validate's structuredContent lacks {', '.join(lacking)}", **reply.excerpt())
    if not isinstance(sc["issues"], list):
        missed(f"issues is {type(sc['issues']).__name__}, not an array", **reply.excerpt())
    if sc["semantic_digest"] != digest:
        missed(f"validate reports {sc['semantic_digest']}, get_document {digest}", **reply.excerpt())


@uwmd_check(
    "uwmd.tool.validate-current",
    "UWMD-TOOL-009",
    "validate finds CC-02 and follows the current envelope",
    once=True,
)
async def validate_current(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import fx_optional

    fixture = await fx_optional(ctx)
    fresh = fixture is not None and fixture.has("load_deal")
    deal = await load(ctx, "copper-defect") if fresh else await shared_deal(ctx, "copper-defect")
    reply = await tool(ctx, VALIDATE, {"deal_id": deal.deal_id})
    sc = expect_success(reply, "validate of the CC-02 deal")
    issues: list[Any] = sc["issues"] if isinstance(sc.get("issues"), list) else []
    codes = [i.get("code") for i in issues if isinstance(i, dict)]
    if "CC-02" not in codes:
        missed(f"validate of a deal with a DSCR mismatch reports {codes}, without CC-02", **reply.excerpt())
    odd = [c for c in codes if not (isinstance(c, str) and CODE_FAMILY.match(c))]
    if odd:
        ctx.soft_warn(f"issue codes outside the CC-/FV_/META_ families: {odd[:5]}")
    if not fresh:
        ctx.note("no load_deal: validation after an edit was not tried")
        return
    before = await readable(ctx, deal)
    edited = await edit(ctx, deal, etag_of(before), rename("Copper Ridge Townhomes (validated)"))
    receipt = expect_success(edited, "apply_edit on the CC-02 deal")
    after, _ = await current_digest(ctx, deal)
    again = await tool(ctx, VALIDATE, {"deal_id": deal.deal_id})
    reported = expect_success(again, "validate after the edit").get("semantic_digest")
    if after is None or reported != after or reported == before:
        missed(
            f"after the edit validate reports {reported}; the deal is at {after} "
            f"(receipt {receipt.get('semantic_digest')}, before {before}): a cached envelope?",
            **again.excerpt(),
        )


@uwmd_check("uwmd.tool.convert-requires-target", "UWMD-TOOL-010", "convert requires a target, not a source")
async def convert_requires_target(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    expect_rejected_input(
        ctx, await tool(ctx, CONVERT, {"deal_id": deal.deal_id}), "convert without target_representation"
    )
    expect_success(
        await tool(ctx, CONVERT, {"deal_id": deal.deal_id, "target_representation": "uw-xml"}),
        "convert to uw-xml without source_representation",
    )


@uwmd_check("uwmd.tool.convert-output", "UWMD-TOOL-011", "convert's output follows get_document's pattern")
async def convert_output(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    for target in ("uw-xml", "uw-csv-bundle"):
        reply = await tool(ctx, CONVERT, {"deal_id": deal.deal_id, "target_representation": target})
        sc = expect_success(reply, f"convert to {target}")
        problems = document_problems(sc, representation=target) + link_problems(reply)
        if problems:
            missed(f"convert to {target}: {'; '.join(problems)}", **reply.excerpt())


@uwmd_check(
    "uwmd.tool.convert-fidelity", "UWMD-TOOL-012", "conversion keeps the model's semantic digest", once=True
)
async def convert_fidelity(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import contents

    deal = await shared_deal(ctx)
    source = await readable(ctx, deal)
    for target in ("uw-xml", "uw-csv-bundle", "uw-json"):
        reply = await tool(ctx, CONVERT, {"deal_id": deal.deal_id, "target_representation": target})
        sc = expect_success(reply, f"convert to {target}")
        if sc.get("semantic_digest") != source:
            missed(
                f"convert to {target} reports {sc.get('semantic_digest')}, the source is {source}",
                **reply.excerpt(),
            )
        uri = sc.get("resource_uri")
        if not isinstance(uri, str):
            missed(f"convert to {target} names no resource_uri", **reply.excerpt())
        converted = await read(ctx, uri)
        expect_success(converted, f"resources/read of the converted {target}")
        if target == "uw-json":
            items = contents(converted)
            try:
                recomputed = jcs.semantic_digest(json.loads(items[0].get("text") or ""))
            except (ValueError, IndexError, AttributeError) as exc:
                missed(f"the converted uw-json is not a JSON envelope: {exc}", **converted.excerpt())
            if recomputed != source:
                missed(
                    f"the converted uw-json recomputes to {recomputed}, the source is {source}",
                    **converted.excerpt(),
                )
    ctx.note("semantic equivalence only: decoding once cannot be observed from outside")


@uwmd_check("uwmd.tool.convert-unknown-target", "UWMD-TOOL-013", "convert refuses uw-pdf")
async def convert_unknown_target(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    reply = await tool(ctx, CONVERT, {"deal_id": deal.deal_id, "target_representation": "uw-pdf"})
    expect_status(ctx, reply, (406, 400), "convert to uw-pdf", strict=False)


@uwmd_check(
    "uwmd.tool.apply-edit-requires",
    "UWMD-TOOL-014",
    "apply_edit requires deal, if_match, operation, actor, source",
)
async def apply_edit_requires(ctx: CaseContext) -> None:
    deal = await load(ctx)
    mapping = await edit_args(ctx)
    digest = await readable(ctx, deal)
    for concept in ("deal", "if_match", "operation", "actor", "source"):
        args = mapping.build(deal.deal_id, etag_of(digest), rename(f"without {concept}"), omit=(concept,))
        reply = await tool(ctx, EDIT, args)
        expect_refused(reply, f"apply_edit without {concept}")
        await expect_unchanged(ctx, deal, digest, f"apply_edit without {concept}", reply)


def operation_vectors(valid: bool) -> list[dict[str, Any]]:
    return [v for v in load_vectors(SUITE, "edit-operations.json") if v["valid"] is valid]


@uwmd_check(
    "uwmd.tool.edit-operation-schema", "UWMD-TOOL-015", "operations that are not EditOperations are rejected"
)
async def edit_operation_schema(ctx: CaseContext) -> None:
    deal = await load(ctx)
    digest = await readable(ctx, deal)
    invalid = operation_vectors(False)
    for vector in invalid:
        reply = await edit(ctx, deal, etag_of(digest), vector["operation"])
        expect_refused(reply, f"apply_edit with {vector['id']}")
        await expect_unchanged(ctx, deal, digest, f"apply_edit with {vector['id']}", reply)
    ctx.note(f"{len(invalid)} invalid operations refused")


def _version(block: Any) -> int | None:
    meta = block.get("content", {}).get("_meta") if isinstance(block, dict) else None
    value = meta.get("version") if isinstance(meta, dict) else None
    return value if isinstance(value, int) else None


@uwmd_check(
    "uwmd.tool.tier2-editor", "UWMD-TOOL-016", "apply_edit follows the Tier-2 editor's rules", once=True
)
async def tier2_editor(ctx: CaseContext) -> None:
    deal = await load(ctx)
    digest = await readable(ctx, deal)
    # (a) immutable frontmatter fields
    for field in ("deal_id", "uw_version", "created"):
        reply = await edit(
            ctx, deal, etag_of(digest), {"kind": "frontmatter_set", "path": field, "value": "x-changed"}
        )
        expect_refused(reply, f"frontmatter_set on {field}")
        await expect_unchanged(ctx, deal, digest, f"frontmatter_set on {field}", reply)
    # (d) a block source the edit policy does not permit, on a section that could otherwise be replaced
    forged = {
        "kind": "section_replace",
        "section_id": "property",
        "content": {"total_units": 112, "building_class": "B"},
        "meta": {"source": "forged:mcp-conformance"},
    }
    reply = await edit(ctx, deal, etag_of(digest), forged)
    expect_refused(reply, "section_replace with meta.source forged:mcp-conformance")
    await expect_unchanged(ctx, deal, digest, "section_replace with a forbidden source", reply)
    # (b) replacing an agent-written block in place
    prior = _version(deal.section("risk_assessment")) or 1
    content = {"overall_rating": "elevated", "risk_score": 6, "key_risks": []}
    replace = {
        "kind": "section_replace",
        "section_id": "risk_assessment",
        "content": content,
        "meta": {"source": "user"},
    }
    reply = await edit(ctx, deal, etag_of(digest), replace)
    if reply.success:
        envelope, _ = await uw_json(ctx, deal)
        block = (envelope or {}).get("sections", {}).get("risk_assessment")
        history = (envelope or {}).get("superseded", {}).get("risk_assessment")
        if _version(block) != prior + 1 or not history:
            missed(
                "section_replace of the agent-sourced risk_assessment was applied in place (version "
                f"{_version(block)}, superseded history {bool(history)}): it must be refused or superseded",
                **reply.excerpt(),
            )
        ctx.note("section_replace of an agent block was applied as a supersede")
        digest = await readable(ctx, deal)
        prior = _version(block) or prior
    else:
        expect_status(ctx, reply, (409,), "section_replace of an agent-sourced block", strict=False)
        await expect_unchanged(ctx, deal, digest, "section_replace of an agent-sourced block", reply)
    # (c) superseding it
    supersede = {
        "kind": "section_supersede",
        "section_id": "risk_assessment",
        "content": content,
        "meta": {"source": "agent/L6-01", "agent_id": "L6-01", "agent_version": "1.4.0", "actor": "system"},
    }
    reply = await edit(ctx, deal, etag_of(digest), supersede)
    receipt = expect_success(reply, "section_supersede of risk_assessment")
    if receipt.get("superseded_prior_block") is not True:
        missed(
            f"section_supersede reports superseded_prior_block {receipt.get('superseded_prior_block')!r}",
            **reply.excerpt(),
        )
    version = receipt.get("new_version")
    if version is None:
        envelope, _ = await uw_json(ctx, deal)
        version = _version((envelope or {}).get("sections", {}).get("risk_assessment"))
    if version != prior + 1:
        missed(f"section_supersede assigned version {version!r}, expected {prior + 1}", **reply.excerpt())


@uwmd_check(
    "uwmd.tool.edit-receipt",
    "UWMD-TOOL-017",
    "apply_edit's receipt has the new digest, etag and flags",
    once=True,
)
async def edit_receipt(ctx: CaseContext) -> None:
    deal = await load(ctx)
    before = await readable(ctx, deal)
    reply = await edit(ctx, deal, etag_of(before), rename("Harbor Point Apartments (receipt)"))
    sc = expect_success(reply, "apply_edit frontmatter_set deal_name")
    digest = sc.get("semantic_digest")
    if not (isinstance(digest, str) and DIGEST.match(digest)) or digest == before:
        missed(f"the receipt's semantic_digest is {digest!r} (before: {before})", **reply.excerpt())
    if sc.get("etag") != etag_of(digest):
        missed(f"the receipt's etag {sc.get('etag')!r} is not the quoted semantic_digest", **reply.excerpt())
    if not any("supersed" in key for key in sc):
        missed("the receipt does not say whether a prior block was superseded", **reply.excerpt())
    after, read_back = await current_digest(ctx, deal)
    if after != digest:
        missed(f"get_document after the edit reports {after}, the receipt {digest}", **read_back.excerpt())


@uwmd_check(
    "uwmd.tool.edit-link",
    "UWMD-TOOL-018",
    "apply_edit links the updated document, never inlines it",
    once=True,
)
async def edit_link(ctx: CaseContext) -> None:
    deal = await load(ctx)
    before = await readable(ctx, deal)
    reply = await edit(ctx, deal, etag_of(before), rename("Harbor Point Apartments (linked)"))
    sc = expect_success(reply, "apply_edit frontmatter_set deal_name")
    inline = [path for path, _ in walk(sc) if path.rsplit("/", 1)[-1] in ("frontmatter", "sections")]
    if inline:
        missed(f"apply_edit's structuredContent holds the document ({inline[0]})", **reply.excerpt())
    if not any(
        isinstance(link.get("uri"), str) and link["uri"].startswith(deal.uri) for link in reply.links()
    ):
        missed(f"apply_edit's content has no resource_link to {deal.uri}", **reply.excerpt())


#: What a frontmatter_set of deal_name may change besides deal_name itself (TOOL-019).
ALLOWED = re.compile(
    r"^/(generated_at|generator|semantic_digest|frontmatter/deal_name|frontmatter/last_modified|pipeline_log(/.*)?)$"
    r"|/_meta(/|$)"
)


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in dict.fromkeys([*before, *after]):
            if key not in before or key not in after:
                out.append(f"{path}/{key}")
            else:
                out += changed_paths(before[key], after[key], f"{path}/{key}")
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            p
            for i, (a, b) in enumerate(zip(before, after, strict=True))
            for p in changed_paths(a, b, f"{path}/{i}")
        ]
    return [] if before == after and type(before) is type(after) else [path]


@uwmd_check(
    "uwmd.tool.edit-roundtrip", "UWMD-TOOL-019", "a frontmatter edit changes only what it names", once=True
)
async def edit_roundtrip(ctx: CaseContext) -> None:
    deal = await load(ctx)
    before, first = await uw_json(ctx, deal)
    if before is None:
        skip(f"needs a readable uw-json: resources/read answered {first.outcome.describe()} (see uwmd.res.*)")
    digest = await readable(ctx, deal)
    reply = await edit(ctx, deal, etag_of(digest), rename("Harbor Point Apartments \u2014 renamed"))
    expect_success(reply, "apply_edit frontmatter_set deal_name")
    after, second = await uw_json(ctx, deal)
    if after is None:
        missed(f"the uw-json cannot be read after the edit ({second.outcome.describe()})", **second.excerpt())
    changed = changed_paths(before, after)
    if "/frontmatter/deal_name" not in changed:
        missed("deal_name did not change", **second.excerpt())
    stray = [p for p in changed if not ALLOWED.search(p)]
    if stray:
        missed(f"the edit also changed {', '.join(stray[:5])}", **second.excerpt())
    ctx.note(f"changed: {', '.join(changed)}")


@uwmd_check("uwmd.tool.reads-stable", "UWMD-TOOL-023", "read tools leave the digest unchanged", once=True)
async def reads_stable(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    before = await readable(ctx, deal)
    calls: tuple[tuple[str, dict[str, Any]], ...] = (
        (GET, {"deal_id": deal.deal_id}),
        (VALIDATE, {"deal_id": deal.deal_id}),
        (CONVERT, {"deal_id": deal.deal_id, "target_representation": "uw-xml"}),
        (LIST, {}),
    )
    for name, args in calls:
        for _ in range(3):
            await tool(ctx, name, args)
    after, reply = await current_digest(ctx, deal)
    if after != before:
        missed(f"after 12 read calls the digest moved from {before} to {after}", **reply.excerpt())

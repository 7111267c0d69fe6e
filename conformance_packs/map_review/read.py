"""MAP-READ rows: what read_review returns for an open review, and what it must not return."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from conformance.pack_api import CaseContext, load_vectors, missed, skip
from conformance_packs.map_review import jcs
from conformance_packs.map_review.common import (
    DECISIONS,
    READ,
    SUITE,
    UNKNOWN_REFERENCE,
    Reply,
    call_tool,
    expect_rejected_input,
    fx,
    fx_optional,
    map_check,
    open_review,
    read,
    readable_review,
    schema_errors,
    text_mirror,
)

#: The formats C-6 asks the harness to assert; without their checkers the validator would pass anything.
ASSERTED_FORMATS = ("uri", "date-time")


def pinned_contract() -> dict[str, Any]:
    for vector in load_vectors(SUITE, "contract-digest.json"):
        if vector["kind"] == "contract-pin":
            pin: dict[str, Any] = vector["contract"]
            return pin
    raise LookupError("vectors/map-review/contract-digest.json has no contract-pin vector")


def unchecked_formats() -> list[str]:
    return [f for f in ASSERTED_FORMATS if f not in Draft202012Validator.FORMAT_CHECKER.checkers]


@map_check(
    "map-review.read.open-review", "MAP-READ-001", "an open review reads and validates against the seed"
)
async def read_open_review(ctx: CaseContext) -> None:
    review = await open_review(ctx)
    reply = review.read
    assert reply is not None
    if not reply.outcome.success:
        missed(f"read_review of an open review answered {reply.outcome.describe()}", **reply.excerpt())
    sc = reply.result.get("structuredContent")
    if not isinstance(sc, dict):
        missed(
            "read_review returned no structuredContent object although it declares an outputSchema",
            **reply.excerpt(),
        )
    problems = schema_errors("read_review.output", sc)
    if problems:
        missed("structuredContent violates the seed outputSchema: " + "; ".join(problems), **reply.excerpt())
    missing = unchecked_formats()
    if missing:
        ctx.soft_warn(
            f"format assertion unavailable for {', '.join(missing)} (C-6): install jsonschema[format]"
        )
    ctx.note(f"read {review.reference} at revision {sc.get('revision')!r}")


@map_check("map-review.read.text-mirror", "MAP-READ-002", "the text block deep-equals structuredContent")
async def read_text_mirror(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    assert review.read is not None
    result = review.read.result
    structured = result.get("structuredContent")
    any_json, equal, text = text_mirror(result, structured)
    if any_json and not equal:
        missed("the JSON text block differs from structuredContent", **review.read.excerpt())
    if not any_json:
        ctx.soft_warn("no text block carries the structuredContent as JSON (an MCP SHOULD)")
        return
    compact = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    ctx.note(
        "the text block is the compact JSON of structuredContent"
        if text == compact
        else "the text block deep-equals structuredContent but is not its compact JSON (recorded, not judged)"
    )


@map_check("map-review.read.state-awaiting", "MAP-READ-003", "an open review reads as awaiting_review")
async def read_state(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    state = review.sc.get("state")
    if state != "awaiting_review":
        assert review.read is not None
        missed(f"an open review reads with state {state!r}, not 'awaiting_review'", **review.read.excerpt())


@map_check(
    "map-review.read.reference-echo", "MAP-READ-004", "the read echoes the requested reference exactly"
)
async def read_reference_echo(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    echoed = review.sc.get("reference")
    if echoed != review.reference:
        assert review.read is not None
        missed(f"asked for {review.reference!r}, the read says reference {echoed!r}", **review.read.excerpt())


@map_check("map-review.read.contract-pinned", "MAP-READ-005", "the contract is the pinned catalogue entry")
async def read_contract_pinned(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    pin = pinned_contract()
    served = review.sc.get("contract")
    if served != pin:
        assert review.read is not None
        missed(
            f"contract {json.dumps(served)[:300]} is not the pinned {json.dumps(pin)}",
            **review.read.excerpt(),
        )


def contract_file(ctx: CaseContext) -> tuple[dict[str, Any] | None, str]:
    """The target's `[map] contract` file when its JCS digest equals the pinned one, and what was found."""
    settings = ctx.target.settings.get("map")
    path = settings.get("contract") if isinstance(settings, dict) else None
    if not isinstance(path, str):
        return None, "no [map] contract file is configured"
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"the [map] contract file {path!r} cannot be read: {exc}"
    digest = jcs.digest(document)
    pin = pinned_contract()
    if digest != pin["contractDigest"]:
        return (
            None,
            f"the [map] contract file hashes (JCS) to {digest}, not the pinned {pin['contractDigest']}",
        )
    if not isinstance(document.get("detailsSchema"), dict):
        return None, "the [map] contract file has no detailsSchema object"
    return document, f"detailsSchema of the [map] contract file ({digest})"


def details_problems(schema: dict[str, Any] | None, publication: Any) -> list[str]:
    if schema is None:
        return schema_errors("publication.details", publication)
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    found = sorted(validator.iter_errors(publication), key=lambda e: -len(e.absolute_path))
    return [f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"[:300] for e in found[:5]]


@map_check(
    "map-review.read.publication-details", "MAP-READ-006", "publication satisfies the contract's details"
)
async def read_publication_details(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    contract, source = contract_file(ctx)
    schema = contract.get("detailsSchema") if contract else None
    variants: list[tuple[str, Any, Reply | None]] = [
        ("the open review", review.sc.get("publication"), review.read)
    ]
    fixture = await fx_optional(ctx)
    if fixture is not None and fixture.has("mutate_terms") and fixture.has("create_review"):
        await fixture.call("mutate_terms", review_id=review.review_id, term="visibility")
        reply = await read(ctx, review.reference)
        if not reply.outcome.success or not isinstance(reply.structured, dict):
            missed(
                f"the review with its visibility changed does not read: {reply.outcome.describe()}",
                **reply.excerpt(),
            )
        variants.append(("the visibility-changed variant", reply.structured.get("publication"), reply))
    else:
        ctx.note("no restricted-destination variant: needs mutate_terms")
    for label, publication, evidence in variants:
        problems = details_problems(schema, publication)
        if problems:
            missed(
                f"publication of {label} violates the details schema: {'; '.join(problems)}",
                **(evidence.excerpt() if evidence else {}),
            )
    visibilities = sorted(
        {
            str(d.get("visibility"))
            for _, p, _ in variants
            if isinstance(p, dict)
            for d in p.get("destinations", [])
            if isinstance(d, dict)
        }
    )
    ctx.note(f"validated {len(variants)} publication(s), visibilities {visibilities}")
    if contract is None:
        ctx.soft_warn(
            "contract-revision-unverified (gap rule G-M6): publication is valid against the harness's "
            "details schema for publication-approval 0.1, but the contract bytes behind the pinned digest "
            f"are not published; {source}"
        )


@map_check(
    "map-review.read.allowed-actions", "MAP-READ-007", "allowed_actions is a subset of the decision enum"
)
async def read_allowed_actions(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    actions = review.sc.get("allowed_actions")
    assert review.read is not None
    if not isinstance(actions, list):
        missed(f"allowed_actions is {type(actions).__name__}, not an array", **review.read.excerpt())
    outside = [a for a in actions if a not in DECISIONS]
    if outside:
        missed(
            f"allowed_actions holds values outside the decision enum: {outside!r}", **review.read.excerpt()
        )
    if len({json.dumps(a) for a in actions}) != len(actions):
        missed(f"allowed_actions repeats a value: {actions!r}", **review.read.excerpt())


def leaked(reply: Reply, reference: str, canaries: list[str]) -> list[str]:
    """Which of the other review's values appear in the reply, raw or JSON-escaped (the echoed reference
    itself is ignored: it is what the client sent)."""
    frame = reply.call.reply.response
    text = (frame.text if frame is not None else "").replace(reference, "")
    return [c for c in canaries if c and (c in text or json.dumps(c, ensure_ascii=False)[1:-1] in text)]


async def _read_someone_elses(ctx: CaseContext, **params: Any) -> None:
    fixture = await fx(
        ctx, "create_review", *(["second_account"] if params.get("account") == "second" else [])
    )
    canary_title = f"Canary {'-'.join(str(v) for v in params.values())} title {ctx.revision}"
    canary_text = "# Canary\n\nThis artifact must never reach another account or tenant.\n"
    created = await fixture.call("create_review", title=canary_title, content_text=canary_text, **params)
    reply = await read(ctx, created["reference"])
    if reply.outcome.success:
        missed(
            f"read_review returned a review not offered to the acting account ({params})", **reply.excerpt()
        )
    found = leaked(reply, created["reference"], [created["review_id"], canary_title, canary_text])
    if found:
        missed(f"the refusal leaks the other review's data: {found!r}", **reply.excerpt())
    ctx.note(f"refused as {reply.outcome.describe()}")


@map_check(
    "map-review.read.other-account", "MAP-READ-008", "reads are limited to the acting account's reviews"
)
async def read_other_account(ctx: CaseContext) -> None:
    await _read_someone_elses(ctx, account="second")


@map_check("map-review.read.other-tenant", "MAP-READ-009", "reads are bound to the acting account's tenant")
async def read_other_tenant(ctx: CaseContext) -> None:
    await _read_someone_elses(ctx, tenant="other")


@map_check(
    "map-review.read.unknown-reference", "MAP-READ-010", "an unknown reference is not answered with a review"
)
async def read_unknown(ctx: CaseContext) -> None:
    reply = await read(ctx, UNKNOWN_REFERENCE)
    if reply.outcome.success:
        missed("read_review of a reference that does not exist succeeded", **reply.excerpt())
    ctx.note(f"not found: {reply.outcome.describe()}")
    fixture = await fx_optional(ctx)
    if fixture is not None and fixture.has("create_review") and fixture.has("second_account"):
        created = await fixture.call("create_review", account="second")
        other = await read(ctx, created["reference"])
        same = (other.outcome.kind, other.outcome.status) == (reply.outcome.kind, reply.outcome.status)
        ctx.note(
            f"not offered: {other.outcome.describe()} ("
            + ("indistinguishable from not found" if same else "distinguishable from not found")
            + "; recorded, not judged)"
        )


@map_check(
    "map-review.read.rejects-bad-input", "MAP-READ-011", "read_review rejects arguments outside its schema"
)
async def read_rejects_bad_input(ctx: CaseContext) -> None:
    expect_rejected_input(ctx, await call_tool(ctx, READ, {}), "read_review{}")
    not_uri = await call_tool(ctx, READ, {"reference": "not a uri"})
    if not_uri.outcome.success:
        ctx.soft_warn("reference 'not a uri' was accepted (format assertion on input is optional, G-M7)")
    # An extra member proves something only next to a reference that would otherwise be answered:
    # with an unknown one, a refusal could be "not found" rather than the closed schema.
    fixture = await fx_optional(ctx)
    settings = ctx.target.settings.get("map")
    reference = settings.get("reference") if isinstance(settings, dict) else None
    if fixture is not None and fixture.has("create_review"):
        reference = (await fixture.call("create_review"))["reference"]
    if not isinstance(reference, str):
        skip("needs: create_review (or a [map] reference) for the extra-member case; {} was rejected")
    extra = await call_tool(ctx, READ, {"reference": reference, "extra": 1})
    expect_rejected_input(ctx, extra, "an extra member next to an open review's reference")


@map_check(
    "map-review.read.revision-binds-terms",
    "MAP-READ-012",
    "every term change makes a new revision",
    once=True,
)
async def read_revision_binds_terms(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "mutate_terms")
    review = await readable_review(ctx)
    seen = [review.revision]
    previous = review.sc
    for term in ("content_text", "destinations", "visibility", "schedule", "replaces_revision"):
        await fixture.call("mutate_terms", review_id=review.review_id, term=term)
        reply = await read(ctx, review.reference)
        sc = reply.structured
        if not reply.outcome.success or not isinstance(sc, dict):
            missed(
                f"after mutate_terms({term}) the review does not read: {reply.outcome.describe()}",
                **reply.excerpt(),
            )
        revision = sc.get("revision")
        if revision in seen:
            missed(
                f"mutate_terms({term}) changed the terms but the revision stayed {revision!r}",
                **reply.excerpt(),
            )
        if sc.get("publication") == previous.get("publication") and sc.get(
            "content_artifact"
        ) == previous.get("content_artifact"):
            ctx.note(f"mutate_terms({term}) changed nothing the read shows")
        seen.append(str(revision))
        previous = sc
    ctx.note("revisions: " + " -> ".join(str(r) for r in seen))


@map_check("map-review.read.stable", "MAP-READ-013", "two reads without a change are identical")
async def read_stable(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    again = await read(ctx, review.reference)
    if not again.outcome.success:
        missed(f"a second read answered {again.outcome.describe()}", **again.excerpt())
    if again.structured != review.sc:
        missed("two reads with no change between them differ", **again.excerpt())

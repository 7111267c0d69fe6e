"""MAP-DIG rows: the content digest covers the artifact's exact bytes; the approved snapshot is frozen."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

from conformance.pack_api import CaseContext, load_vectors, missed
from conformance_packs.map_review import jcs
from conformance_packs.map_review.common import (
    SUITE,
    Review,
    decide,
    expect_success,
    fx,
    map_check,
    new_review,
    readable_review,
)
from conformance_packs.map_review.read import contract_file, pinned_contract

#: Gap rule G-X1: the MAP spelling, matched against the whole string (no `$`-before-newline leniency).
MAP_DIGEST: Final = re.compile(r"sha-256:[0-9a-f]{64}")


def content_digest(text: str) -> str:
    """`sha-256:` + SHA-256 of the exact UTF-8 bytes: no stripping, no line-ending or NFC normalisation."""
    return "sha-256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_vectors(requirement: str | None = None) -> list[dict[str, Any]]:
    return [
        v
        for v in load_vectors(SUITE, "digests.json")
        if v["kind"] == "digest" and (requirement is None or v["requirement"] == requirement)
    ]


def digest_problem(doc: Any, where: str) -> str | None:
    """Why `doc` (a review object) breaks MAP-DIG-001, or None."""
    if not isinstance(doc, dict):
        return f"{where} is not an object"
    artifact, publication = doc.get("content_artifact"), doc.get("publication")
    text = artifact.get("text") if isinstance(artifact, dict) else None
    content = publication.get("content") if isinstance(publication, dict) else None
    claimed = content.get("digest") if isinstance(content, dict) else None
    if not isinstance(text, str) or not isinstance(claimed, str):
        return f"{where} has no content_artifact.text or publication.content.digest"
    actual = content_digest(text)
    if claimed != actual:
        controls = {v["digest"]: v["id"] for v in digest_vectors() if v["role"] == "negative-control"}
        hint = f" (that is the negative control {controls[claimed]})" if claimed in controls else ""
        stripped = content_digest(text[:-1]) if text.endswith("\n") else None
        if claimed == stripped:
            hint = " (that is the digest of the text without its final newline)"
        return f"{where}: digest {claimed} but the {len(text.encode())} UTF-8 bytes hash to {actual}{hint}"
    return None


def text_block_doc(review: Review) -> Any:
    assert review.read is not None
    for block in review.read.result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                return json.loads(block["text"])
            except ValueError:
                continue
    return None


@map_check("map-review.digest.content", "MAP-DIG-001", "the content digest covers the artifact's exact bytes")
async def digest_content(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    assert review.read is not None
    problem = digest_problem(review.sc, "structuredContent")
    if problem:
        missed(problem, **review.read.excerpt())
    parsed = text_block_doc(review)
    if parsed is None:
        ctx.note("no JSON text block: the digest was checked on structuredContent only")
        return
    problem = digest_problem(parsed, "the JSON text block")
    if problem:
        missed(problem, **review.read.excerpt())


@map_check(
    "map-review.digest.seed-artifact",
    "MAP-DIG-002",
    "the seed's 80-byte artifact hashes to the seed's digest",
)
async def digest_seed_artifact(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    (vector,) = [v for v in digest_vectors("MAP-DIG-002") if v["role"] == "artifact"]
    review = await new_review(ctx, fixture, content_text=vector["text"])
    assert review.read is not None
    artifact = review.sc.get("content_artifact")
    text = artifact.get("text") if isinstance(artifact, dict) else None
    if text != vector["text"]:
        missed(
            f"the stored {vector['utf8_length']}-byte artifact reads back as {text!r}",
            **review.read.excerpt(),
        )
    problem = digest_problem(review.sc, "structuredContent")
    if problem:
        missed(problem, **review.read.excerpt())
    ctx.note(f"{vector['utf8_length']} bytes -> {vector['digest']}")


@map_check(
    "map-review.digest.exact-bytes", "MAP-DIG-003", "digests hold for non-ASCII, astral, CRLF and other bytes"
)
async def digest_exact_bytes(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    live = [v for v in digest_vectors("MAP-DIG-003") if v.get("live")]
    for vector in live:
        review = await new_review(ctx, fixture, content_text=vector["text"])
        assert review.read is not None
        artifact = review.sc.get("content_artifact")
        text = artifact.get("text") if isinstance(artifact, dict) else None
        if text != vector["text"]:
            missed(f"{vector['id']}: stored {vector['text']!r}, read back {text!r}", **review.read.excerpt())
        problem = digest_problem(review.sc, vector["id"])
        if problem:
            missed(problem, **review.read.excerpt())
        parsed = text_block_doc(review)
        if parsed is not None and (problem := digest_problem(parsed, f"{vector['id']} (text block)")):
            missed(problem, **review.read.excerpt())
    ctx.note(f"{len(live)} artifacts stored and read back byte for byte: " + ", ".join(v["id"] for v in live))


@map_check(
    "map-review.digest.snapshot-frozen",
    "MAP-DIG-004",
    "accepted publication keeps the approved snapshot",
    once=True,
)
async def digest_snapshot_frozen(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "mutate_terms", "publication_jobs")
    review = await new_review(ctx, fixture)
    approved = review.terms()
    reply = await decide(ctx, review.review_id, "approve", review.revision)
    expect_success(reply, "approve at the read revision")
    for term in ("content_text", "destinations", "schedule"):
        await fixture.call("mutate_terms", review_id=review.review_id, term=term)
    jobs = (await fixture.call("publication_jobs", review_id=review.review_id))["jobs"]
    if len(jobs) != 1:
        missed(f"one approval, but publication_jobs shows {len(jobs)} job(s)", jobs=json.dumps(jobs)[:1500])
    job = jobs[0]
    for key in ("content_digest", "destinations", "schedule"):
        if job.get(key) != approved[key]:
            missed(
                f"after the source changed, the queued job's {key} is {json.dumps(job.get(key))[:300]}, "
                f"not the approved {json.dumps(approved[key])[:300]}",
                jobs=json.dumps(jobs)[:1500],
            )
    ctx.note("the job kept the approved content digest, destinations and schedule after 3 source changes")


@map_check("map-review.digest.contract-format", "MAP-DIG-005", "contractDigest has the MAP spelling")
async def digest_contract_format(ctx: CaseContext) -> None:
    review = await readable_review(ctx)
    assert review.read is not None
    contract = review.sc.get("contract")
    served = contract.get("contractDigest") if isinstance(contract, dict) else None
    if not isinstance(served, str) or not MAP_DIGEST.fullmatch(served):
        missed(
            f"contractDigest {served!r} is not sha-256: and 64 lower-case hex digits (G-X1)",
            **review.read.excerpt(),
        )
    document, source = contract_file(ctx)
    if document is not None:
        ctx.note(f"the [map] contract file's JCS digest {jcs.digest(document)} equals the pinned one")
    else:
        ctx.note(f"served {served}; pinned {pinned_contract()['contractDigest']}; {source}")

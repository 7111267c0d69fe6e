"""MAP-DEC rows: decide_review outcomes, refusals (each re-read for "commits nothing", C-4) and effects."""

from __future__ import annotations

import json
from typing import Any, Final

from conformance.pack_api import CaseContext, Fixtures, load_vectors, missed, skip
from conformance_packs.map_review.common import (
    CLOSED_STATES,
    DECIDE,
    SUITE,
    Reply,
    Review,
    call_tool,
    decide,
    decide_args,
    expect_nothing_committed,
    expect_refused,
    expect_rejected_input,
    expect_status,
    expect_success,
    expires_ms,
    format_instant,
    fx,
    map_check,
    new_review,
    note_once,
    read,
    reread,
    schema_errors,
    second_session,
    snapshot,
    text_mirror,
)

NEVER_ISSUED = "never-issued-xyz"


def comment_vector(vector_id: str) -> dict[str, Any]:
    for vector in load_vectors(SUITE, "comment-rule.json"):
        if vector["id"] == vector_id:
            return vector
    raise LookupError(vector_id)


def with_review(arguments: dict[str, Any], review: Review) -> dict[str, Any]:
    """A vector's decide arguments aimed at a live review (its review_id and current revision)."""
    out = dict(arguments)
    out["review_id"] = review.review_id
    if "expected_revision" in out:
        out["expected_revision"] = review.revision
    return out


async def jobs_of(fixture: Fixtures, review: Review) -> list[Any] | None:
    if not fixture.has("publication_jobs"):
        return None
    jobs: list[Any] = (await fixture.call("publication_jobs", review_id=review.review_id))["jobs"]
    return jobs


async def expect_jobs(ctx: CaseContext, fixture: Fixtures, review: Review, count: int, why: str) -> None:
    jobs = await jobs_of(fixture, review)
    if jobs is None:
        note_once(ctx, "publication_jobs not offered: queued jobs were not observed")
        return
    if len(jobs) != count:
        missed(
            f"{why}: publication_jobs shows {len(jobs)} job(s), expected {count}",
            jobs=json.dumps(jobs)[:1500],
        )


def expect_mirror(ctx: CaseContext, reply: Reply, what: str) -> None:
    structured = reply.result.get("structuredContent")
    any_json, equal, _ = text_mirror(reply.result, structured)
    if any_json and not equal:
        missed(f"{what}: the JSON text block differs from structuredContent", **reply.excerpt())
    if not any_json:
        ctx.soft_warn(f"{what}: no text block carries the structuredContent as JSON (an MCP SHOULD)")


async def refused_commits_nothing(
    ctx: CaseContext,
    fixture: Fixtures,
    review: Review,
    arguments: dict[str, Any],
    what: str,
    *,
    statuses: tuple[int, ...] | None = None,
    input_rejection: bool = False,
    session: Any = None,
) -> Reply:
    """Snapshot, send a decision that must be refused, judge its class, re-read: nothing committed."""
    before = await snapshot(ctx, fixture, review)
    reply = await call_tool(ctx, DECIDE, arguments, session)
    if input_rejection:
        expect_rejected_input(ctx, reply, what)
    elif statuses is not None:
        expect_status(ctx, reply, statuses, what)
    else:
        expect_refused(ctx, reply, what)
    await expect_nothing_committed(ctx, fixture, review, before, what, reply)
    return reply


async def closed_afterwards(ctx: CaseContext, fixture: Fixtures, review: Review, what: str) -> None:
    """A decided review takes no other decision: 409, and nothing committed."""
    await refused_commits_nothing(
        ctx,
        fixture,
        review,
        decide_args(review.review_id, "approve", review.revision),
        f"approve after {what}",
        statuses=(409,),
    )


# --------------------------------------------------------------------------- successful decisions


@map_check("map-review.decide.approve", "MAP-DEC-001", "approve at the read revision queues the review")
async def decide_approve(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    reply = await decide(ctx, review.review_id, "approve", review.revision)
    expect_success(reply, "approve at the read revision")
    sc = reply.result.get("structuredContent")
    if not isinstance(sc, dict):
        missed("the approve result has no structuredContent object", **reply.excerpt())
    if sc.get("review_id") != review.review_id or sc.get("state") != "queued":
        missed(
            f"the approve result is {json.dumps(sc)[:300]}, expected review_id "
            f"{review.review_id!r} and state 'queued'",
            **reply.excerpt(),
        )
    problems = schema_errors("decide_review.result", sc)
    if problems:
        missed("the approve result: " + "; ".join(problems), **reply.excerpt())
    expect_mirror(ctx, reply, "the approve result")
    await expect_jobs(ctx, fixture, review, 1, "after one approval")


@map_check("map-review.decide.already-decided", "MAP-DEC-002", "a decided review takes no second decision")
async def decide_already_decided(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    expect_success(await decide(ctx, review.review_id, "approve", review.revision), "the first approval")
    for decision in ("approve", "decline"):
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            decide_args(review.review_id, decision, review.revision),
            f"{decision} after an approval",
            statuses=(409,),
        )
    await expect_jobs(ctx, fixture, review, 1, "after one approval and two refused decisions")


async def _closing_decision(ctx: CaseContext, decision: str, comment: str | None) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    reply = await decide(ctx, review.review_id, decision, review.revision, comment)
    expect_success(reply, f"{decision} at the read revision")
    sc = reply.result.get("structuredContent")
    state = sc.get("state") if isinstance(sc, dict) else None
    if state is not None and state not in CLOSED_STATES:
        missed(
            f"{decision} reports state {state!r}; gap rule G-M2 accepts {sorted(CLOSED_STATES)}",
            **reply.excerpt(),
        )
    ctx.note(f"{decision} reports state {state!r}" if state is not None else f"{decision} reports no state")
    expect_mirror(ctx, reply, f"the {decision} result")
    await closed_afterwards(ctx, fixture, review, decision)
    await expect_jobs(ctx, fixture, review, 0, f"after {decision}")


@map_check("map-review.decide.decline", "MAP-DEC-003", "decline closes the review without publication")
async def decide_decline(ctx: CaseContext) -> None:
    await _closing_decision(ctx, "decline", None)


@map_check(
    "map-review.decide.request-changes",
    "MAP-DEC-004",
    "request-changes closes the review without publication",
)
async def decide_request_changes(ctx: CaseContext) -> None:
    await _closing_decision(ctx, "request-changes", "Fix title")


#: MAP-DEC-020: each decision the suite makes, with the comment request-changes needs.
DECISIONS_READ_BACK: Final = (("approve", None), ("decline", None), ("request-changes", "Fix title"))


async def expect_read_decided(ctx: CaseContext, review: Review, decision: str) -> str:
    """Gap rule G-M3: after a decision a read refuses the review (409/410 class) or shows it decided.

    The seed's outputSchema holds `state` to the const `awaiting_review`, so no successful read can
    describe a decided review: a SUCCESS that still says `awaiting_review` shows the decision was not
    taken, and one that says anything else breaks the schema (G-M3: that is a FAIL too). A refusal of
    another class is WARN, since G-M3 names 409 and 410.
    """
    reply = await read(ctx, review.reference)
    outcome = reply.outcome
    if outcome.success:
        sc = reply.structured
        state = sc.get("state") if isinstance(sc, dict) else None
        if state == "awaiting_review":
            missed(
                f"after a successful {decision}, read_review still answers state 'awaiting_review': the "
                "decided review reads as open (gap rule G-M3)",
                **reply.excerpt(),
            )
        missed(
            f"after a successful {decision}, read_review answers SUCCESS with state {state!r}: the seed's "
            "outputSchema allows only 'awaiting_review', so a decided review must be refused (G-M3)",
            **reply.excerpt(),
        )
    if outcome.kind == "STATUS" and outcome.status in (409, 410):
        if outcome.weak:
            ctx.soft_warn(
                f"weak-error-encoding: the read after {decision} says {outcome.status} only in its text"
            )
    else:
        ctx.soft_warn(
            f"the read after {decision} was refused as {outcome.describe()}, not a 409 or 410 class (G-M3)"
        )
    return outcome.describe()


@map_check(
    "map-review.decide.read-after-decision",
    "MAP-DEC-020",
    "a decided review no longer reads as open",
)
async def decide_read_after_decision(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    seen = []
    for decision, comment in DECISIONS_READ_BACK:
        review = await new_review(ctx, fixture)
        reply = await decide(ctx, review.review_id, decision, review.revision, comment)
        expect_success(reply, f"{decision} at the read revision")
        seen.append(f"after {decision}: {await expect_read_decided(ctx, review, decision)}")
    ctx.note("; ".join(seen))


# --------------------------------------------------------------------------- input rejections (C-3)


async def _rejected_vectors(ctx: CaseContext, vector_ids: tuple[str, ...]) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    for vector_id in vector_ids:
        vector = comment_vector(vector_id)
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            with_review(vector["instance"], review),
            vector["description"],
            input_rejection=True,
        )


@map_check(
    "map-review.decide.request-changes-needs-comment",
    "MAP-DEC-005",
    "request-changes without comment is rejected",
)
async def decide_request_changes_needs_comment(ctx: CaseContext) -> None:
    await _rejected_vectors(ctx, ("map.comment.request-changes-without",))


@map_check(
    "map-review.decide.comment-forbidden", "MAP-DEC-006", "approve and decline with a comment are rejected"
)
async def decide_comment_forbidden(ctx: CaseContext) -> None:
    await _rejected_vectors(ctx, ("map.comment.approve-with", "map.comment.decline-with"))


@map_check("map-review.decide.decision-enum", "MAP-DEC-007", "a decision outside the enum is rejected")
async def decide_decision_enum(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    for decision in ("publish", "revise", "APPROVE"):
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            decide_args(review.review_id, decision, review.revision),
            f"decision {decision!r}",
            input_rejection=True,
        )


@map_check(
    "map-review.decide.revision-required", "MAP-DEC-008", "expected_revision is required and non-empty"
)
async def decide_revision_required(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    for revision, what in ((None, "a decision without expected_revision"), ("", "expected_revision ''")):
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            decide_args(review.review_id, "approve", revision),
            what,
            input_rejection=True,
        )


# --------------------------------------------------------------------------- refusals (409, 410, 403)


@map_check("map-review.decide.stale-revision", "MAP-DEC-009", "a stale revision is 409 and commits nothing")
async def decide_stale_revision(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "mutate_terms")
    review = await new_review(ctx, fixture)
    rev1 = review.revision
    await fixture.call("mutate_terms", review_id=review.review_id, term="content_text")
    current = await _reread(ctx, review)
    if current.revision == rev1:
        skip("needs: mutate_terms that changes the revision (see map-review.read.revision-binds-terms)")
    await refused_commits_nothing(
        ctx,
        fixture,
        current,
        decide_args(review.review_id, "approve", rev1),
        "approve at the stale revision",
        statuses=(409,),
    )
    expect_success(
        await decide(ctx, review.review_id, "approve", current.revision), "approve at the new revision"
    )
    ctx.note(f"{rev1} refused, {current.revision} accepted")


async def _reread(ctx: CaseContext, review: Review) -> Review:
    return await reread(ctx, review.review_id, review.reference)


@map_check("map-review.decide.never-issued-revision", "MAP-DEC-010", "a never-issued revision is 409")
async def decide_never_issued(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture)
    await refused_commits_nothing(
        ctx,
        fixture,
        review,
        decide_args(review.review_id, "approve", NEVER_ISSUED),
        f"expected_revision {NEVER_ISSUED!r}",
        statuses=(409,),
    )


@map_check(
    "map-review.decide.expired",
    "MAP-DEC-011",
    "an expired review is 410 and commits nothing",
    once=True,
    exclusive=True,
)
async def decide_expired(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    if not (fixture.has("expire") or fixture.has("set_clock")):
        skip("needs: expire or set_clock")
    if fixture.has("expire"):
        review = await new_review(ctx, fixture)
        await fixture.call("expire", review_id=review.review_id)
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            decide_args(review.review_id, "approve", review.revision),
            "approve after expire",
            statuses=(410,),
        )
    if not fixture.has("set_clock"):
        ctx.note("no boundary sub-test: needs set_clock")
        return
    late, early = await new_review(ctx, fixture), await new_review(ctx, fixture)
    expiry = expires_ms(late)
    try:
        await fixture.call("set_clock", now=format_instant(expiry + 2000))
        await refused_commits_nothing(
            ctx,
            fixture,
            late,
            decide_args(late.review_id, "approve", late.revision),
            "approve 2 s after expires_at",
            statuses=(410,),
        )
        await fixture.call("set_clock", now=format_instant(expires_ms(early) - 60_000))
        expect_success(
            await decide(ctx, early.review_id, "approve", early.revision), "approve 60 s before expires_at"
        )
    finally:
        await fixture.call("set_clock", now=None)
    ctx.note("410 after expiry (expire hook and clock + 2 s); success 60 s before")


@map_check("map-review.decide.withdrawn", "MAP-DEC-012", "a withdrawn review is 409")
async def decide_withdrawn(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "withdraw")
    review = await new_review(ctx, fixture)
    await fixture.call("withdraw", review_id=review.review_id)
    await refused_commits_nothing(
        ctx,
        fixture,
        review,
        decide_args(review.review_id, "approve", review.revision),
        "approve after withdraw",
        statuses=(409,),
    )


@map_check(
    "map-review.decide.allowed-actions", "MAP-DEC-013", "a decision outside allowed_actions is refused"
)
async def decide_allowed_actions(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    review = await new_review(ctx, fixture, allowed_actions=["decline"])
    offered = review.sc.get("allowed_actions")
    if not isinstance(offered, list) or "approve" in offered or "decline" not in offered:
        skip(f"needs: create_review with allowed_actions (offered: {review.sc.get('allowed_actions')!r})")
    await refused_commits_nothing(
        ctx,
        fixture,
        review,
        decide_args(review.review_id, "approve", review.revision),
        "approve on a decline-only review",
    )
    expect_success(
        await decide(ctx, review.review_id, "decline", review.revision), "decline on a decline-only review"
    )


@map_check(
    "map-review.decide.permission-revoked", "MAP-DEC-014", "a revoked permission is enforced", once=True
)
async def decide_permission_revoked(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "revoke_permission")
    review = await new_review(ctx, fixture)
    await fixture.call("revoke_permission", review_id=review.review_id, account="primary")
    await refused_commits_nothing(
        ctx,
        fixture,
        review,
        decide_args(review.review_id, "approve", review.revision),
        "approve after the permission was revoked",
    )


@map_check("map-review.decide.recipient-only", "MAP-DEC-015", "only the recipient can decide", once=True)
async def decide_recipient_only(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "second_account")
    review = await new_review(ctx, fixture)
    session, account = await second_session(ctx, fixture)
    try:
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            decide_args(review.review_id, "approve", review.revision),
            f"approve by {account}, who is not the recipient",
            session=session,
        )
    finally:
        await session.close()


@map_check("map-review.decide.review-addressing", "MAP-DEC-016", "review_id addresses exactly one review")
async def decide_review_addressing(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    ghost = await decide(ctx, "does-not-exist", "approve", NEVER_ISSUED)
    if ghost.outcome.success:
        missed("a decision on review_id 'does-not-exist' succeeded", **ghost.excerpt())
    x, y = await new_review(ctx, fixture), await new_review(ctx, fixture)
    before_y = await snapshot(ctx, fixture, y)
    reply = await refused_commits_nothing(
        ctx,
        fixture,
        x,
        decide_args(x.review_id, "approve", y.revision),
        f"approve review {x.review_id} with the revision of {y.review_id}",
        statuses=(409, 404),
    )
    await expect_nothing_committed(
        ctx, fixture, y, before_y, "the paired decision (seen from the other review)", reply
    )


@map_check("map-review.decide.comment-length", "MAP-DEC-017", "comment length counts code points, 1 to 4096")
async def decide_comment_length(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review")
    longest = comment_vector("map.comment.max-length-astral")["instance"]
    review = await new_review(ctx, fixture)
    reply = await call_tool(ctx, DECIDE, with_review(longest, review))
    expect_success(reply, "request-changes with a 4,096-code-point comment (astral characters included)")
    review = await new_review(ctx, fixture)
    for vector_id in ("map.comment.too-long", "map.comment.request-changes-empty"):
        vector = comment_vector(vector_id)
        await refused_commits_nothing(
            ctx,
            fixture,
            review,
            with_review(vector["instance"], review),
            vector["description"],
            input_rejection=True,
        )


# --------------------------------------------------------------------------- cross-cutting and effects


@map_check(
    "map-review.decide.refusals-commit-nothing", "MAP-DEC-018", "every 409 or 410 commits nothing", once=True
)
async def decide_refusals_commit_nothing(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "publication_jobs")
    ran: list[str] = []
    not_run: list[str] = []

    async def sweep(name: str, review: Review, arguments: dict[str, Any]) -> None:
        before = await snapshot(ctx, fixture, review)
        reply = await call_tool(ctx, DECIDE, arguments)
        if reply.outcome.success:
            ran.append(f"{name}: not refused (judged by its own row)")
            return
        await expect_nothing_committed(ctx, fixture, review, before, name, reply)
        ran.append(f"{name}: {reply.outcome.describe()}")

    decided = await new_review(ctx, fixture)
    expect_success(await decide(ctx, decided.review_id, "approve", decided.revision), "the first approval")
    await sweep("already decided", decided, decide_args(decided.review_id, "decline", decided.revision))
    fresh = await new_review(ctx, fixture)
    await sweep("never-issued revision", fresh, decide_args(fresh.review_id, "approve", NEVER_ISSUED))
    other = await new_review(ctx, fixture)
    await sweep("another review's revision", fresh, decide_args(fresh.review_id, "approve", other.revision))
    if fixture.has("mutate_terms"):
        stale = await new_review(ctx, fixture)
        await fixture.call("mutate_terms", review_id=stale.review_id, term="schedule")
        current = await _reread(ctx, stale)
        await sweep("stale revision", current, decide_args(stale.review_id, "approve", stale.revision))
    else:
        not_run.append("stale revision (needs: mutate_terms)")
    if fixture.has("withdraw"):
        withdrawn = await new_review(ctx, fixture)
        await fixture.call("withdraw", review_id=withdrawn.review_id)
        await sweep("withdrawn", withdrawn, decide_args(withdrawn.review_id, "approve", withdrawn.revision))
    else:
        not_run.append("withdrawn (needs: withdraw)")
    if fixture.has("expire"):
        expired = await new_review(ctx, fixture)
        await fixture.call("expire", review_id=expired.review_id)
        await sweep("expired", expired, decide_args(expired.review_id, "approve", expired.revision))
    else:
        not_run.append("expired (needs: expire)")
    ctx.note("; ".join(ran) + (f"; not run: {', '.join(not_run)}" if not_run else ""))


@map_check(
    "map-review.decide.approved-snapshot",
    "MAP-DEC-019",
    "approve queues the exact approved snapshot",
    once=True,
)
async def decide_approved_snapshot(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "publication_jobs")
    variants = ["as created"]
    reviews = [await new_review(ctx, fixture)]
    if fixture.has("mutate_terms"):
        changed = await new_review(ctx, fixture)
        for term in ("visibility", "schedule", "content_text"):
            await fixture.call("mutate_terms", review_id=changed.review_id, term=term)
        reviews.append(await _reread(ctx, changed))
        variants.append("with visibility, schedule and content changed before the read")
    for label, review in zip(variants, reviews, strict=True):
        terms = review.terms()
        expect_success(await decide(ctx, review.review_id, "approve", review.revision), f"approve ({label})")
        jobs = await jobs_of(fixture, review) or []
        if len(jobs) != 1:
            missed(f"approve ({label}) queued {len(jobs)} job(s), expected 1", jobs=json.dumps(jobs)[:1500])
        job = jobs[0]
        for key, value in terms.items():
            if key == "content_text" and "content_text" not in job:
                continue
            if job.get(key) != value:
                missed(
                    f"approve ({label}): the job's {key} is {json.dumps(job.get(key))[:300]}, the approved "
                    f"revision {review.revision} read {json.dumps(value)[:300]}",
                    jobs=json.dumps(jobs)[:1500],
                )
    ctx.note(f"{len(reviews)} approvals, each job equal to the terms read at the approved revision")

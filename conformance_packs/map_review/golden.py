"""The seed's own p7 exchange, replayed from vectors/map-review/p7-exchange.json.

The seed shows one read and one approval of review p7 at revision p7-r4, answered `queued`. p7 expires
at 2026-10-03T08:00:00Z, so the exchange holds only while the service clock is before that instant; the
check sets the clock the vector assumes, and also proves the other side: at the vector's later clock the
same approval is 410 and commits nothing. It needs `reset` (p7 must be pristine, and is left pristine)
and `set_clock`; a target that does not serve p7 at all is SKIP, since p7 is example data, not a rule.
It runs once per target, on the newest revision spoken (the seed's exchange is a 2026-07-28 one), so its
reset happens once.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.pack_api import CaseContext, load_vectors, missed, skip
from conformance_packs.map_review.common import (
    SUITE,
    Review,
    call_tool,
    expect_nothing_committed,
    expect_status,
    fx,
    map_check,
    snapshot,
    text_mirror,
)


def exchange(vector_id: str) -> dict[str, Any]:
    for vector in load_vectors(SUITE, "p7-exchange.json"):
        if vector["id"] == vector_id:
            return vector
    raise LookupError(vector_id)


def compare_result(ctx: CaseContext, label: str, expected: dict[str, Any], reply: Any) -> None:
    """structuredContent and isError as the seed shows them; the text block deep-equal (bytes noted)."""
    result = reply.result
    if result.get("isError", False) is not False:
        missed(f"{label}: isError is {result.get('isError')!r}, the seed shows false", **reply.excerpt())
    sc = result.get("structuredContent")
    if sc != expected["structuredContent"]:
        missed(f"{label}: structuredContent differs from the seed's", **reply.excerpt())
    seed_text = expected["content"][0]["text"]
    _, equal, text = text_mirror(result, sc)
    if not equal:
        missed(f"{label}: no text block deep-equals the seed's {seed_text[:80]!r}…", **reply.excerpt())
    ctx.note(
        f"{label}: "
        + (
            "text block identical to the seed's"
            if text == seed_text
            else "text block deep-equal to the seed's, not byte-identical"
        )
    )
    if json.dumps(sc, separators=(",", ":"), ensure_ascii=False) == seed_text:
        ctx.note(f"{label}: structuredContent keeps the seed's member order")


@map_check(
    "map-review.golden.p7-exchange",
    "MAP-DEC-001",
    "the seed's p7 exchange replays at its clock",
    once=True,
    exclusive=True,
)
async def golden_p7_exchange(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "reset", "set_clock")
    read_vector, approve_vector = exchange("map.p7.read"), exchange("map.p7.approve")
    late_vector = exchange("map.p7.approve-after-expiry")
    read_params, approve_params = read_vector["request"]["params"], approve_vector["request"]["params"]
    reference = read_params["arguments"]["reference"]
    p7 = Review(
        approve_params["arguments"]["review_id"],
        reference,
        approve_params["arguments"]["expected_revision"],
        {},
    )
    await fixture.call("reset")
    try:
        await fixture.call("set_clock", now=read_vector["clock"]["now"])
        reply = await call_tool(ctx, read_params["name"], read_params["arguments"])
        if not reply.outcome.success:
            skip(f"the target does not serve the seed's example review p7 (read: {reply.outcome.describe()})")
        compare_result(ctx, "read p7", read_vector["response"]["result"], reply)

        await fixture.call("set_clock", now=late_vector["clock"]["now"])
        before = await snapshot(ctx, fixture, p7)
        late = await call_tool(ctx, approve_params["name"], approve_params["arguments"])
        expect_status(
            ctx, late, (late_vector["expect_status"],), f"approve p7 at {late_vector['clock']['now']}"
        )
        await expect_nothing_committed(ctx, fixture, p7, before, "the approval after expiry", late)

        await fixture.call("set_clock", now=approve_vector["clock"]["now"])
        reply = await call_tool(ctx, approve_params["name"], approve_params["arguments"])
        compare_result(ctx, "approve p7", approve_vector["response"]["result"], reply)
        if fixture.has("publication_jobs"):
            jobs = (await fixture.call("publication_jobs", review_id=p7.review_id))["jobs"]
            if len(jobs) != 1:
                missed(f"approving p7 queued {len(jobs)} job(s), expected 1", jobs=json.dumps(jobs)[:1500])
    finally:
        await fixture.call("reset")

"""UWMD-CONC rows: strong If-Match on apply_edit, the duplicate call, retry safety, and the race (C-5).

The ETag is the quoted semantic digest (gap rule G-U2): the harness always sends `"sha256:..."`. Each row
edits a deal of its own. The race runs each racer on a session of its own (a process each over stdio),
releases them at one barrier, and records when every request was sent and answered, so that a race that
was serial in practice is reported as WARN not-concurrent rather than a PASS it did not earn.
"""

from __future__ import annotations

import asyncio
import copy
import json
import statistics
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.pack_api import CaseContext, Session, blocked, load_vectors, missed
from conformance_packs.uwmd.common import (
    SUITE,
    ZERO_TAG,
    Deal,
    Reply,
    current_digest,
    edit,
    etag_of,
    expect_refused,
    expect_status,
    expect_success,
    expect_unchanged,
    fx,
    load,
    readable,
    rename,
    shared_deal,
    uw_json,
    uwmd_check,
)

#: C-5: at least 20 rounds, each on a freshly loaded deal.
ROUNDS: Final = 20


def rounds(ctx: CaseContext) -> int:
    """20, or more when the target file's `[uwmd] race_rounds` asks for more (never fewer)."""
    settings = ctx.target.settings.get("uwmd")
    wanted = settings.get("race_rounds") if isinstance(settings, dict) else None
    return max(ROUNDS, wanted) if isinstance(wanted, int) and not isinstance(wanted, bool) else ROUNDS


def receipt_digest(reply: Reply) -> str | None:
    value = reply.sc.get("semantic_digest")
    return value if isinstance(value, str) else None


async def fresh(ctx: CaseContext) -> tuple[Deal, str]:
    deal = await load(ctx)
    return deal, await readable(ctx, deal)


@uwmd_check(
    "uwmd.conc.stale-if-match",
    "UWMD-CONC-001",
    "a stale If-Match is refused 412 and commits nothing",
    once=True,
)
async def stale_if_match(ctx: CaseContext) -> None:
    deal, digest = await fresh(ctx)
    reply = await edit(ctx, deal, ZERO_TAG, rename("stale write"))
    expect_status(ctx, reply, (412,), "apply_edit with a stale if_match")
    await expect_unchanged(ctx, deal, digest, "apply_edit with a stale if_match", reply)


@uwmd_check("uwmd.conc.duplicate", "UWMD-CONC-002", "the duplicate apply_edit fails 412", once=True)
async def duplicate(ctx: CaseContext) -> None:
    deal, e0 = await fresh(ctx)
    operation = rename("Harbor Point Apartments (first)")
    first = await edit(ctx, deal, etag_of(e0), operation)
    expect_success(first, "the first apply_edit")
    e1, _ = await current_digest(ctx, deal)
    again = await edit(ctx, deal, etag_of(e0), operation)
    expect_status(ctx, again, (412,), "the duplicate apply_edit with the original if_match")
    assert e1 is not None
    await expect_unchanged(ctx, deal, e1, "the duplicate apply_edit", again)


def supersede_operation() -> dict[str, Any]:
    """CONC-003's operation: superseding the agent-written risk_assessment (an edit-operations vector).

    Each application of a section_supersede moves the prior block into the superseded history and
    assigns the next version (UWMD-TOOL-016, the Tier-2 editor the binding MUST use), so applying the
    same operation again changes the document whatever the resolution of the server's timestamps.
    """
    for vector in load_vectors(SUITE, "edit-operations.json"):
        if vector["id"] == "uwmd.edit-op.section-supersede":
            operation: dict[str, Any] = copy.deepcopy(vector["operation"])
            return operation
    raise LookupError("uwmd.edit-op.section-supersede")


@uwmd_check(
    "uwmd.conc.retry-safety",
    "UWMD-CONC-003",
    "replays with the old If-Match fail; a new one is not idempotent",
    once=True,
)
async def retry_safety(ctx: CaseContext) -> None:
    deal, e0 = await fresh(ctx)
    operation = supersede_operation()
    first = await edit(ctx, deal, etag_of(e0), operation)
    if not first.success:
        blocked(
            "uwmd.tool.tier2-editor",
            "needs a section_supersede of risk_assessment that succeeds (the Tier-2 editor's): it "
            f"answered {first.outcome.describe()}",
        )
    e1, _ = await current_digest(ctx, deal)
    assert e1 is not None
    for attempt in range(5):
        replay = await edit(ctx, deal, etag_of(e0), operation)
        expect_status(ctx, replay, (412,), f"replay {attempt + 1} with the original if_match")
        await expect_unchanged(ctx, deal, e1, f"replay {attempt + 1}", replay)
    second = await edit(ctx, deal, etag_of(e1), operation)
    expect_success(second, "the same section_supersede with the new ETag")
    e2, reply = await current_digest(ctx, deal)
    if e2 is None or e2 == e1:
        missed(
            f"the same section_supersede applied again with the new ETag left the digest at {e2} (E1 {e1}): "
            "a second application adds a superseded block and a version, so the edit was treated as "
            "idempotent",
            **reply.excerpt(),
        )
    ctx.note(
        "E0 replayed 5 times (412 each), then the same supersede with E1 changed the digest: judged on "
        "the superseded history and version, not on timestamps"
    )


@uwmd_check("uwmd.conc.weak-tag", "UWMD-CONC-004", "a weak ETag never matches", once=True)
async def weak_tag(ctx: CaseContext) -> None:
    deal, digest = await fresh(ctx)
    weak = await edit(ctx, deal, f"W/{etag_of(digest)}", rename("weak write"))
    expect_status(ctx, weak, (412,), "apply_edit with the current digest as a weak ETag")
    await expect_unchanged(ctx, deal, digest, "apply_edit with a weak ETag", weak)
    bare = await edit(ctx, deal, digest, rename("unquoted write"))
    if bare.success:
        ctx.soft_warn("an unquoted digest was accepted as If-Match (G-U2: the ETag is the quoted digest)")
        digest = await readable(ctx, deal)
    else:
        ctx.note(f"an unquoted digest: {bare.outcome.describe()}")
    star = await edit(ctx, deal, "*", rename("star write"))
    ctx.note(f"If-Match * (untested by the seed, recorded only): {star.outcome.describe()}")


@uwmd_check(
    "uwmd.conc.if-match-required", "UWMD-CONC-005", "a missing or empty if_match is refused", once=True
)
async def if_match_required(ctx: CaseContext) -> None:
    from conformance_packs.uwmd.common import MISSING

    deal, digest = await fresh(ctx)
    for label, value in (("without if_match", MISSING), ("with an empty if_match", "")):
        reply = await edit(ctx, deal, value, rename(f"write {label}"))
        expect_refused(reply, f"apply_edit {label}")
        await expect_unchanged(ctx, deal, digest, f"apply_edit {label}", reply)
        if reply.outcome.status == 428 and not reply.outcome.weak:
            ctx.note(f"{label}: 428 ({reply.outcome.code})")
        else:
            ctx.note(f"{label}: refused as {reply.outcome.describe()} (the upstream reference answers 428)")


@uwmd_check(
    "uwmd.conc.digest-stable", "UWMD-CONC-007", "the digest ignores volatile generator fields", once=True
)
async def digest_stable(ctx: CaseContext) -> None:
    deal = await shared_deal(ctx)
    first = await readable(ctx, deal)
    envelope_a, _ = await uw_json(ctx, deal)
    await asyncio.sleep(1.1)
    second, reply = await current_digest(ctx, deal)
    envelope_b, read_b = await uw_json(ctx, deal)
    if second != first:
        missed(f"with no edit the digest changed from {first} to {second} a second later", **reply.excerpt())
    if envelope_a is not None and envelope_b is not None:
        if envelope_a.get("semantic_digest") != envelope_b.get("semantic_digest"):
            missed("the uw-json's embedded semantic_digest changed with no edit", **read_b.excerpt())
        moved = envelope_a.get("generated_at") != envelope_b.get("generated_at")
        ctx.note("generated_at " + ("differed between the reads" if moved else "was the same in both reads"))


# --------------------------------------------------------------------------- the race (C-5)


@dataclass
class Shot:
    racer: int
    value: str
    reply: Reply


@dataclass
class Race:
    name: str
    racers: int
    rounds: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    spans: list[float] = field(default_factory=list)

    def record(self, index: int, shots: list[Shot], problems: list[str]) -> None:
        origin = min(s.reply.sent for s in shots)
        self.spans.append(max(s.reply.received for s in shots) - origin)
        entry: dict[str, Any] = {
            "round": index + 1,
            "overlap": overlap(shots),
            "shots": [
                [
                    s.racer,
                    s.reply.outcome.describe(),
                    round((s.reply.sent - origin) * 1000, 2),
                    round((s.reply.received - origin) * 1000, 2),
                ]
                for s in shots
            ],
        }
        if problems:
            entry["problems"] = problems
            self.failures += [f"round {index + 1}: {p}" for p in problems]
        self.rounds.append(entry)

    def summary(self) -> str:
        overlapped = sum(1 for r in self.rounds if r["overlap"] != "none")
        together = sum(1 for r in self.rounds if r["overlap"] == "all")
        median = statistics.median(self.spans) * 1000 if self.spans else 0.0
        return (
            f"{self.name}: {len(self.rounds)} rounds of {self.racers} racers; requests overlapped in "
            f"{overlapped}/{len(self.rounds)} rounds (all in flight at once in {together}); "
            f"median round {median:.1f} ms"
        )

    def judge(self, ctx: CaseContext) -> None:
        ctx.note(self.summary())
        ctx.facts["race"] = {"name": self.name, "racers": self.racers, "rounds": self.rounds}
        if self.failures:
            failed = [r for r in self.rounds if "problems" in r]
            missed(
                f"{len(failed)} of {len(self.rounds)} rounds failed; first: {self.failures[0]}",
                rounds=json.dumps(failed[:3])[:4000],
                summary=self.summary(),
            )
        if sum(1 for r in self.rounds if r["overlap"] != "none") * 2 < len(self.rounds):
            ctx.soft_warn(f"not-concurrent (C-5): {self.summary()}")


def overlap(shots: list[Shot]) -> str:
    """all: every request was in flight at one instant; some: at least two overlapped; none: serial."""
    replies = sorted((s.reply for s in shots), key=lambda r: r.sent)
    if max(r.sent for r in replies) < min(r.received for r in replies):
        return "all"
    latest = replies[0].received
    for reply in replies[1:]:
        if reply.sent < latest:
            return "some"
        latest = max(latest, reply.received)
    return "none"


async def release(ctx: CaseContext, deal: Deal, tag: str, sessions: list[Session], label: str) -> list[Shot]:
    """Every racer sends its edit after one barrier; a transport failure propagates (ERROR)."""
    gate = asyncio.Event()

    async def racer(index: int, session: Session) -> Shot:
        value = f"racer-{index + 1}-{label}"
        await gate.wait()
        return Shot(index + 1, value, await edit(ctx, deal, tag, rename(value), session=session))

    tasks = [asyncio.create_task(racer(i, s)) for i, s in enumerate(sessions)]
    await asyncio.sleep(0)
    gate.set()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    for item in done:
        if isinstance(item, BaseException):
            raise item
    return [item for item in done if isinstance(item, Shot)]


async def judge_round(ctx: CaseContext, deal: Deal, shots: list[Shot]) -> list[str]:
    problems: list[str] = []
    winners = [s for s in shots if s.reply.success]
    if len(winners) != 1:
        lost = " (a lost update)" if len(winners) > 1 else ""
        problems.append(f"{len(winners)} racers succeeded{lost}; exactly one must")
    for shot in shots:
        if shot in winners:
            continue
        outcome = shot.reply.outcome
        if outcome.kind != "STATUS" or outcome.status != 412:
            problems.append(f"racer {shot.racer} lost with {outcome.describe()}, not 412")
        elif outcome.weak:
            ctx.soft_warn(f"weak-error-encoding: a losing racer's 412 is only in its text ({outcome.code!r})")
    final, _ = await current_digest(ctx, deal)
    envelope, _ = await uw_json(ctx, deal)
    name = (envelope or {}).get("frontmatter", {}).get("deal_name")
    if len(winners) == 1:
        winner = winners[0]
        claimed = receipt_digest(winner.reply)
        if claimed is not None and final != claimed:
            problems.append(f"the final digest {final} is not the winner's {claimed}")
        if name != winner.value:
            problems.append(f"the final deal_name is {name!r}, not the winner's {winner.value!r}")
    elif len(winners) > 1:
        problems.append(f"the deal ends as {name!r}: every other winner's write was lost")
    return problems


async def race(ctx: CaseContext, racers: int) -> None:
    fixture = await fx(ctx, "load_deal")
    deal = await load(ctx)
    assert deal.document is not None
    sessions = await ctx.racer_sessions(racers)
    record = Race(f"apply_edit x{racers}", racers)
    try:
        for index in range(rounds(ctx)):
            if index:
                await fixture.call("load_deal", document=deal.document, deal_id=deal.deal_id)
            digest, reply = await current_digest(ctx, deal)
            if digest is None:
                missed(
                    f"round {index + 1}: the reloaded deal cannot be read ({reply.outcome.describe()})",
                    **reply.excerpt(),
                )
            shots = await release(ctx, deal, etag_of(digest), sessions, f"r{index + 1}")
            record.record(index, shots, await judge_round(ctx, deal, shots))
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    record.judge(ctx)


@uwmd_check(
    "uwmd.conc.race-2", "UWMD-CONC-006", "2 concurrent edits with one ETag: exactly one wins", once=True
)
async def race_2(ctx: CaseContext) -> None:
    await race(ctx, 2)


@uwmd_check(
    "uwmd.conc.race-8", "UWMD-CONC-006", "8 concurrent edits with one ETag: exactly one wins", once=True
)
async def race_8(ctx: CaseContext) -> None:
    await race(ctx, 8)

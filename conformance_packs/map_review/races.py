"""MAP-CONC rows: concurrent decisions, each racer on a session of its own, released at one barrier (C-5).

A race only proves something if the requests really overlapped, so every shot records when it was sent
and when its answer arrived; each race reports its rounds and how many of them overlapped, and a race
that was serial in most rounds is WARN not-concurrent instead of a PASS it did not earn. Rounds run on
fresh reviews (create_review) so that one lucky interleaving cannot hide a missing lock; a failing round
does not stop the race, so the evidence says how often it failed.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.pack_api import CaseContext, Fixtures, Session, missed, unjudgeable
from conformance_packs.map_review.common import (
    Reply,
    Review,
    decide,
    expires_ms,
    format_instant,
    fx,
    map_check,
    new_review,
)

#: C-5: at least 20 rounds, each on a fresh review.
ROUNDS: Final = 20
COMMENT: Final = "Please fix the title."
#: Relative start offsets (seconds) of the two sides of a decision-versus-fixture race, cycled per round,
#: so that both orders happen: positive delays the fixture side, negative the decision.
STAGGER: Final = (0.0, 0.0, 0.0005, 0.0, -0.0005, 0.0)


def rounds(ctx: CaseContext) -> int:
    """20, or more when the target file's `[map] race_rounds` asks for more (never fewer)."""
    settings = ctx.target.settings.get("map")
    wanted = settings.get("race_rounds") if isinstance(settings, dict) else None
    return max(ROUNDS, wanted) if isinstance(wanted, int) and not isinstance(wanted, bool) else ROUNDS


@dataclass
class Shot:
    label: str
    sent: float
    received: float
    reply: Reply | None = None
    result: Any = None


@dataclass
class Race:
    """The record of one race check: per round, who won, what each racer got and when."""

    name: str
    racers: int
    rounds: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)

    def record(self, index: int, review: Review, shots: list[Shot], problems: list[str]) -> None:
        origin = min(s.sent for s in shots)
        overlap = overlap_of(shots)
        self.durations.append(max(s.received for s in shots) - origin)
        entry = {
            "round": index + 1,
            "review": review.review_id,
            "overlap": overlap,
            "shots": [
                {
                    "racer": s.label,
                    "outcome": s.reply.outcome.describe() if s.reply else json.dumps(s.result)[:80],
                    "sent_ms": round((s.sent - origin) * 1000, 2),
                    "received_ms": round((s.received - origin) * 1000, 2),
                }
                for s in shots
            ],
        }
        if problems:
            entry["problems"] = problems
            self.failures.extend(f"round {index + 1}: {p}" for p in problems)
        self.rounds.append(entry)

    def summary(self) -> str:
        counts = {
            kind: sum(1 for r in self.rounds if r["overlap"] == kind) for kind in ("all", "some", "none")
        }
        median = statistics.median(self.durations) * 1000 if self.durations else 0.0
        return (
            f"{self.name}: {len(self.rounds)} rounds of {self.racers} racers; requests overlapped in "
            f"{counts['all'] + counts['some']}/{len(self.rounds)} rounds (all in flight at once in "
            f"{counts['all']}, serial in {counts['none']}); median round {median:.1f} ms"
        )

    def timings(self) -> str:
        """Per-racer send/receive times of the first round, and how tightly every round's sends bunched."""
        first = self.rounds[0]
        shots = ", ".join(f"{s['racer']} {s['sent_ms']}/{s['received_ms']}" for s in first["shots"])
        spreads = [max(s["sent_ms"] for s in r["shots"]) for r in self.rounds]
        return (
            f"round 1 per racer, sent/received ms after the first send: {shots}; "
            f"median spread of sends per round {statistics.median(spreads):.2f} ms"
        )

    def judge(self, ctx: CaseContext) -> None:
        ctx.note(self.summary())
        if self.rounds:
            ctx.note(self.timings())
        # An engine that keeps per-case facts whatever the verdict gets every round's timings there too.
        facts = getattr(ctx, "facts", None)
        if isinstance(facts, dict):
            facts["race"] = {
                "name": self.name,
                "racers": self.racers,
                "rounds": [
                    {
                        "round": r["round"],
                        "overlap": r["overlap"],
                        "shots": [
                            [s["racer"], s["outcome"], s["sent_ms"], s["received_ms"]] for s in r["shots"]
                        ],
                    }
                    for r in self.rounds
                ],
            }
        if self.failures:
            failed = [r for r in self.rounds if "problems" in r]
            missed(
                f"{len(failed)} of {len(self.rounds)} rounds failed; first: {self.failures[0]}",
                rounds=json.dumps(failed[:3])[:4000],
                summary=self.summary(),
            )
        overlapped = sum(1 for r in self.rounds if r["overlap"] != "none")
        if overlapped * 2 < len(self.rounds):
            ctx.soft_warn(f"not-concurrent (C-5): {self.summary()}")


def overlap_of(shots: list[Shot]) -> str:
    """all: every request was in flight at one instant; some: at least two overlapped; none: serial."""
    if max(s.sent for s in shots) < min(s.received for s in shots):
        return "all"
    ordered = sorted(shots, key=lambda s: s.sent)
    latest = ordered[0].received
    for shot in ordered[1:]:
        if shot.sent < latest:
            return "some"
        latest = max(latest, shot.received)
    return "none"


async def release(actions: list[tuple[str, float, Callable[[], Awaitable[Any]]]]) -> list[Shot]:
    """Start every action at one barrier (after its own delay), wait for all; a failure propagates."""
    gate = asyncio.Event()

    async def run(label: str, delay: float, action: Callable[[], Awaitable[Any]]) -> Shot:
        await gate.wait()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = time.monotonic()
        value = await action()
        received = time.monotonic()
        if isinstance(value, Reply):
            return Shot(label, value.sent, value.received, reply=value)
        return Shot(label, sent, received, result=value)

    tasks = [asyncio.create_task(run(label, delay, action)) for label, delay, action in actions]
    await asyncio.sleep(0)
    gate.set()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    for item in done:
        if isinstance(item, BaseException):
            raise item
    return [item for item in done if isinstance(item, Shot)]


async def close_all(sessions: list[Session]) -> None:
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def job_count(fixture: Fixtures, review: Review) -> int | None:
    if not fixture.has("publication_jobs"):
        return None
    return len((await fixture.call("publication_jobs", review_id=review.review_id))["jobs"])


async def jobs_of(fixture: Fixtures, review: Review) -> list[Any]:
    jobs: list[Any] = (await fixture.call("publication_jobs", review_id=review.review_id))["jobs"]
    return jobs


def loser_problem(ctx: CaseContext, shot: Shot) -> str | None:
    """Every loser is 409 (C-2); a text-only 409 is WARN weak-error-encoding."""
    assert shot.reply is not None
    outcome = shot.reply.outcome
    if outcome.kind == "STATUS" and outcome.status == 409:
        if outcome.weak:
            ctx.soft_warn(f"weak-error-encoding: a losing racer's 409 is only in its text ({outcome.code!r})")
        return None
    return f"racer {shot.label} lost with {outcome.describe()}, not 409"


async def decision_race(ctx: CaseContext, name: str, decisions: list[str]) -> None:
    """One race check: len(decisions) sessions, ROUNDS rounds on fresh reviews, exactly one winner."""
    fixture = await fx(ctx, "create_review")
    oracle = fixture.has("publication_jobs")
    sessions = await ctx.racer_sessions(len(decisions))
    race = Race(name, len(decisions))
    try:
        for index in range(rounds(ctx)):
            review = await new_review(ctx, fixture)
            # Rotate who sends what, so that no decision is always sent by the same process.
            plan = decisions[index % len(decisions) :] + decisions[: index % len(decisions)]
            actions = [
                (
                    f"{i + 1}:{decision}",
                    0.0,
                    _decider(ctx, review, decision, session),
                )
                for i, (decision, session) in enumerate(zip(plan, sessions, strict=True))
            ]
            shots = await release(actions)
            problems = await judge_round(ctx, fixture, review, shots, oracle)
            race.record(index, review, shots, problems)
    finally:
        await close_all(sessions)
    if not oracle:
        ctx.note("publication_jobs not offered: job counts were not observed")
    race.judge(ctx)


def _decider(
    ctx: CaseContext, review: Review, decision: str, session: Session
) -> Callable[[], Awaitable[Reply]]:
    comment = COMMENT if decision == "request-changes" else None

    def action() -> Awaitable[Reply]:
        return decide(ctx, review.review_id, decision, review.revision, comment, session=session)

    return action


async def judge_round(
    ctx: CaseContext, fixture: Fixtures, review: Review, shots: list[Shot], oracle: bool
) -> list[str]:
    problems: list[str] = []
    winners = [s for s in shots if s.reply is not None and s.reply.outcome.success]
    if len(winners) != 1:
        problems.append(f"{len(winners)} racers succeeded, exactly one must")
    problems += [p for s in shots if s not in winners and (p := loser_problem(ctx, s))]
    expected_jobs = sum(1 for s in winners if s.label.endswith(":approve"))
    for winner in winners:
        assert winner.reply is not None
        sc = winner.reply.result.get("structuredContent")
        state = sc.get("state") if isinstance(sc, dict) else None
        if winner.label.endswith(":approve") and state != "queued":
            problems.append(f"the winning approve reports state {state!r}, not 'queued'")
        if not winner.label.endswith(":approve") and state == "queued":
            problems.append(f"the winning {winner.label} reports state 'queued'")
    if oracle:
        count = await job_count(fixture, review)
        if count != expected_jobs:
            problems.append(f"publication_jobs shows {count} job(s); the winners imply {expected_jobs}")
    if len(winners) == 1:
        later = await decide(ctx, review.review_id, "decline", review.revision)
        if later.outcome.success or later.outcome.status != 409:
            problems.append(f"a decision after the race answered {later.outcome.describe()}, not 409")
        if fixture.has("review_state"):
            state = (await fixture.call("review_state", review_id=review.review_id))["state"]
            if state == "awaiting_review":
                problems.append("review_state still says awaiting_review after a winner")
    return problems


@map_check("map-review.race.approve-2", "MAP-CONC-001", "2 concurrent approvals: exactly one wins", once=True)
async def race_approve_2(ctx: CaseContext) -> None:
    await decision_race(ctx, "approve x2", ["approve"] * 2)


@map_check("map-review.race.approve-8", "MAP-CONC-001", "8 concurrent approvals: exactly one wins", once=True)
async def race_approve_8(ctx: CaseContext) -> None:
    await decision_race(ctx, "approve x8", ["approve"] * 8)


@map_check(
    "map-review.race.mixed",
    "MAP-CONC-002",
    "mixed concurrent decisions: one wins, the state agrees",
    once=True,
)
async def race_mixed(ctx: CaseContext) -> None:
    await decision_race(
        ctx, "approve/decline/request-changes x6", ["approve", "decline", "request-changes"] * 2
    )


async def fixture_race(
    ctx: CaseContext,
    fixture: Fixtures,
    name: str,
    hook: str,
    params: Callable[[int, Review], dict[str, Any]],
    judge: Callable[[Review, Shot, list[Any]], list[str]],
) -> Race:
    """Rounds of decide(approve) on the shared session against one fixture hook, staggered both ways."""
    race = Race(name, 2)
    for index in range(rounds(ctx)):
        review = await new_review(ctx, fixture)
        stagger = STAGGER[index % len(STAGGER)]
        shots = await release(
            [
                ("decide", max(-stagger, 0.0), _decider(ctx, review, "approve", await ctx.session())),
                (hook, max(stagger, 0.0), _hook(fixture, hook, params(index, review))),
            ]
        )
        decision = shots[0]
        problems = judge(review, decision, await jobs_of(fixture, review))
        race.record(index, review, shots, problems)
    return race


def _hook(fixture: Fixtures, hook: str, params: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
    def action() -> Awaitable[Any]:
        return fixture.call(hook, **params)

    return action


@map_check("map-review.race.decide-vs-mutate", "MAP-CONC-003", "a decision racing a term change", once=True)
async def race_decide_vs_mutate(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "mutate_terms", "publication_jobs")
    terms = ("content_text", "destinations", "schedule")
    outcomes = {"approved": 0, "refused": 0}

    def judge(review: Review, shot: Shot, jobs: list[Any]) -> list[str]:
        assert shot.reply is not None
        outcome = shot.reply.outcome
        approved = review.terms()
        if outcome.success:
            outcomes["approved"] += 1
            if len(jobs) != 1:
                return [f"the approval succeeded with {len(jobs)} job(s)"]
            changed = [
                k for k in ("content_digest", "destinations", "schedule") if jobs[0].get(k) != approved[k]
            ]
            return [f"the job carries terms the approval never saw: {', '.join(changed)}"] if changed else []
        outcomes["refused"] += 1
        if outcome.kind != "STATUS" or outcome.status != 409:
            return [f"the decision answered {outcome.describe()}; only SUCCESS or 409 are allowed"]
        if outcome.weak:
            ctx.soft_warn(
                f"weak-error-encoding: a refused decision says 409 only in its text ({outcome.code!r})"
            )
        return [f"a 409 left {len(jobs)} job(s)"] if jobs else []

    race = await fixture_race(
        ctx,
        fixture,
        "decide vs mutate_terms",
        "mutate_terms",
        lambda i, review: {"review_id": review.review_id, "term": terms[i % len(terms)]},
        judge,
    )
    ctx.note(f"the approval won {outcomes['approved']} rounds and lost {outcomes['refused']} (409)")
    race.judge(ctx)


@map_check("map-review.race.decide-vs-revoke", "MAP-CONC-005", "a decision racing a revocation", once=True)
async def race_decide_vs_revoke(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "revoke_permission", "publication_jobs")
    outcomes = {"approved": 0, "refused": 0}

    def judge(review: Review, shot: Shot, jobs: list[Any]) -> list[str]:
        assert shot.reply is not None
        outcome = shot.reply.outcome
        if outcome.success:
            outcomes["approved"] += 1
            return [] if len(jobs) == 1 else [f"the approval succeeded with {len(jobs)} job(s)"]
        outcomes["refused"] += 1
        if outcome.kind != "STATUS" or outcome.status not in (403, 404, 409):
            return [f"the decision answered {outcome.describe()}; only SUCCESS or 403/404/409 are allowed"]
        if outcome.weak:
            ctx.soft_warn(f"weak-error-encoding: a refused decision is {outcome.status} only in its text")
        return [f"a refusal ({outcome.status}) left {len(jobs)} job(s)"] if jobs else []

    race = await fixture_race(
        ctx,
        fixture,
        "decide vs revoke_permission",
        "revoke_permission",
        lambda i, review: {"review_id": review.review_id, "account": "primary"},
        judge,
    )
    ctx.note(f"the approval won {outcomes['approved']} rounds and was refused in {outcomes['refused']}")
    race.judge(ctx)


#: CONC-004: real-time offsets (ms) from expires_at at which decisions are fired, with the service clock
#: set 200 ms before expiry and left running; the controls lie beyond the +-1 s skew of gap rule G-M5.
SWEEP_MS: Final = tuple(range(-200, 201, 40))
CONTROLS_MS: Final = ((-1500, True), (1500, False))


@map_check(
    "map-review.race.expiry-boundary",
    "MAP-CONC-004",
    "decisions at the expiry boundary",
    once=True,
    exclusive=True,
)
async def race_expiry_boundary(ctx: CaseContext) -> None:
    fixture = await fx(ctx, "create_review", "set_clock", "publication_jobs")
    problems: list[str] = []
    seen = {"success": 0, "410": 0}

    async def judge(review: Review, reply: Reply, offset: int, expect: bool | None) -> None:
        jobs = await jobs_of(fixture, review)
        outcome = reply.outcome
        label = f"decision at expires_at {offset:+d} ms"
        if outcome.success:
            seen["success"] += 1
            if len(jobs) != 1:
                problems.append(f"{label} succeeded with {len(jobs)} job(s)")
        elif outcome.kind == "STATUS" and outcome.status == 410:
            seen["410"] += 1
            if jobs:
                problems.append(f"{label} was 410 but left {len(jobs)} job(s)")
            if outcome.weak:
                ctx.soft_warn(f"weak-error-encoding: the 410 {label} is only in its text")
        else:
            problems.append(f"{label} answered {outcome.describe()}; only SUCCESS or 410 are allowed")
        if expect is True and not outcome.success:
            problems.append(f"{label} (before the +-1 s skew) must succeed, got {outcome.describe()}")
        if expect is False and not (outcome.kind == "STATUS" and outcome.status == 410):
            problems.append(f"{label} (after the +-1 s skew) must be 410, got {outcome.describe()}")

    # Every review exists before the clock moves: created later, it would already be expired. The sweep
    # needs one expiry for all of them: the first review's, passed to create_review for the others, so a
    # service whose fresh reviews expire a term after creation (now + N) is judged as fairly as one with
    # a fixed template instant.
    first = await new_review(ctx, fixture)
    shared_expiry = first.sc.get("expires_at")
    if not isinstance(shared_expiry, str):
        missed(f"the review has no expires_at string: {shared_expiry!r}")
    reviews = [first] + [await new_review(ctx, fixture, expires_at=shared_expiry) for _ in SWEEP_MS[1:]]
    controls = [(await new_review(ctx, fixture), offset, succeeds) for offset, succeeds in CONTROLS_MS]
    expiry = expires_ms(first)
    differing = [r.review_id for r in reviews if expires_ms(r) != expiry]
    if differing:
        unjudgeable(
            f"create_review with expires_at={shared_expiry!r} gave {', '.join(differing[:5])} another "
            "expires_at: the controller did not honour the param (it should answer unsupported)"
        )
    try:
        await fixture.call("set_clock", now=format_instant(expiry + SWEEP_MS[0]))
        origin = time.monotonic()
        replies = []
        for review, offset in zip(reviews, SWEEP_MS, strict=True):
            await asyncio.sleep(max(0.0, origin + (offset - SWEEP_MS[0]) / 1000 - time.monotonic()))
            replies.append(await decide(ctx, review.review_id, "approve", review.revision))
        for review, offset, reply in zip(reviews, SWEEP_MS, replies, strict=True):
            await judge(review, reply, offset, None)
        for review, offset, succeeds in controls:
            await fixture.call("set_clock", now=format_instant(expires_ms(review) + offset))
            await judge(
                review, await decide(ctx, review.review_id, "approve", review.revision), offset, succeeds
            )
    finally:
        await fixture.call("set_clock", now=None)
    ctx.note(
        f"{len(SWEEP_MS)} decisions from {SWEEP_MS[0]} to {SWEEP_MS[-1]} ms around expires_at on the "
        f"service's running clock: {seen['success']} succeeded, {seen['410']} were 410 "
        "(controls at +-1.5 s included)"
    )
    if problems:
        missed(
            f"{len(problems)} boundary decisions broke the rule; first: {problems[0]}", problems=problems[:10]
        )

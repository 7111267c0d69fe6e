"""Runs checks against targets and emits events; knows nothing about report formats.

For each target: launch it if needed, probe the revisions (bounded), then run every applicable check
of every chosen suite once per spoken revision, over a shared session that is restarted when a case
breaks it. Every case yields exactly one CaseResult, whatever the server did.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import traceback
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from conformance.adapters.base import TargetUnreachable, TransportError
from conformance.adapters.stdio import become_subreaper
from conformance.adapters.transcript import Transcript
from conformance.engine import blocking
from conformance.engine.checks import Blocked, Check, Missed, Outcome, Skipped, Weak
from conformance.engine.context import CaseContext, RunOptions, TargetShared
from conformance.engine.events import (
    CaseFinished,
    Event,
    Fanout,
    RunFinished,
    TargetFinished,
    TargetStarted,
)
from conformance.engine.memo import CURRENT_KEY, MET
from conformance.engine.results import CaseResult, case_key, row_case
from conformance.engine.sessions import (
    CURRENT_CASE,
    START_GATE,
    Prober,
    ProbeResult,
    SessionPool,
    default_revisions,
    launched,
    probe_all,
    probes_in_turn,
    unjudged_reason,
)
from conformance.model.requirements import get as requirement
from conformance.model.targets import Target
from conformance.model.verdicts import Verdict, finished_verdict, judged_at, outcome_verdict, unscored
from conformance.protocol.versions import era_of
from conformance.text import by_cause, masker

T = TypeVar("T")

CONNECT_CHECK = "connect"
#: The core's own row (conformance/requirements.json): every suite's connect case reports it.
CONNECT_REQUIREMENT = "CORE-CONNECT-001"


@dataclass
class TargetOutcome:
    index: int
    unreachable: bool = False
    spoken: list[str] = field(default_factory=list)


class Slot:
    """A place in the report's order: events and nested slots, emitted once everything before is done."""

    def __init__(self) -> None:
        self.items: list[Event | Slot] = []
        self.cursor = 0
        self.closed = False

    def child(self) -> Slot:
        slot = Slot()
        self.items.append(slot)
        return slot


class OrderedEvents:
    """Emits events in plan order while jobs finish in any order; with one job it is simply live."""

    def __init__(self, fanout: Fanout) -> None:
        self.fanout = fanout
        self.root = Slot()

    def emit(self, slot: Slot, event: Event) -> None:
        slot.items.append(event)
        self.flush()

    def close(self, slot: Slot) -> None:
        slot.closed = True
        self.flush()

    def flush(self) -> None:
        self._drain(self.root)

    def _drain(self, slot: Slot) -> bool:
        while slot.cursor < len(slot.items):
            item = slot.items[slot.cursor]
            if isinstance(item, Slot):
                if not self._drain(item):
                    return False
            else:
                self.fanout.emit(item)
            slot.cursor += 1
        return slot.closed


@dataclass(frozen=True)
class Budgets:
    """One target's budgets, settled once so that every session (probes, restarts, fresh ones, a
    suite's own) and every check reads the same figures: the target file's `[timeouts]`, else the
    run's options. The wall time is counted from the moment they are settled: launching and probing
    spend it too."""

    request: float
    start: float
    seconds: float
    deadline: float

    @classmethod
    def settle(cls, target: Target, options: RunOptions) -> Budgets:
        seconds = target.target_budget or options.target_budget
        return cls(
            request=target.request_timeout or options.timeout,
            start=target.start_timeout or options.start_timeout,
            seconds=seconds,
            deadline=time.monotonic() + seconds,
        )

    @property
    def spent(self) -> str:
        """Why a case was not run or not finished."""
        return f"the target's budget of {self.seconds:g} s was spent (--target-budget)"

    def spent_now(self) -> bool:
        return time.monotonic() >= self.deadline

    def as_info(self) -> dict[str, float]:
        """The figures as the report's target entry records them."""
        return {"request": self.request, "start": self.start, "target": self.seconds}


@dataclass
class TargetRun:
    """What the steps of one target's run share: the target as settled so far (budgets, then the
    credentials a pack's `prepare` adds), its report slot, and the details its report entry gets."""

    index: int
    target: Target
    checks: list[Check]
    slot: Slot
    budgets: Budgets
    #: The run's options with the target's request timeout.
    options: RunOptions
    #: The wire log of launching the target (its `launch` command), before any revision's.
    transcript: Transcript
    outcome: TargetOutcome
    #: The target's entry of the report, filled in as the run learns it.
    info: dict[str, Any]
    suites: list[str]
    per_target: TargetShared = field(default_factory=TargetShared)
    #: The `once` checks given to a revision already, and the suites any revision judges.
    assigned_once: set[str] = field(default_factory=set)
    assigned_suites: set[str] = field(default_factory=set)
    pools: list[SessionPool] = field(default_factory=list)
    #: The limit its probes and revisions run under when `options.jobs` is over 1: the runner's (`-j`),
    #: or one of its own when its revisions run side by side without `-j` (`Runner._side_by_side`).
    limit: asyncio.Semaphore | None = None

    def masked(self, value: Any) -> Any:
        """`value` with the target's secrets masked (as settled so far)."""
        return masker(tuple(self.target.secrets)).value(value)


@dataclass
class Judged:
    """What a case came to before its evidence and transcript are attached: its verdict, why, and
    the case whose verdict stands for the failure that left it nothing to judge (`blocked_by`)."""

    verdict: Verdict
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    blocked_by: str | None = None
    #: The transport failure that ended the case, when it is the case's own (not blocked).
    raised: TransportError | None = None
    #: A SKIP's kind and option (`CaseRecord.skip`), when the check gave more than "nothing to judge".
    skip: dict[str, str] | None = None
    #: The level a FAIL or WARN was judged at when it differs from the row's (`verdicts.judged_at`).
    judged_at: str | None = None

    def blocked(self, by: str) -> None:
        """Blocked by case `by`, which holds the verdict: the message says so."""
        self.blocked_by = by
        self.message = f"blocked by {by}: {self.message}"


class Runner:
    def __init__(self, options: RunOptions, events: Fanout) -> None:
        self.options = options
        self.events = events
        self.ordered = OrderedEvents(events)
        self._limit = asyncio.Semaphore(max(1, options.jobs))

    async def _each(self, jobs: list[Coroutine[Any, Any, T]], at_once: int) -> list[T]:
        """Run jobs in order (`at_once` 1) or concurrently, each under its own limit."""
        if at_once <= 1:
            try:
                return [await job for job in jobs]
            finally:  # cancelled (Ctrl-C) part-way: the jobs never started are dropped, not left unawaited
                for job in jobs:
                    job.close()
        return list(await asyncio.gather(*jobs))

    # ------------------------------------------------------------------ one target

    async def run_target(self, index: int, target: Target, checks: list[Check], slot: Slot) -> TargetOutcome:
        """Launch the target, probe its revisions, run each spoken revision's cases, and report what
        could not be judged (no revision opened, a suite binding only later revisions, no target)."""
        run = self._begin(index, target, checks, slot)
        try:
            async with launched(run.target, run.transcript) as live:
                live = await self._launch(run, live)
                probed = await self._probe_and_run(run, live)
                self._report_unspoken(run, probed)
                self._report_too_new(run)
        except TargetUnreachable as exc:
            self._report_unreachable(run, exc)
        run.info["unreachable"] = run.info.get("unreachable") or run.outcome.unreachable
        self.ordered.emit(slot, TargetFinished(index, run.masked(run.info)))
        self.ordered.close(slot)
        return run.outcome

    def _begin(self, index: int, target: Target, checks: list[Check], slot: Slot) -> TargetRun:
        """Settle the target's budgets and announce it (TargetStarted)."""
        budgets = Budgets.settle(target, self.options)
        # With -j 1 one server process starts at a time, and none is booted ahead of its case.
        START_GATE.set(asyncio.Semaphore(1) if self.options.jobs <= 1 else None)
        run = TargetRun(
            index=index,
            target=target.with_budgets(budgets.request, budgets.start),
            checks=checks,
            slot=slot,
            budgets=budgets,
            options=dataclasses.replace(self.options, timeout=budgets.request),
            transcript=Transcript(target.secrets),
            outcome=TargetOutcome(index),
            info={"index": index, "spec": target.describe(), "transport": target.kind},
            suites=sorted({c.suite for c in checks}),
        )
        if self._side_by_side(run):
            revisions = len(default_revisions(self.options.protocol))
            run.options = dataclasses.replace(run.options, jobs=max(1, revisions))
            run.limit = asyncio.Semaphore(run.options.jobs)
        run.info["timeouts"] = budgets.as_info()
        self.ordered.emit(slot, TargetStarted(index, run.masked(run.info)))
        run.info["suites"] = run.suites
        return run

    def _side_by_side(self, run: TargetRun) -> bool:
        """Whether a target's revisions run side by side though no `-j` was given: a Streamable HTTP
        server is one process already up, each revision keeps to sessions of its own, and every pack
        of the run says its checks write no state another revision reads (`Pack.revisions_side_by_side`).
        Waiting on one revision's answers while another's could be judged was most of such a run."""
        if not self.options.side_by_side or self.options.jobs > 1 or run.target.kind != "http":
            return False
        from conformance.model import packs

        return packs.side_by_side(run.suites)

    async def _launch(self, run: TargetRun, live: Target) -> Target:
        """The launched target as the suites' `prepare` hooks leave it; a pack's credentials are
        masked from here on."""
        run.info["url"] = live.url or None
        live = await _prepared(live, run.suites)
        if live.secrets != run.target.secrets:
            run.transcript.masker = masker(tuple(live.secrets))
        run.target = dataclasses.replace(
            run.target, headers=live.headers, secrets=live.secrets, settings=live.settings
        )
        return live

    async def _probe_and_run(self, run: TargetRun, live: Target) -> list[tuple[ProbeResult, Transcript]]:
        """Probe every revision and run each spoken one's cases; the probes, each with its wire log."""
        revisions = default_revisions(self.options.protocol)
        probed: list[tuple[ProbeResult, Transcript]] = []
        try:
            if probes_in_turn(live, run.options.jobs):
                # Each revision probed just before its cases, which continue on its process: one
                # server process at a time, and none started twice for one revision.
                prober = Prober(live, run.budgets.request, run.budgets.start)
                for revision in revisions:
                    wire = Transcript(run.target.secrets)
                    async with self._limit:
                        probe = await prober.one(revision, wire)
                    probed.append((probe, wire))
                    if probe.spoken:
                        run.outcome.spoken.append(probe.revision)
                        await self._revision_job(run, live, probe, wire)
            else:
                async with run.limit or self._limit:
                    probed = await probe_all(
                        live, revisions, run.budgets.request, run.budgets.start, run.options.jobs
                    )
                run.outcome.spoken[:] = [p.revision for p, _ in probed if p.spoken]
                # Every revision's pool exists (and boots its spares) before the first case runs, so
                # a later revision's spare starts while the earlier ones are judged.
                jobs = [self._revision_job(run, live, p, t) for p, t in probed if p.session is not None]
                await self._each(jobs, run.options.jobs)
        finally:  # a revision that never ran must not leave its processes behind
            await asyncio.gather(*(p.close() for p in run.pools), return_exceptions=True)
        return probed

    def _revision_job(
        self, run: TargetRun, live: Target, probe: ProbeResult, wire: Transcript
    ) -> Coroutine[Any, Any, None]:
        """The job running one spoken revision's cases, on its probe's session (and its wire log)."""
        assert probe.session is not None
        run.info.setdefault("server_info", probe.session.identity.server_info)
        chosen = self._schedule(run, live.kind, probe.revision)
        pool = SessionPool(live, probe.revision, wire, run.options.timeout, self.options.max_restarts)
        run.pools.append(pool)
        pool.adopt(probe.session)
        if run.options.jobs > 1:
            pool.prewarm(sum(c.fresh_sessions for c in chosen))
        return self._run_revision(run, live, probe, pool, chosen, run.slot.child())

    def _schedule(self, run: TargetRun, transport: str, revision: str) -> list[Check]:
        """The checks one revision runs: those that apply to it, a `once` check only on the first
        spoken revision it applies to, whatever `-j` is."""
        era = era_of(revision)
        chosen = [
            c
            for c in run.checks
            if c.applies(era, transport, revision) and not (c.once and c.id in run.assigned_once)
        ]
        run.assigned_once.update(c.id for c in chosen if c.once)
        run.assigned_suites.update(c.suite for c in chosen)
        return chosen

    # ------------------------------------------------------------------ what could not be judged

    def _report_unspoken(self, run: TargetRun, probed: list[tuple[ProbeResult, Transcript]]) -> None:
        """Record the probes; when no revision opened, one connect case per suite says why."""
        probes = [p for p, _ in probed]
        run.info["probe"] = [_probe_info(p) for p in probes]
        run.info["revisions_spoken"] = run.outcome.spoken
        if run.outcome.spoken:
            return
        unjudged = unjudged_reason(probes)
        run.outcome.unreachable = unjudged is None and all(p.unreachable or not p.call for p in probes)
        entries = [e for _, t in probed for e in t.entries][-40:]
        if unjudged is not None:
            # It negotiated correctly, in no revision the harness can judge here: SKIP, saying why.
            for suite in run.suites:
                self._emit_connect(run, suite, Verdict.SKIP, unjudged, entries=entries)
            return
        lines = by_cause((p.revision, p.message) for p in probes)
        evidence = "\n".join(p.evidence for p in probes if p.evidence)[-4000:]
        tail = [line for line in evidence.splitlines() if line.strip() and not line.startswith("exit status")]
        if tail:
            lines.append(f"last stderr line: {tail[-1].strip()[:200]}")
        refused = any(p.call is not None for p in probes) and not any(p.unreachable for p in probes)
        for suite in run.suites if refused else self._error_suites(run):
            if refused:
                # It answered but refused every revision tried: that is a verdict, not an outage.
                message = "the server accepted none of the revisions tried:\n" + "\n".join(lines)
                self._emit_connect(
                    run, suite, Verdict.FAIL, message, evidence={"why": evidence}, entries=entries
                )
            else:
                self._emit_connect_error(run, suite, "\n".join(lines), evidence, entries)

    def _report_too_new(self, run: TargetRun) -> None:
        """SKIP, saying why, each chosen suite that judges none of the revisions the server speaks; an
        extension's pack that runs by default and was not claimed
        says nothing there (the tasks extension is 2026-07-28's: a SKIP on every server that speaks older
        revisions would be noise, not news)."""
        from conformance.model import packs

        spoken = run.outcome.spoken
        for suite in sorted({c.suite for c in run.checks} - run.assigned_suites):
            pack = packs.installed().get(suite)
            first = pack.since if pack is not None else None
            if not spoken or first is None or any(r >= first for r in spoken):
                continue
            quiet = pack is not None and pack.extension is not None
            if quiet and suite not in self.options.claimed_suites:
                continue
            message = (
                f"not judged: the {suite} suite binds MCP {first} and later, and the server speaks only "
                f"{', '.join(spoken)}"
            )
            self._emit_connect(run, suite, Verdict.SKIP, message)

    def _report_unreachable(self, run: TargetRun, exc: TargetUnreachable) -> None:
        """The target could not be launched or reached at all: every suite's connect case is ERROR."""
        run.outcome.unreachable = True
        run.info["unreachable"] = str(exc)
        for suite in self._error_suites(run):
            self._emit_connect_error(run, suite, str(exc), exc.evidence, run.transcript.entries[-40:])

    def _error_suites(self, run: TargetRun) -> list[str]:
        """The suites whose connect case says the target could not be reached: every one but an
        extension's pack the user did not claim and a quiet pack the user did not name (each runs by
        default and would only repeat the same cause: `_says_nothing`), unless that leaves none."""
        kept = [s for s in run.suites if not _says_nothing(self.options, run.target, s)]
        return kept or list(run.suites)

    def _emit_connect_error(
        self, run: TargetRun, suite: str, message: str, evidence: str, entries: list[dict[str, Any]]
    ) -> None:
        message = "the target could not be reached: " + message
        self._emit_connect(
            run, suite, Verdict.ERROR, message, evidence={"diagnostics": evidence}, entries=entries
        )

    def _emit_connect(
        self,
        run: TargetRun,
        suite: str,
        verdict: Verdict,
        message: str,
        *,
        evidence: dict[str, Any] | None = None,
        entries: list[dict[str, Any]] | None = None,
    ) -> None:
        """Emit a suite's connect case (`CONNECT_REQUIREMENT`, on no revision): whether the target
        could be reached and opened at all, and why not. A case of an extension's pack counts only
        when the extension is claimed."""
        from conformance.model import packs

        row = requirement(CONNECT_REQUIREMENT).at("")
        check_id = f"{suite}.{CONNECT_CHECK}"
        pack = packs.installed().get(suite)
        track = "extension" if pack is not None and pack.extension is not None else row.track
        result = CaseResult(
            key=case_key(check_id, run.target.kind, "any", run.index),
            check=check_id,
            suite=suite,
            requirement=CONNECT_REQUIREMENT,
            level=row.level,
            title=row.title,
            target=run.index,
            transport=run.target.kind,
            revision="any",
            verdict=verdict,
            message=message,
            duration=0.0,
            evidence=evidence or {},
            transcript=entries or [],
            official=list(row.official_checks) or None,
            unscored=unscored(track, claimed(self.options, run.target, suite)),
        )
        self._finished(run.target, result, run.slot)

    def _finished(self, target: Target, result: CaseResult, slot: Slot) -> None:
        """Emit a case with secrets masked in everything built from server text (messages, evidence)."""
        mask = masker(tuple(target.secrets))
        result = dataclasses.replace(
            result, message=mask.text(result.message), evidence=mask.value(result.evidence)
        )
        self.ordered.emit(slot, CaseFinished(result))

    # ------------------------------------------------------------------ one revision, one case

    async def _run_revision(
        self,
        run: TargetRun,
        live: Target,
        probe: ProbeResult,
        pool: SessionPool,
        checks: list[Check],
        slot: Slot,
    ) -> None:
        """Run the chosen checks on one revision, in order, over one shared (restartable) session.

        Once the target's budget is spent, a running case is cut short and every case not yet run is
        ERROR at once, saying the budget was spent.
        """
        revision = probe.revision
        assert probe.session is not None
        identity = probe.session.identity
        shared: dict[str, Any] = {"spoken": run.outcome.spoken}
        plan = blocking.Plan(run.index, live.kind, revision, frozenset(c.id for c in checks))
        try:
            async with (run.limit or self._limit) if run.options.jobs > 1 else contextlib.nullcontext():
                settled = False
                for check in blocking.judge_last(checks, live.kind):
                    if check.last and not settled:
                        settled = True  # the log the last checks read holds all the server sent
                        await pool.settle()
                    ctx = CaseContext(
                        live,
                        revision,
                        era_of(revision),
                        live.kind,
                        identity,
                        pool,
                        run.options,
                        shared,
                        spares_allowed=check.fresh_sessions > 0,
                        per_target=run.per_target,
                    )
                    if run.budgets.spent_now():
                        result = self._unjudged(run.index, check, ctx, f"not run: {run.budgets.spent}")
                        self._finished(live, result, slot)
                        continue
                    result = await self._run_timed(run, check, ctx, pool.transcript, plan)
                    run.per_target.verdicts[result.key] = result.verdict
                    if result.blocked_by:
                        run.per_target.holders.setdefault(result.key, result.blocked_by)
                    self._finished(live, result, slot)
        finally:
            await pool.close()
            self.ordered.close(slot)

    async def _run_timed(
        self, run: TargetRun, check: Check, ctx: CaseContext, transcript: Transcript, plan: blocking.Plan
    ) -> CaseResult:
        """Run one case within the target's budget: cut short when it is spent (ERROR, saying so)."""
        mark, began = transcript.mark(), time.monotonic()
        token = CURRENT_CASE.set(check.id)
        key_token = CURRENT_KEY.set(case_key(check.id, ctx.transport, ctx.revision, run.index))
        met_token = MET.set([])
        try:
            async with asyncio.timeout_at(run.budgets.deadline):
                return await self._run_case(run.index, check, ctx, transcript, plan)
        except TimeoutError:
            ctx.session_broken()  # cut mid-exchange: its answer may still come
            message = f"not finished: {run.budgets.spent}"
            result = self._unjudged(run.index, check, ctx, message, transcript.since(mark))
            return dataclasses.replace(result, duration=time.monotonic() - began)
        finally:  # after the case's wire log is cut: closing is no part of its evidence
            CURRENT_CASE.reset(token)
            CURRENT_KEY.reset(key_token)
            MET.reset(met_token)
            await ctx.close()

    async def _run_case(
        self,
        index: int,
        check: Check,
        ctx: CaseContext,
        transcript: Transcript,
        plan: blocking.Plan | None = None,
    ) -> CaseResult:
        """Run one check; `plan` (the revision's checks) lets a blocked case name its blocking case."""
        mark = transcript.mark()
        started = time.monotonic()
        key = case_key(check.id, ctx.transport, ctx.revision, index)
        judged = await self._judge(check, ctx, key, plan)
        self._hand_over(judged, ctx, key, plan)
        blocking.record(ctx, key)
        evidence = judged.evidence
        if ctx.notes and judged.verdict != Verdict.PASS:
            evidence.setdefault("notes", ctx.notes)
        if judged.verdict not in (Verdict.PASS, Verdict.SKIP) and "request" not in evidence and ctx.calls:
            evidence.update(ctx.calls[-1].excerpt())
        own = mark if ctx.transcript_mark is None else max(mark, ctx.transcript_mark)
        entries = ctx.attached + transcript.since(own)
        keep = judged.verdict != Verdict.PASS or self.options.keep_transcripts
        return _case_result(
            index,
            check,
            ctx,
            judged.verdict,
            judged.message,
            duration=time.monotonic() - started,
            evidence={**ctx.facts, **evidence},
            transcript=entries if keep else [],
            blocked_by=judged.blocked_by,
            skip=judged.skip if judged.verdict == Verdict.SKIP and judged.blocked_by is None else None,
            judged_at=judged.judged_at if judged.verdict in (Verdict.FAIL, Verdict.WARN) else None,
        )

    async def _judge(self, check: Check, ctx: CaseContext, key: str, plan: blocking.Plan | None) -> Judged:
        """Run the check and read its verdict by the verdict module's rules: a miss is FAIL or WARN by
        the row's level (`--strict` too), an outcome its own verdict, a transport failure ERROR (or
        SKIP blocked by the case that met it first), a harness bug ERROR."""
        if check.capability and not ctx.identity.has(check.capability):
            return Judged(
                Verdict.SKIP,
                f"capability not offered: {check.capability}",
                skip={"kind": "not-applicable"},
            )
        try:
            await check.func(ctx)
        except Outcome as outcome:
            level = requirement(check.requirement).at(ctx.revision).level
            judged = outcome_judged(outcome, level, self.options.strict)
            if isinstance(outcome, Blocked) and outcome.key:
                # An exchange an earlier case met failing (`CaseContext.guard`): that case's verdict
                # stands for it, or this case's does, when that one judged it no defect of its row.
                by = holder_of(ctx.per_target, outcome.key, key)
                if by is None:
                    judged.verdict, judged.message = Verdict.ERROR, f"could not judge: {judged.message}"
                else:
                    judged.blocked(by)
            elif isinstance(outcome, Blocked) and plan is not None:
                by = plan.key_of(outcome.by)
                if by is not None:
                    judged.blocked(by)
            return judged
        except TransportError as exc:
            if exc.sent:  # a request not sent left the session as it was
                ctx.session_broken()
            evidence = {"diagnostics": exc.evidence} if exc.evidence else {}
            # The failure an earlier case met, again: that case holds the verdict (`holder_of`).
            by = holder_of(ctx.per_target, exc.blocked_by, key) if exc.blocked_by else None
            if by is not None:
                return Judged(Verdict.SKIP, f"blocked by {by}: {exc}", evidence, by)
            return Judged(Verdict.ERROR, f"{exc.kind}: {exc}", evidence, raised=exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a harness bug must show, not pass
            message = f"harness error in {check.id}: {exc!r}"
            return Judged(Verdict.ERROR, message, {"traceback": traceback.format_exc(limit=6)})
        level = requirement(check.requirement).at(ctx.revision).level
        return finished_judged(ctx.notes, ctx.should_misses, ctx.warnings, level, self.options.strict)

    def _hand_over(self, judged: Judged, ctx: CaseContext, key: str, plan: blocking.Plan | None) -> None:
        """One defect, one verdict: a case that SKIPped for a failure an earlier case met is blocked by
        the case that holds that failure's verdict; a case whose verdict rests on an answer that broke
        a transport rule is SKIP blocked by the case judging that rule (`blocking.resolve`)."""
        met_before = [case for case in MET.get() or [] if case != key]
        if judged.verdict == Verdict.SKIP and judged.blocked_by is None and met_before:
            by = holder_of(ctx.per_target, met_before[0], key, take=False)
            if by is not None:
                judged.blocked(by)
        judge_key = plan.judge_key if plan is not None else None
        if key != judge_key and judged.blocked_by is None:
            judged.verdict, judged.message, judged.blocked_by = blocking.resolve(
                ctx, judged.verdict, judged.message, judged.raised, judge_key, judged.evidence
            )

    def _unjudged(
        self,
        index: int,
        check: Check,
        ctx: CaseContext,
        message: str,
        entries: list[dict[str, Any]] | None = None,
    ) -> CaseResult:
        """ERROR for a case the target's budget left no time to run (or to finish)."""
        return _case_result(index, check, ctx, Verdict.ERROR, message, transcript=entries or [])


def outcome_judged(outcome: Outcome, level: str, strict: bool) -> Judged:
    """A check's outcome as a verdict by the verdict module's rules: a miss is FAIL or WARN by the
    row's `level` (`--strict` too), any other outcome its own verdict; the SKIP's kind kept (the
    engine names a blocked case's holder itself)."""
    said = None if isinstance(outcome, Missed) else outcome.verdict
    judged = Judged(outcome_verdict(said, level, strict), outcome.message)
    how: Literal["miss", "weak"] = "weak" if isinstance(outcome, Weak) else "miss"
    judged.judged_at = judged_at(level, judged.verdict, how)
    judged.evidence = dict(outcome.evidence)
    if isinstance(outcome, Skipped) and outcome.kind not in ("nothing-to-judge", "blocked"):
        judged.skip = {"kind": outcome.kind, **({"option": outcome.option} if outcome.option else {})}
    return judged


def finished_judged(
    notes: list[str], should_misses: list[str], warnings: list[str], level: str, strict: bool
) -> Judged:
    """A check that returned: PASS with its notes, or WARN (FAIL under `--strict` for a missed SHOULD)
    for the SHOULD-level aspects it missed and the weak evidence it met on the way."""
    verdict = finished_verdict(should_missed=bool(should_misses), weak=bool(warnings), strict=strict)
    if verdict == Verdict.PASS:
        return Judged(verdict, "; ".join(notes))
    at = judged_at(level, verdict, "should" if should_misses else "weak")
    return Judged(verdict, "; ".join(should_misses + warnings), judged_at=at)


def holder_of(shared: TargetShared, met: str, key: str, *, take: bool = True) -> str | None:
    """The case whose verdict stands for a failure first met in case `met`, for case `key` that met it
    again: `met` itself when it ended FAIL or ERROR, else the case that holds it for `met` (a SKIP
    blocked by another, or a case that took it over). None when no case does (`met` judged the failure
    no defect of its row: a tool sweep SKIPs the tools that never answered): then, with `take`, case
    `key` holds it from now on, so the failure is still one verdict, never none."""
    seen: set[str] = set()
    current: str | None = met
    while current is not None and current not in seen and current != key:
        seen.add(current)
        if shared.verdicts.get(current) in (Verdict.FAIL, Verdict.ERROR):
            return current
        current = shared.holders.get(current)
    if take:
        shared.holders[met] = key
    return None


def _probe_info(probe: ProbeResult) -> dict[str, Any]:
    return {"revision": probe.revision, "spoken": probe.spoken, "message": probe.message}


async def run_all(plan: list[tuple[Target, list[Check]]], runner: Runner) -> tuple[list[TargetOutcome], bool]:
    """Run every (target, checks) pair; return outcomes and whether the run completed.

    With `-j 1` targets and revisions run one after another; with more, up to that many probes and
    revisions run at once, each revision over sessions of its own, and the events still come out in
    plan order, so the report is the same whatever `-j` was.
    """
    # Linux: orphans of a target's processes come to the harness, which ends and reaps them on close.
    become_subreaper()
    slots = [runner.ordered.root.child() for _ in plan]
    jobs = [
        runner.run_target(index, target, checks, slots[index]) for index, (target, checks) in enumerate(plan)
    ]
    try:
        outcomes = await runner._each(jobs, runner.options.jobs)
    except asyncio.CancelledError:
        for slot in slots:  # what finished is reported; the rest is cut off
            _close_all(slot)
        runner.ordered.flush()
        runner.events.emit(RunFinished(complete=False, reason="interrupted"))
        return [], False
    runner.events.emit(RunFinished(complete=True))
    return outcomes, True


def _close_all(slot: Slot) -> None:
    slot.closed = True
    for item in slot.items:
        if isinstance(item, Slot):
            _close_all(item)


def _case_result(
    index: int,
    check: Check,
    ctx: CaseContext,
    verdict: Verdict,
    message: str,
    *,
    duration: float = 0.0,
    evidence: dict[str, Any] | None = None,
    transcript: list[dict[str, Any]] | None = None,
    blocked_by: str | None = None,
    skip: dict[str, str] | None = None,
    judged_at: str | None = None,
) -> CaseResult:
    """One case's result: the check's identity and requirement row as its revision reads it (level and
    track), where it ran, and its verdict."""
    row = requirement(check.requirement).at(ctx.revision)
    return row_case(
        check,
        row,
        case_key(check.id, ctx.transport, ctx.revision, index),
        target=index,
        transport=ctx.transport,
        revision=ctx.revision,
        verdict=verdict,
        message=message,
        claimed=claimed(ctx.options, ctx.target, check.suite),
        duration=duration,
        evidence=evidence or {},
        transcript=transcript or [],
        blocked_by=blocked_by,
        skip=skip,
        judged_at=judged_at,
    )


def _says_nothing(options: RunOptions, target: Target, suite: str) -> bool:
    """Whether `suite`, run by default, keeps a target-wide cause to the other packs: an extension's
    pack (apps, tasks) the user did not claim."""
    from conformance.model import packs

    pack = packs.installed().get(suite)
    if pack is None or pack.extension is None:
        return False
    return not claimed(options, target, suite)


def claimed(options: RunOptions, target: Target, suite: str) -> bool:
    """Whether the user claimed the experimental features and extensions of `suite` on `target`:
    `--experimental`, the target's `experimental = true`, or the suite named with `--suite` when it is
    a profile or extension (naming the base protocol's pack claims nothing; an extension's pack that runs
    by default is claimed by naming it all the same)."""
    if options.experimental or target.experimental:
        return True
    from conformance.model import packs

    pack = packs.installed().get(suite)
    if pack is None or pack.extension is not None:
        return suite in options.claimed_suites
    return suite in options.claimed_suites and not pack.default_for_servers


async def _prepared(target: Target, suites: list[str]) -> Target:
    """The target as each chosen suite's `prepare` hook leaves it (credentials added once its URL is
    known). A hook that fails leaves the target unjudged, saying why."""
    from conformance.model import packs

    for suite in suites:
        pack = packs.installed().get(suite)
        if pack is None or pack.prepare is None:
            continue
        try:
            target = await pack.hook(pack.prepare)(target)
        except TargetUnreachable:
            raise
        except Exception as exc:  # a pack's own failure: one line, never a traceback
            raise TargetUnreachable(f"the {suite} suite could not prepare the target: {exc}") from None
    return target

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
from typing import Any, TypeVar

from conformance.adapters.base import TargetUnreachable, Transcript, TransportError
from conformance.adapters.stdio import become_subreaper
from conformance.engine import blocking
from conformance.engine.checks import Blocked, Check, Missed, Outcome
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
from conformance.engine.results import CaseResult, case_key
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
from conformance.protocol.versions import era_of
from conformance.requirements import get as requirement
from conformance.targets import Target
from conformance.verdicts import Verdict, miss_verdict, should_miss_verdict, unscored

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


class Runner:
    def __init__(self, options: RunOptions, events: Fanout) -> None:
        self.options = options
        self.events = events
        self.ordered = OrderedEvents(events)
        self._limit = asyncio.Semaphore(max(1, options.jobs))

    async def _each(self, jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
        """Run jobs in order (one job at a time) or concurrently under the `-j` limit."""
        if self.options.jobs <= 1:
            try:
                return [await job for job in jobs]
            finally:  # cancelled (Ctrl-C) part-way: the jobs never started are dropped, not left unawaited
                for job in jobs:
                    job.close()
        return list(await asyncio.gather(*jobs))

    async def run_target(self, index: int, target: Target, checks: list[Check], slot: Slot) -> TargetOutcome:
        # Both budgets are settled once, on the target, so that every session (probes, restarts,
        # fresh ones, a suite's own) and every check reads the same figures.
        request = target.request_timeout or self.options.timeout
        start = target.start_timeout or self.options.start_timeout
        budget = target.target_budget or self.options.target_budget
        # The target's wall time is counted from here: launching and probing spend it too.
        deadline = time.monotonic() + budget
        target = target.with_budgets(request, start)
        options = dataclasses.replace(self.options, timeout=request)
        # With -j 1 one server process starts at a time, and none is booted ahead of its case.
        START_GATE.set(asyncio.Semaphore(1) if self.options.jobs <= 1 else None)
        masker = Transcript(target.secrets)
        transcript = Transcript(target.secrets)
        outcome = TargetOutcome(index)
        info: dict[str, Any] = {
            "index": index,
            "spec": target.describe(),
            "transport": target.kind,
            "timeouts": {"request": request, "start": start, "target": budget},
        }
        self.ordered.emit(slot, TargetStarted(index, masker.mask_value(info)))
        suites = sorted({c.suite for c in checks})
        info["suites"] = suites
        try:
            async with launched(target, transcript) as live:
                info["url"] = live.url or None
                live = await _prepared(live, suites)
                if live.secrets != target.secrets:  # a pack's credentials: masked from here on
                    transcript.masker = Transcript(live.secrets).masker
                    masker = Transcript(live.secrets)
                target = dataclasses.replace(
                    target, headers=live.headers, secrets=live.secrets, settings=live.settings
                )
                revisions = default_revisions(self.options.protocol)
                per_target = TargetShared()
                assigned_once: set[str] = set()
                assigned_suites: set[str] = set()
                pools: list[SessionPool] = []

                def revision_job(probe: ProbeResult, wire: Transcript) -> Coroutine[Any, Any, None]:
                    """The job running one spoken revision's cases, on its probe's session."""
                    assert probe.session is not None
                    info.setdefault("server_info", probe.session.identity.server_info)
                    era = era_of(probe.revision)
                    # A `once` check runs on the first spoken revision it applies to, whatever `-j` is.
                    chosen = [
                        c
                        for c in checks
                        if c.applies(era, target.kind, probe.revision)
                        and not (c.once and c.id in assigned_once)
                    ]
                    assigned_once.update(c.id for c in chosen if c.once)
                    assigned_suites.update(c.suite for c in chosen)
                    pool = SessionPool(
                        live,
                        probe.revision,
                        wire,
                        options.timeout,
                        self.options.max_restarts,
                    )
                    pools.append(pool)
                    pool.adopt(probe.session)
                    if self.options.jobs > 1:
                        pool.prewarm(sum(c.fresh_sessions for c in chosen))
                    return self._run_revision(
                        index,
                        live,
                        probe,
                        pool,
                        outcome.spoken,
                        chosen,
                        slot.child(),
                        options,
                        per_target,
                        (deadline, budget),
                    )

                try:
                    if probes_in_turn(live, self.options.jobs):
                        # Each revision probed just before its cases, which continue on its process:
                        # one server process at a time, and none started twice for one revision.
                        prober = Prober(live, request, start)
                        probed: list[tuple[ProbeResult, Transcript]] = []
                        for revision in revisions:
                            probe_transcript = Transcript(target.secrets)
                            async with self._limit:
                                probe = await prober.one(revision, probe_transcript)
                            probed.append((probe, probe_transcript))
                            if probe.spoken:
                                outcome.spoken.append(probe.revision)
                                await revision_job(probe, probe_transcript)
                    else:
                        async with self._limit:
                            probed = await probe_all(live, revisions, request, start, self.options.jobs)
                        outcome.spoken[:] = [p.revision for p, _ in probed if p.spoken]
                        # Every revision's pool exists (and boots its spares) before the first case
                        # runs, so a later revision's spare starts while the earlier ones are judged.
                        jobs = [revision_job(p, t) for p, t in probed if p.session is not None]
                        await self._each(jobs)
                finally:  # a revision that never ran must not leave its processes behind
                    await asyncio.gather(*(p.close() for p in pools), return_exceptions=True)
                probes = [p for p, _ in probed]
                info["probe"] = [_probe_info(p) for p in probes]
                info["revisions_spoken"] = outcome.spoken
                if not outcome.spoken:
                    unjudged = unjudged_reason(probes)
                    outcome.unreachable = unjudged is None and all(
                        p.unreachable or not p.call for p in probes
                    )
                    entries = [e for _, t in probed for e in t.entries]
                    self._report_unopened(index, target, probes, entries, suites, slot, unjudged)
                self._report_too_new(index, target, checks, outcome.spoken, assigned_suites, slot)
        except TargetUnreachable as exc:
            outcome.unreachable = True
            info["unreachable"] = str(exc)
            for suite in suites:
                self._emit_connect_error(
                    index, target, suite, str(exc), exc.evidence, transcript.entries, slot
                )
        info["unreachable"] = info.get("unreachable") or outcome.unreachable
        self.ordered.emit(slot, TargetFinished(index, masker.mask_value(info)))
        self.ordered.close(slot)
        return outcome

    def _report_too_new(
        self,
        index: int,
        target: Target,
        checks: list[Check],
        spoken: list[str],
        assigned: set[str],
        slot: Slot,
    ) -> None:
        """SKIP, saying why, each chosen suite that judges none of the revisions the server speaks; an
        extension's pack that runs by default and was not named says nothing there (the tasks extension
        is 2026-07-28's: a SKIP on every server that speaks older revisions would be noise, not news)."""
        from conformance import packs

        for suite in sorted({c.suite for c in checks} - assigned):
            pack = packs.installed().get(suite)
            first = pack.since if pack is not None else None
            if not spoken or first is None or any(r >= first for r in spoken):
                continue
            if pack is not None and pack.extension is not None and suite not in self.options.claimed_suites:
                continue
            message = (
                f"not judged: the {suite} suite binds MCP {first} and later, and the server speaks only "
                f"{', '.join(spoken)}"
            )
            self._emit(
                index,
                target,
                suite,
                CONNECT_CHECK,
                CONNECT_REQUIREMENT,
                "",
                Verdict.SKIP,
                message,
                {},
                [],
                slot,
            )

    def _report_unopened(
        self,
        index: int,
        target: Target,
        probes: list[ProbeResult],
        entries: list[dict[str, Any]],
        suites: list[str],
        slot: Slot,
        unjudged: str | None = None,
    ) -> None:
        if unjudged is not None:
            # It negotiated correctly, in no revision the harness can judge here: SKIP, saying why.
            for suite in suites:
                self._emit(
                    index, target, suite, CONNECT_CHECK, CONNECT_REQUIREMENT, "", Verdict.SKIP, unjudged, {},
                    entries[-40:], slot,
                )  # fmt: skip
            return
        lines = [f"{p.revision}: {p.message}" for p in probes]
        evidence = "\n".join(p.evidence for p in probes if p.evidence)[-4000:]
        tail = [line for line in evidence.splitlines() if line.strip() and not line.startswith("exit status")]
        if tail:
            lines.append(f"last stderr line: {tail[-1].strip()[:200]}")
        for suite in suites:
            if any(p.call is not None for p in probes) and not any(p.unreachable for p in probes):
                # It answered but refused every revision tried: that is a verdict, not an outage.
                self._emit(
                    index,
                    target,
                    suite,
                    CONNECT_CHECK,
                    CONNECT_REQUIREMENT,
                    "",
                    Verdict.FAIL,
                    "the server accepted none of the revisions tried:\n" + "\n".join(lines),
                    {"why": evidence},
                    entries[-40:],
                    slot,
                )
            else:
                self._emit_connect_error(index, target, suite, "\n".join(lines), evidence, entries, slot)

    def _emit_connect_error(
        self,
        index: int,
        target: Target,
        suite: str,
        message: str,
        evidence: str,
        entries: list[dict[str, Any]],
        slot: Slot,
    ) -> None:
        self._emit(
            index,
            target,
            suite,
            CONNECT_CHECK,
            CONNECT_REQUIREMENT,
            "",
            Verdict.ERROR,
            "the target could not be reached: " + message,
            {"diagnostics": evidence},
            entries[-40:],
            slot,
        )

    def _emit(
        self,
        index: int,
        target: Target,
        suite: str,
        check_id: str,
        req_id: str,
        revision: str,
        verdict: str,
        message: str,
        evidence: dict[str, Any],
        entries: list[dict[str, Any]],
        slot: Slot,
    ) -> None:
        from conformance import packs

        req = requirement(req_id).at(revision)
        full_id = f"{suite}.{check_id}"
        # A case of an extension's pack (its connect case too) counts only when the extension is claimed.
        pack = packs.installed().get(suite)
        track = "extension" if pack is not None and pack.extension is not None else req.track
        self._finished(
            target,
            CaseResult(
                key=case_key(full_id, target.kind, revision or "any", index),
                check=full_id,
                suite=suite,
                requirement=req_id,
                level=req.level,
                title=req.title,
                target=index,
                transport=target.kind,
                revision=revision or "any",
                verdict=verdict,
                message=message,
                duration=0.0,
                evidence=evidence,
                transcript=entries,
                official=list(req.official_checks) or None,
                unscored=unscored(track, claimed(self.options, target, suite)),
            ),
            slot,
        )

    def _finished(self, target: Target, result: CaseResult, slot: Slot) -> None:
        """Emit a case with secrets masked in everything built from server text (messages, evidence)."""
        masker = Transcript(target.secrets)
        result.message = masker.mask(result.message)
        result.evidence = masker.mask_value(result.evidence)
        self.ordered.emit(slot, CaseFinished(result))

    async def _run_revision(
        self,
        index: int,
        target: Target,
        probe: ProbeResult,
        pool: SessionPool,
        spoken: list[str],
        checks: list[Check],
        slot: Slot,
        options: RunOptions,
        per_target: TargetShared,
        budget: tuple[float, float],
    ) -> None:
        """Run the chosen checks on one revision, in order, over one shared (restartable) session.

        `budget` is the target's (deadline, seconds): once the deadline has passed, a running case is
        cut short and every case not yet run is ERROR at once, saying the budget was spent.
        """
        deadline, seconds = budget
        revision = probe.revision
        era = era_of(revision)
        transcript = pool.transcript
        assert probe.session is not None
        identity = probe.session.identity
        shared: dict[str, Any] = {"spoken": spoken}
        plan = blocking.Plan(index, target.kind, revision, frozenset(c.id for c in checks))
        try:
            async with self._limit if self.options.jobs > 1 else contextlib.nullcontext():
                settled = False
                for check in blocking.judge_last(checks, target.kind):
                    if check.last and not settled:
                        settled = True  # the log the last checks read holds all the server sent
                        await pool.settle()
                    ctx = CaseContext(
                        target,
                        revision,
                        era,
                        target.kind,
                        identity,
                        pool,
                        options,
                        shared,
                        spares_allowed=check.fresh_sessions > 0,
                        per_target=per_target,
                    )
                    spent = f"the target's budget of {seconds:g} s was spent (--target-budget)"
                    if time.monotonic() >= deadline:
                        self._finished(target, self._unjudged(index, check, ctx, f"not run: {spent}"), slot)
                        continue
                    mark, began = transcript.mark(), time.monotonic()
                    token = CURRENT_CASE.set(check.id)
                    key_token = CURRENT_KEY.set(case_key(check.id, target.kind, revision, index))
                    met_token = MET.set([])
                    try:
                        async with asyncio.timeout_at(deadline):
                            result = await self._run_case(index, check, ctx, transcript, plan)
                    except TimeoutError:
                        ctx.session_broken()  # cut mid-exchange: its answer may still come
                        result = self._unjudged(
                            index, check, ctx, f"not finished: {spent}", transcript.since(mark)
                        )
                        result.duration = time.monotonic() - began
                    finally:  # after the case's wire log is cut: closing is no part of its evidence
                        CURRENT_CASE.reset(token)
                        CURRENT_KEY.reset(key_token)
                        MET.reset(met_token)
                        await ctx.close()
                    per_target.verdicts[result.key] = result.verdict
                    if result.blocked_by:
                        per_target.holders.setdefault(result.key, result.blocked_by)
                    self._finished(target, result, slot)
        finally:
            await pool.close()
            self.ordered.close(slot)

    async def _run_case(
        self,
        index: int,
        check: Check,
        ctx: CaseContext,
        transcript: Transcript,
        plan: blocking.Plan | None = None,
    ) -> CaseResult:
        """Run one check; `plan` (the revision's checks) lets a blocked case name its blocking case."""
        req = requirement(check.requirement).at(ctx.revision)
        mark = transcript.mark()
        started = time.monotonic()
        evidence: dict[str, Any] = {}
        raised: TransportError | None = None
        blocked_by: str | None = None
        key = case_key(check.id, ctx.transport, ctx.revision, index)
        verdict: str
        if check.capability and not ctx.identity.has(check.capability):
            verdict, message = Verdict.SKIP, f"capability not offered: {check.capability}"
        else:
            try:
                await check.func(ctx)
            except Outcome as outcome:
                if isinstance(outcome, Missed) or outcome.verdict is None:
                    verdict = miss_verdict(req.level, self.options.strict)
                else:
                    verdict = outcome.verdict
                message, evidence = outcome.message, dict(outcome.evidence)
                if isinstance(outcome, Blocked) and outcome.key:
                    # An exchange an earlier case met failing (`CaseContext.guard`): that case's verdict
                    # stands for it, or this case's does, when that one judged it no defect of its row.
                    blocked_by = holder_of(ctx.per_target, outcome.key, key)
                    if blocked_by is None:
                        verdict, message = Verdict.ERROR, f"could not judge: {message}"
                elif isinstance(outcome, Blocked) and plan is not None:
                    blocked_by = plan.key_of(outcome.by)
                if blocked_by is not None:
                    message = f"blocked by {blocked_by}: {message}"
            except TransportError as exc:
                if exc.sent:  # a request not sent left the session as it was
                    ctx.session_broken()
                evidence = {"diagnostics": exc.evidence} if exc.evidence else {}
                # The failure an earlier case met, again: that case holds the verdict (`holder_of`).
                blocked_by = holder_of(ctx.per_target, exc.blocked_by, key) if exc.blocked_by else None
                if blocked_by is not None:
                    verdict, message = Verdict.SKIP, f"blocked by {blocked_by}: {exc}"
                else:
                    verdict, message = Verdict.ERROR, f"{exc.kind}: {exc}"
                    raised = exc
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a harness bug must show, not pass
                verdict, message = Verdict.ERROR, f"harness error in {check.id}: {exc!r}"
                evidence = {"traceback": traceback.format_exc(limit=6)}
            else:
                if (
                    ctx.should_misses or ctx.warnings
                ):  # `--strict`: a missed SHOULD FAILs, weak evidence WARNs
                    verdict = should_miss_verdict(self.options.strict) if ctx.should_misses else Verdict.WARN
                    message = "; ".join(ctx.should_misses + ctx.warnings)
                else:
                    verdict, message = Verdict.PASS, "; ".join(ctx.notes)
        met_before = [case for case in MET.get() or [] if case != key]
        if verdict == Verdict.SKIP and blocked_by is None and met_before:
            # The check caught a failure an earlier case met and SKIPped for it: blocked by the case
            # that holds that failure's verdict, if one does.
            blocked_by = holder_of(ctx.per_target, met_before[0], key, take=False)
            message = f"blocked by {blocked_by}: {message}" if blocked_by else message
        judge_key = plan.judge_key if plan is not None else None
        if key != judge_key and blocked_by is None:
            verdict, message, blocked_by = blocking.resolve(
                ctx, verdict, message, raised, judge_key, evidence
            )
        blocking.record(ctx, key)
        if ctx.notes and verdict != Verdict.PASS:
            evidence.setdefault("notes", ctx.notes)
        if verdict not in (Verdict.PASS, Verdict.SKIP) and "request" not in evidence and ctx.calls:
            evidence.update(ctx.calls[-1].excerpt())
        evidence = {**ctx.facts, **evidence}
        own = mark if ctx.transcript_mark is None else max(mark, ctx.transcript_mark)
        entries = ctx.attached + transcript.since(own)
        return _case_result(
            index,
            check,
            ctx,
            Verdict(verdict),
            message,
            duration=time.monotonic() - started,
            evidence=evidence,
            transcript=entries if verdict != Verdict.PASS or self.options.keep_transcripts else [],
            blocked_by=blocked_by,
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
        outcomes = await runner._each(jobs)
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
) -> CaseResult:
    """One case's result: the check's identity and requirement row as its revision reads it (level and
    track), where it ran, and its verdict."""
    row = requirement(check.requirement).at(ctx.revision)
    return CaseResult(
        key=case_key(check.id, ctx.transport, ctx.revision, index),
        check=check.id,
        suite=check.suite,
        requirement=check.requirement,
        level=row.level,
        title=check.title,
        target=index,
        transport=ctx.transport,
        revision=ctx.revision,
        verdict=verdict,
        message=message,
        duration=duration,
        evidence=evidence or {},
        transcript=transcript or [],
        blocked_by=blocked_by,
        unscored=unscored(row.track, claimed(ctx.options, ctx.target, check.suite)),
        official=list(row.official_checks) or None,
    )


def claimed(options: RunOptions, target: Target, suite: str) -> bool:
    """Whether the user claimed the experimental features and extensions of `suite` on `target`:
    `--experimental`, the target's `experimental = true`, or the suite named with `--suite` when it is
    a profile or extension (naming the base protocol's pack claims nothing; an extension's pack that runs
    by default is claimed by naming it all the same)."""
    if options.experimental or target.experimental:
        return True
    from conformance import packs

    pack = packs.installed().get(suite)
    if pack is None or pack.extension is not None:
        return suite in options.claimed_suites
    return suite in options.claimed_suites and not pack.default_for_servers


async def _prepared(target: Target, suites: list[str]) -> Target:
    """The target as each chosen suite's `prepare` hook leaves it (credentials added once its URL is
    known). A hook that fails leaves the target unjudged, saying why."""
    from conformance import packs

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

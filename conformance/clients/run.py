"""A client run: every (scenario, transport, revision) of the plan played against the client under
test, each judged by the pack's checks, into the canonical report the servers' runs write.

Why its own runner: a server run probes one target and runs checks against its session; a client run
starts the client once per scenario and judges what it recorded afterwards. The verdict rules are the
engine's (`model.verdicts`: a miss is FAIL or WARN by the row's level, `--strict` too), the cases the
engine's (`engine.results.CaseResult`) and the report the engine's (`reporting.canonical`, fed the
engine's events), so every view, baseline and exit code reads a client run as it reads a server's.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.clients.checks import EVERY_SCENARIO, ClientCheck, ClientContext, checks_of, scenarios_of
from conformance.clients.launch import Contract, Exit, contract, relay_address, run_client
from conformance.clients.scenario import Scenario, ScenarioSession
from conformance.clients.serve import Served
from conformance.clients.wire import Recording
from conformance.engine.checks import Blocked, Missed, Outcome, Skipped, Weak
from conformance.engine.events import CaseFinished, Fanout, RunFinished, TargetFinished, TargetStarted
from conformance.engine.results import CaseResult, case_key, row_case
from conformance.model.requirements import get as requirement
from conformance.model.verdicts import Verdict, finished_verdict, judged_at, outcome_verdict
from conformance.protocol.versions import era_of

#: The revisions a client run plays by default: the official suite's two frozen sets, and 2024-11-05
#: for the legacy HTTP+SSE transport.
DEFAULT_REVISIONS = ("2024-11-05", "2025-11-25", "2026-07-28")
DEFAULT_TRANSPORTS = ("http", "sse", "stdio")


@dataclass(frozen=True)
class ClientOptions:
    """What a client run was asked for (the `client` command's options)."""

    command: str
    scenarios: tuple[str, ...] = ()
    transports: tuple[str, ...] = DEFAULT_TRANSPORTS
    revisions: tuple[str, ...] = DEFAULT_REVISIONS
    jobs: int = 1
    #: Seconds the client may take per scenario before it is killed.
    timeout: float = 20.0
    strict: bool = False
    #: The client's experimental features and extensions claimed (`--experimental`): their rows'
    #: FAILs fail the run; unclaimed, they show their verdicts and fail none.
    experimental: bool = False
    keep_transcripts: bool = False
    #: Extra environment for the client (a target file's table's `env`); the contract's own wins.
    env: Mapping[str, str] = field(default_factory=dict)


def speaks(transport: str, revision: str) -> bool:
    """Whether a client is met over `transport` at `revision`: HTTP+SSE is 2024-11-05's HTTP transport
    (and the earlier revisions' fallback), Streamable HTTP came with 2025-03-26, stdio is in every one."""
    if transport == "sse":
        return revision == "2024-11-05"
    if transport == "http":
        return revision != "2024-11-05"
    return True


@dataclass(frozen=True)
class Job:
    """One scenario played once: its class, where, and the checks that judge it (contract first)."""

    scenario: type[Scenario]
    transport: str
    revision: str
    checks: tuple[ClientCheck, ...]
    target: int


def plan(packs: Sequence[str], options: ClientOptions) -> list[Job]:
    """The jobs of a run, in report order: transport, then revision, then scenario."""
    jobs = []
    for target, transport in enumerate(options.transports):
        for revision in options.revisions:
            if not speaks(transport, revision):
                continue
            for pack in packs:
                jobs += _pack_jobs(pack, transport, revision, options, target)
    return jobs


def _pack_jobs(pack: str, transport: str, revision: str, options: ClientOptions, target: int) -> list[Job]:
    checks = checks_of(pack)
    jobs = []
    for name, cls in scenarios_of(pack).items():
        if options.scenarios and name not in options.scenarios:
            continue
        if revision not in cls.revisions or transport not in cls.transports:
            continue
        mine = [c for c in checks if c.scenario in (name, EVERY_SCENARIO)]
        mine = [c for c in mine if c.check.applies(era_of(revision), transport, revision)]
        mine.sort(key=lambda c: c.scenario != EVERY_SCENARIO)
        if len(mine) > 1:
            jobs.append(Job(cls, transport, revision, tuple(mine), target))
    return jobs


async def play(job: Job, options: ClientOptions) -> tuple[Scenario, Exit]:
    """Serve the scenario, run the client against it, and close the server once the client is done."""
    played = job.scenario(job.revision, job.transport, Recording())
    served = Served(ScenarioSession(played), job.transport)
    await served.start()
    try:
        address = relay_address(served.port) if job.transport == "stdio" else served.url()
        given = contract(played.name, job.revision, job.transport, address, played.context)
        given = Contract(given.address, {**options.env, **given.env})
        played.recording.event(f"client started: {options.command} {address}")
        ended = await run_client(options.command, given, options.timeout)
        played.recording.event(ended.describe())
    finally:
        await served.close()
    return played, ended


@dataclass
class Judged:
    verdict: Verdict
    message: str
    evidence: dict[str, Any]
    blocked_by: str | None = None
    judged_at: str | None = None


async def _judge(item: ClientCheck, ctx: ClientContext, options: ClientOptions) -> Judged:
    """Run one check by the verdict module's rules, as the engine's runner reads a server check."""
    level = requirement(item.check.requirement).at(ctx.revision).level
    try:
        await item.func(ctx)
    except Outcome as outcome:
        said = None if isinstance(outcome, Missed) else outcome.verdict
        verdict = outcome_verdict(said, level, options.strict)
        judged = Judged(verdict, outcome.message, dict(outcome.evidence))
        judged.judged_at = judged_at(level, verdict, "weak" if isinstance(outcome, Weak) else "miss")
        if isinstance(outcome, Blocked):
            judged.blocked_by = outcome.by  # a check of this scenario run: its key is made by `_case`
        elif isinstance(outcome, Skipped):
            judged.judged_at = None
        return judged
    except Exception as exc:  # a harness bug must show, not pass
        tb = {"traceback": traceback.format_exc(limit=6)}
        return Judged(Verdict.ERROR, f"harness error in {item.check.id}: {exc!r}", tb)
    verdict = finished_verdict(
        should_missed=bool(ctx.should_misses), weak=bool(ctx.warnings), strict=options.strict
    )
    if verdict == Verdict.PASS:
        return Judged(verdict, "; ".join(ctx.notes), {})
    at = judged_at(level, verdict, "should" if ctx.should_misses else "weak")
    return Judged(verdict, "; ".join(ctx.should_misses + ctx.warnings), {}, judged_at=at)


def client_case_key(check_id: str, job: Job) -> str:
    """A case's key: the engine's (check, transport, revision, target) and the scenario it judged, as
    one check (the contract's) judges every scenario."""
    return f"{case_key(check_id, job.transport, job.revision, job.target)}/{job.scenario.name}"


def _case(
    item: ClientCheck, job: Job, judged: Judged, played: Scenario, options: ClientOptions, duration: float
) -> CaseResult:
    row = requirement(item.check.requirement).at(job.revision)
    keep = options.keep_transcripts or judged.verdict != Verdict.PASS
    entries = played.recording.transcript.entries if keep else []
    evidence = {"scenario": played.name, **judged.evidence}
    case = row_case(
        item.check,
        row,
        client_case_key(item.check.id, job),
        target=job.target,
        transport=job.transport,
        revision=job.revision,
        verdict=judged.verdict,
        message=judged.message,
        claimed=options.experimental,
        duration=duration,
        evidence=evidence,
        transcript=list(entries),
        blocked_by=client_case_key(judged.blocked_by, job) if judged.blocked_by else None,
        judged_at=judged.judged_at,
    )
    if played.unscored_track and case.unscored is None and not options.experimental:
        return replace(case, unscored=played.unscored_track)  # its scenario is unscored as a whole
    return case


async def judge(job: Job, played: Scenario, ended: Exit, options: ClientOptions) -> list[CaseResult]:
    """The cases of one played scenario: the contract's first, then the scenario's checks."""
    contract_item, rest = job.checks[0], job.checks[1:]
    ctx = ClientContext(played, ended, Verdict.PASS, contract_item.check.id)
    started = time.monotonic()
    first = await _judge(contract_item, ctx, options)
    cases = [_case(contract_item, job, first, played, options, time.monotonic() - started)]
    for item in rest:
        started = time.monotonic()
        ctx = ClientContext(played, ended, first.verdict, contract_item.check.id)
        judged = await _judge(item, ctx, options)
        cases.append(_case(item, job, judged, played, options, time.monotonic() - started))
    return cases


def target_info(index: int, transport: str, options: ClientOptions, jobs: list[Job]) -> dict[str, Any]:
    """A client run's target: the client over one transport, and the revisions it was played at."""
    played = {job.revision for job in jobs if job.transport == transport}
    return {
        "index": index,
        "spec": f"client: {options.command}",
        "transport": transport,
        "side": "client",
        "command": options.command,
        "revisions_spoken": [r for r in options.revisions if r in played],
    }


async def run_jobs(jobs: list[Job], options: ClientOptions, events: Fanout) -> None:
    """Play and judge every job (up to `options.jobs` at once); cases are emitted in plan order."""
    gate = asyncio.Semaphore(max(1, options.jobs))

    async def one(job: Job) -> list[CaseResult]:
        async with gate:
            played, ended = await play(job, options)
        return await judge(job, played, ended, options)

    for index, transport in enumerate(options.transports):
        events.emit(TargetStarted(index, target_info(index, transport, options, jobs)))
    tasks = [asyncio.create_task(one(job)) for job in jobs]
    try:
        for task in tasks:
            for case in await task:
                events.emit(CaseFinished(case))
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        events.emit(RunFinished(complete=False, reason="interrupted"))
        raise
    for index, transport in enumerate(options.transports):
        events.emit(TargetFinished(index, target_info(index, transport, options, jobs)))
    events.emit(RunFinished(complete=True))

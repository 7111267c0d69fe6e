"""Runs the checks of a pack that judges an OAuth authorization server (`Pack.side`) against an
issuer URL, feeding the same events, report and views as `run` does.

Why its own runner: an authorization server speaks no MCP, so there is nothing to probe and no session
to share; what a check needs is plain HTTP to the issuer, recorded byte for byte, and facts its
revision's cases share (the metadata, a code grant). Verdicts are read by the runner's own rules
(`runner.outcome_judged`, `runner.finished_judged`), so a miss is FAIL or WARN by the row's level, and a
`blocked` SKIP names the case of its revision that holds the defect.
"""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from conformance.adapters.transcript import Transcript
from conformance.engine.checks import Blocked, Check, CheckFunc, Outcome, check
from conformance.engine.context import RunOptions
from conformance.engine.events import CaseFinished, Fanout, RunFinished, TargetFinished, TargetStarted
from conformance.engine.results import CaseResult, case_key, row_case
from conformance.engine.runner import (
    CONNECT_CHECK,
    CONNECT_REQUIREMENT,
    Judged,
    finished_judged,
    outcome_judged,
)
from conformance.model.requirements import get as requirement
from conformance.model.verdicts import Verdict
from conformance.protocol.versions import TESTED_REVISIONS
from conformance.text import bytes_text, masker

if TYPE_CHECKING:  # httpx loads when a run starts: `list` rebuilding its catalog stays light
    import httpx

T = TypeVar("T")
#: The transport every case of such a pack is recorded under (the report's transports are MCP's).
TRANSPORT = "http"
#: How much of a body an exchange's evidence shows.
EVIDENCE_BODY_CHARS = 2000
#: Members of a JSON answer, and parameters of a redirect, that carry live credentials: masked.
CREDENTIALS = (
    "access_token",
    "refresh_token",
    "id_token",
    "code",
    "client_secret",
    "registration_access_token",
)

IssuerCheckFunc = Callable[["IssuerContext"], Awaitable[None]]


def issuer_check(check_id: str, requirement_id: str, title: str, **options: Any) -> Callable[[T], T]:
    """Register an issuer check (`async def f(ctx: IssuerContext)`): recorded as an HTTP check, so
    `list`, `explain` and `coverage` show it like any other."""

    def register(func: T) -> T:
        check(check_id, requirement_id, title, transports=(TRANSPORT,), **options)(cast(CheckFunc, func))
        return func

    return register


@dataclass(frozen=True)
class IssuerTarget:
    """An authorization server under test: its issuer identifier and what its checks are given (the
    client to use, the resource to ask for, ...: `settings`), with the secrets to mask."""

    issuer: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    #: What the report calls it (the issuer, or that it is the embedded reference).
    spec: str = ""


@dataclass
class Exchange:
    """One HTTP request and its answer, as sent and received."""

    method: str
    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    sent: bytes = b""

    def json(self) -> Any:
        """The body as JSON, or None when it is none."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def excerpt(self) -> dict[str, Any]:
        """The exchange as a case's evidence shows it (masked again by the report)."""
        return {
            "request": f"{self.method} {self.url}",
            "http_status": self.status,
            "content_type": self.content_type,
            "body": bytes_text(self.body[:EVIDENCE_BODY_CHARS]),
        }


class IssuerContext:
    """All a check sees of a run against an authorization server: the issuer, the settings, HTTP that
    is recorded, and what the revision's cases share (`remember_once`)."""

    def __init__(self, run: IssuerRun, revision: str, check_id: str, shared: dict[str, Any]) -> None:
        self.run = run
        self.issuer = run.target.issuer
        self.settings = run.target.settings
        self.revision = revision
        self.check_id = check_id
        self.shared = shared
        self.options = run.options
        self.notes: list[str] = []
        self.should_misses: list[str] = []
        self.warnings: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def miss_should(self, text: str) -> None:
        """A SHOULD-level aspect of the row missed; the case goes on (WARN, `--strict` FAIL)."""
        self.should_misses.append(text)

    def soft_warn(self, text: str) -> None:
        """Met on weak evidence (WARN, also under `--strict`)."""
        self.warnings.append(text)

    @property
    def target_memo(self) -> dict[str, Any]:
        """Facts of the target across its revisions (a server the checks started, say)."""
        return self.run.memo

    def on_close(self, closer: Callable[[], Any]) -> None:
        """Call `closer` when the target's cases are done (stop what a check started)."""
        self.run.closers.append(closer)

    async def http(self, method: str, url: str, **kwargs: Any) -> Exchange:
        """Send one request (never following a redirect) and record both sides in the wire log; the
        credentials an answer carries are masked from then on. A failure to connect raises
        httpx.HTTPError, which the check turns into its finding or lets end the case as ERROR."""
        return await self.run.send(method, url, **kwargs)

    async def remember_once(self, key: str, owner: str, factory: Callable[[], Awaitable[T]]) -> T:
        """A fact of this revision computed once, by whichever case asks first. When computing it
        failed with a check's outcome, a later case asking is SKIP blocked by `owner` (the check whose
        row that failure is), so one defect stays one verdict."""
        if key not in self.shared:
            try:
                self.shared[key] = ("value", await factory())
            except Outcome as exc:
                self.shared[key] = ("failed", exc)
                raise
        kind, value = self.shared[key]
        if kind == "failed":
            # A fact that failed because another fact it needed did keeps naming that one's case.
            raise value if isinstance(value, Blocked) else Blocked(f"{key}: {value.message}", owner)
        return cast(T, value)


class IssuerRun:
    """One target's run: its HTTP client, its wire log, and what its checks started."""

    def __init__(self, index: int, target: IssuerTarget, options: RunOptions) -> None:
        self.index = index
        self.target = target
        self.options = options
        self.transcript = Transcript(target.secrets)
        self.secrets: list[str] = list(target.secrets)
        self.memo: dict[str, Any] = {}
        self.closers: list[Callable[[], Any]] = []
        import httpx

        self.client = httpx.AsyncClient(timeout=options.timeout, follow_redirects=False)

    async def send(self, method: str, url: str, **kwargs: Any) -> Exchange:
        request = self.client.build_request(method, url, **kwargs)
        sent = request.read()
        self.transcript.record("send", sent, channel=f"{method} {url}", headers=dict(request.headers))
        response = await self.client.send(request)
        body = await response.aread()
        await response.aclose()
        exchange = Exchange(method, url, response.status_code, response.headers, body, sent)
        self._learn_credentials(exchange)
        self.transcript.record(
            "recv", body, channel=f"HTTP {response.status_code}", status=response.status_code,
            headers=dict(response.headers),
        )  # fmt: skip
        return exchange

    def _learn_credentials(self, exchange: Exchange) -> None:
        """Mask from now on the live credentials an answer carries (tokens, codes, a client secret)."""
        import httpx

        found: list[Any] = []
        data = exchange.json()
        if isinstance(data, dict):
            found += [data.get(name) for name in CREDENTIALS]
        location = httpx.URL(exchange.headers.get("location", "")).params
        found += [location.get(name) for name in CREDENTIALS]
        fresh = [v for v in found if isinstance(v, str) and len(v) >= 8 and v not in self.secrets]
        if fresh:
            self.secrets += fresh
            self.transcript.masker = masker(tuple(self.secrets))

    async def close(self) -> None:
        for closer in reversed(self.closers):
            try:
                done = closer()
                if asyncio.iscoroutine(done):
                    await done
            except Exception:  # a closer's failure must not hide the run's verdicts
                continue
        await self.client.aclose()


def revisions_of(protocol: str, checks: list[Check]) -> list[str]:
    """The revisions to judge: every one some check applies to (`auto`), or the one named."""
    wanted = sorted(TESTED_REVISIONS) if protocol == "auto" else [protocol]
    return [r for r in wanted if any(c.revisions is None or r in c.revisions for c in checks)]


async def run_issuers(
    targets: list[IssuerTarget], checks: list[Check], options: RunOptions, events: Fanout
) -> None:
    """Run every check on every revision of every target, in order, and finish the run."""
    for index, target in enumerate(targets):
        await _run_target(index, target, checks, options, events)
    events.emit(RunFinished(complete=True))


async def _run_target(
    index: int, target: IssuerTarget, checks: list[Check], options: RunOptions, events: Fanout
) -> None:
    info: dict[str, Any] = {"index": index, "spec": target.spec or target.issuer, "transport": TRANSPORT}
    events.emit(TargetStarted(index, dict(info)))
    run = IssuerRun(index, target, options)
    revisions = revisions_of(options.protocol, checks)
    try:
        unreachable = await _unreachable(run, sorted({c.suite for c in checks}))
        if unreachable:
            info.update(url=target.issuer, unreachable=unreachable)
            revisions = []
            for case in _connect_errors(run, sorted({c.suite for c in checks}), unreachable):
                events.emit(CaseFinished(case))
        for revision in revisions:
            shared: dict[str, Any] = {}
            for chosen in (c for c in checks if c.revisions is None or revision in c.revisions):
                events.emit(CaseFinished(await _run_case(run, chosen, revision, shared)))
    finally:
        await run.close()
    info.update(url=target.issuer, revisions_spoken=revisions)
    info["timeouts"] = {"request": options.timeout, "start": options.start_timeout}
    events.emit(TargetFinished(index, info))


async def _unreachable(run: IssuerRun, suites: list[str]) -> str:
    """Why the issuer's host cannot be reached at all (nothing answers), or empty when it can: then
    one connect ERROR per suite says so and nothing is judged (exit 3), instead of an ERROR per case."""
    import httpx

    try:
        await run.client.request("GET", run.target.issuer)
    except httpx.TransportError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ""


def _connect_errors(run: IssuerRun, suites: list[str], why: str) -> list[CaseResult]:
    row = requirement(CONNECT_REQUIREMENT).at("")
    message = f"the target could not be reached: {why}"
    return [
        CaseResult(
            key=case_key(f"{suite}.{CONNECT_CHECK}", TRANSPORT, "any", run.index),
            check=f"{suite}.{CONNECT_CHECK}",
            suite=suite,
            requirement=CONNECT_REQUIREMENT,
            level=row.level,
            title=row.title,
            target=run.index,
            transport=TRANSPORT,
            revision="any",
            verdict=Verdict.ERROR,
            message=message,
            duration=0.0,
        )
        for suite in suites
    ]


async def _run_case(run: IssuerRun, chosen: Check, revision: str, shared: dict[str, Any]) -> CaseResult:
    """One case: the check run, its verdict read by the runner's rules, its own part of the wire log."""
    ctx = IssuerContext(run, revision, chosen.id, shared)
    mark, started = len(run.transcript.entries), time.monotonic()
    row = requirement(chosen.requirement).at(revision)
    judged = await _judge(chosen, ctx, row.level)
    keep = judged.verdict != Verdict.PASS or run.options.keep_transcripts
    return row_case(
        chosen,
        row,
        case_key(chosen.id, TRANSPORT, revision, run.index),
        target=run.index,
        transport=TRANSPORT,
        revision=revision,
        verdict=judged.verdict,
        message=run.transcript.mask(judged.message),
        claimed=run.options.experimental,
        duration=time.monotonic() - started,
        evidence=run.transcript.mask_value(judged.evidence),
        transcript=run.transcript.since(mark) if keep else [],
        blocked_by=judged.blocked_by,
        skip=judged.skip if judged.verdict == Verdict.SKIP and judged.blocked_by is None else None,
        judged_at=judged.judged_at if judged.verdict in (Verdict.FAIL, Verdict.WARN) else None,
    )


async def _judge(chosen: Check, ctx: IssuerContext, level: str) -> Judged:
    import httpx

    strict = ctx.options.strict
    try:
        await cast(IssuerCheckFunc, chosen.func)(ctx)
    except Outcome as outcome:
        judged = outcome_judged(outcome, level, strict)
        if isinstance(outcome, Blocked):
            judged.blocked(case_key(outcome.by, TRANSPORT, ctx.revision, ctx.run.index))
        return judged
    except httpx.HTTPError as exc:
        said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return Judged(Verdict.ERROR, f"no answer from the authorization server: {said}")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a harness bug must show, not pass
        message = f"harness error in {chosen.id}: {exc!r}"
        return Judged(Verdict.ERROR, message, {"traceback": traceback.format_exc(limit=6)})
    return finished_judged(ctx.notes, ctx.should_misses, ctx.warnings, level, strict)

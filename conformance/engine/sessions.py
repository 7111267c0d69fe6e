"""Opening sessions for one target: launching HTTP servers, probing revisions, restarting broken ones.

A `SessionPool` holds the shared session of one (target, revision) pair. A case that breaks the
transport marks it broken; the next case gets a restarted, re-opened session, up to a bounded number
of restarts, after which every remaining case is ERROR at once instead of waiting out more timeouts.
A failure a restart reproduces ends sooner, at its second occurrence (`HangLedger`), and the cases
that needed what failed are SKIP, blocked by the case that met it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import Adapter, TargetUnreachable, TransportError, cause_in_words
from conformance.adapters.stdio import StdioAdapter, start_tagged, stop_process_group
from conformance.adapters.transcript import Transcript
from conformance.engine.memo import CURRENT_KEY, met
from conformance.model.targets import Target
from conformance.protocol.session import Call, HandshakeFailed, NotSent, Session
from conformance.protocol.versions import TESTED_REVISIONS, era_of, is_known, transport_mismatch

LISTENING = re.compile(rb"LISTENING (https?://\S+)")
#: Default seconds a server the harness starts may take to give its first answer (`--start-timeout`):
#: a cold `npx -y` or `uvx`, or a Python server on a busy 2-core runner, takes 10 to 30 s.
DEFAULT_START_TIMEOUT = 60.0

#: Set by the runner with `-j 1`: a gate that lets one server process start (spawn up to its first
#: answer) at a time, so a server on shared state (a SQLite file and its migrations) never races
#: itself at start-up. Tasks inherit it from the target's task; None means starts may overlap.
START_GATE: contextvars.ContextVar[asyncio.Semaphore | None] = contextvars.ContextVar(
    "mcp_conformance_start_gate", default=None
)


#: The case running in this task (its check id), set by the runner: a hang is recorded against it.
CURRENT_CASE: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_conformance_case", default="")
#: How many times one request may break its session the same way in one revision before it is not
#: sent there any more: the second occurrence is a restart reproducing the first. A hang (a timeout
#: after the whole per-request budget) counts per method and subject (the tool, prompt or resource a
#: request names: one slow tool, server-everything's long-running operation, is no reason to stop
#: calling the others), and a method stops once that many of its subjects hung (a server whose every
#: tools/call hangs); an answer past the message cap, or the server lost on a session's first request,
#: counts per request (method and params: a fuzzed input that crashes the server is that input's).
HANGS_PER_METHOD = 2
#: The ways a request breaks its session that a restart can reproduce, as `TransportError.kind` names
#: them, and how a message says it.
BREAKS = {"timeout": "hung", "oversize": "broke the message cap", "closed": "lost the server"}


def subject_of(params: dict[str, Any] | None) -> str | None:
    """The tool, prompt or resource a request names (`name`, `uri`), if any."""
    for key in ("name", "uri"):
        value = (params or {}).get(key)
        if isinstance(value, str):
            return value
    return None


def exchange_of(method: str, kind: str, params: dict[str, Any] | None) -> str:
    """What a break of `kind` is counted against: the method and the subject it names for a hang, else
    the request itself (its params without `_meta`, which carries per-request tokens)."""
    if kind == "timeout":
        subject = subject_of(params)
        return method if subject is None else f"{method} {json.dumps(subject)[:200]}"
    plain = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return method + " " + json.dumps(plain, sort_keys=True, separators=(",", ":"), default=str)[:4000]


@dataclass
class Break:
    """One request that broke its session: the method, how (`BREAKS`), and the case (name, report key)."""

    method: str
    kind: str
    case: str
    key: str


@dataclass
class HangLedger:
    """The requests that broke a session in one (target, revision), and the cases they broke in.

    Why: a failure a restart reproduces costs the same again each time (a timeout waited out, a server
    restarted), and tells nothing new. Once a request has broken its session the same way `limit` times
    (`exchange_of`), it is not sent again in the revision: NotSent at once, blocked by the case that met
    it first; a server whose every `tools/call` hangs costs two timeouts per revision, not one per call.
    The repeat itself is blocked by the first (`TransportError.blocked_by`): one defect, one verdict. A
    lost server counts only on the first message of a session: later, what killed it may have been an
    earlier message (a fuzzed input, then the ping after it).

    A server that turns hostile after its handshake whatever it is asked breaks each restarted session
    the same way before answering anything, on whatever method comes first: once two methods have, the
    revision's sessions end (`dead`): no request is sent and no session opened any more (the pool asks
    `before`), each case blocked by the first break's case.
    """

    limit: int = HANGS_PER_METHOD
    cases: dict[tuple[str, str], list[Break]] = field(default_factory=dict)
    #: Per method, the first hang of each subject that hung: `limit` subjects stop the method.
    subjects_hung: dict[str, dict[str, Break]] = field(default_factory=dict)
    #: The breaks of one kind in a row with nothing answered between them (on any session of the
    #: revision), each but the first on the first request of a restarted session, and how many requests
    #: were answered since the latest.
    streak: list[Break] = field(default_factory=list)
    answered_since: int = 0
    #: The break that ends every later request of the revision, and why.
    dead: tuple[Break, str] | None = None

    def before(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.dead is not None:
            first, why = self.dead
            raise _not_sent(f"not sent: {why}", first)
        hung = self.subjects_hung.get(method, {})
        if len(hung) >= self.limit and subject_of(params) is not None:
            first = next(iter(hung.values()))
            raise _not_sent(
                f"not sent: {method} already hung for {len(hung)} different subjects in this revision "
                f"({', '.join(f'case {b.case}: {subject}' for subject, b in hung.items())})",
                first,
            )
        for kind, verb in BREAKS.items():
            broke = self.cases.get((exchange_of(method, kind, params), kind), [])
            if len(broke) >= self.limit:
                times = "twice" if self.limit == 2 else f"{self.limit} times"
                names = list(dict.fromkeys(b.case for b in broke))
                where = f"case {names[0]}" if len(names) == 1 else f"cases {', '.join(names)}"
                subject = subject_of(params)
                what = (
                    (method if subject is None else f"{method} of {subject!r}")
                    if kind == "timeout"
                    else f"the same {method} request"
                )
                raise _not_sent(
                    f"not sent: {what} already {verb} {times} in this revision ({where})", broke[0]
                )

    def answered(self, method: str) -> None:
        """A request of `method` was answered: the session still works for something."""
        self.answered_since += 1

    def failed(
        self, method: str, error: TransportError, first: bool = False, params: dict[str, Any] | None = None
    ) -> None:
        """A request of `method` broke its session with `error` (`first`: the first message the session
        sent after its opening). A repeat of a break met before is marked blocked by the case that met
        it first (`error.blocked_by`)."""
        if error.kind not in BREAKS or error.blocked_by:
            return
        now = Break(method, error.kind, CURRENT_CASE.get() or "(before the cases)", CURRENT_KEY.get())
        root: Break | None = None
        subject = subject_of(params)
        if error.kind == "timeout" and subject is not None:
            self.subjects_hung.setdefault(method, {}).setdefault(subject, now)
        if error.kind != "closed" or first:
            broke = self.cases.setdefault((exchange_of(method, error.kind, params), error.kind), [])
            root = broke[0] if broke else None
            if len(broke) < self.limit:
                broke.append(now)
        if first and self.streak and self.streak[-1].kind == error.kind and not self.answered_since:
            self.streak.append(now)
        else:
            self.streak = [now]
        self.answered_since = 0
        if len({b.method for b in self.streak}) > 1:
            # Restarted sessions broke the same way on their first request, nothing answered between,
            # whatever was asked: the server breaks whatever it is asked, and a restart reproduces it.
            root = self.streak[0]
            self.dead = (
                root,
                f"every session of this revision {BREAKS[error.kind]} on its first request after the "
                f"handshake ({root.method} in case {root.case}, then {method} in case {now.case})",
            )
        if root is not None and root.key and root.key != now.key:
            error.blocked_by = root.key
            met(root.key)


def _not_sent(message: str, first: Break) -> NotSent:
    """NotSent, blocked by the case of `first` (when the runner named it)."""
    error = NotSent(message)
    error.blocked_by = first.key or None
    met(first.key)
    return error


@contextlib.asynccontextmanager
async def starting(target: Target) -> AsyncIterator[None]:
    """Hold the start gate (when one is set) while a stdio server process starts and first answers."""
    gate = START_GATE.get() if target.kind == "stdio" else None
    if gate is None:
        yield
        return
    async with gate:
        yield


def start_budget(target: Target, fallback: float = DEFAULT_START_TIMEOUT) -> float:
    """Seconds a server the harness starts may take to answer first (the target's own, if it has one)."""
    return target.start_timeout if target.start_timeout is not None else fallback


def make_adapter(target: Target, transcript: Transcript) -> Adapter:
    """The adapter for a target's transport; the HTTP ones import httpx only when used."""
    if target.kind == "stdio":
        return StdioAdapter(
            target.argv,
            transcript,
            env=target.env or None,
            cwd=target.cwd,
            max_message_bytes=target.max_message_bytes,
        )
    if target.kind == "sse":
        from conformance.adapters.legacy_sse import LegacySseAdapter

        return LegacySseAdapter(
            target.url, transcript, headers=target.headers, max_message_bytes=target.max_message_bytes
        )
    from conformance.adapters.http import HttpAdapter

    return HttpAdapter(
        target.url, transcript, headers=target.headers, max_message_bytes=target.max_message_bytes
    )


@contextlib.asynccontextmanager
async def launched(target: Target, transcript: Transcript) -> AsyncIterator[Target]:
    """Start the target's `launch` command (if any) and yield the target with the URL it printed."""
    if not target.launch:
        yield target
        return
    try:
        proc = await start_tagged(
            target.launch, stdin=asyncio.subprocess.DEVNULL, env=target.env or None, cwd=target.cwd
        )
    except OSError as exc:
        raise TargetUnreachable(cause_in_words(exc, program=target.launch[0])) from None
    drain: list[asyncio.Task[bytes]] = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            line = await asyncio.wait_for(_wait_listening(proc.stdout), start_budget(target))
        except TimeoutError:
            line = None
        if line is None:
            err = b""
            with contextlib.suppress(TimeoutError):
                err = await asyncio.wait_for(proc.stderr.read(4000), 1.0)
            text = transcript.mask(err.decode("utf-8", errors="replace"))
            last = [line for line in text.splitlines() if line.strip()][-1:]
            hint = f"; last stderr line: {last[0].strip()[:200]}" if last else ""
            wait = f"{start_budget(target):g} s (--start-timeout)"
            raise TargetUnreachable(
                f"the launch command printed no `LISTENING <url>` line within {wait}{hint}",
                evidence=text,
            )
        url = line.decode("ascii")
        transcript.record("event", note=f"launched pid {proc.pid}, listening at {url}")
        # Keep reading both pipes so a chatty server never blocks on a full pipe.
        drain = [asyncio.create_task(_discard(proc.stdout)), asyncio.create_task(_discard(proc.stderr))]
        yield target.with_url(url)
    finally:
        # A launched server reads no stdin: it is asked to stop at once, with longer to shut down.
        await stop_process_group(proc, exit_wait=0, term_wait=3.0)
        for task in drain:
            task.cancel()


async def _wait_listening(stream: asyncio.StreamReader) -> bytes | None:
    while True:
        line = await stream.readline()
        if not line:
            return None
        match = LISTENING.search(line)
        if match:
            return match.group(1)


async def _discard(stream: asyncio.StreamReader) -> bytes:
    while await stream.read(65536):
        pass
    return b""


@dataclass
class ProbeResult:
    revision: str
    spoken: bool
    message: str
    session: Session | None = None
    call: Call | None = None
    unreachable: bool = False
    evidence: str = ""
    #: The opening request waited its whole budget without an answer.
    unanswered: bool = False
    #: The revision the server counter-offered instead (version negotiation, not a failure).
    offered: str | None = None
    #: The revision was not tried, because the target's transport does not exist in it.
    not_probed: bool = False


async def open_session(
    target: Target,
    revision: str,
    transcript: Transcript,
    timeout: float,
    adapter: Adapter | None = None,
    *,
    opening_timeout: float | None = None,
) -> Session:
    """A session opened (handshake or discovery) on `adapter`, or on a transport started now.

    The opening request of a stdio session is a new process's first answer, so it waits the start
    budget (`opening_timeout`, else the target's start budget) instead of the per-request `timeout`.
    """
    if opening_timeout is None:
        opening_timeout = start_budget(target, timeout) if target.kind == "stdio" else timeout
    async with starting(target) if adapter is None else contextlib.nullcontext():
        if adapter is None:
            adapter = make_adapter(target, transcript)
            await adapter.start()
        session = Session(adapter, revision, timeout=timeout, opening_timeout=opening_timeout)
        try:
            await session.open()
        except BaseException:
            await session.close()
            raise
    return session


async def probe(
    target: Target, transcript: Transcript, revision: str, timeout: float, opening_timeout: float
) -> ProbeResult:
    """Try one revision; keep the opened session so the first case can use it."""
    mismatch = transport_mismatch(revision, target.kind)
    if mismatch:
        return ProbeResult(revision, False, f"not probed: {mismatch}", not_probed=True)
    try:
        session = await open_session(target, revision, transcript, timeout, opening_timeout=opening_timeout)
    except HandshakeFailed as exc:
        return ProbeResult(revision, False, str(exc), call=exc.call, offered=exc.offered)
    except TargetUnreachable as exc:
        return ProbeResult(revision, False, str(exc), unreachable=True, evidence=exc.evidence)
    except TransportError as exc:
        timed_out = exc.kind == "timeout"
        return ProbeResult(revision, False, f"{exc.kind}: {exc}", evidence=exc.evidence, unanswered=timed_out)
    return ProbeResult(revision, True, "accepted", session=session, call=session.identity.opening)


@dataclass
class Prober:
    """Probes a target's revisions one at a time or side by side, sharing what an unanswered probe said.

    A probe's opening answer may take the start budget `start` (a cold start); once an initialize has
    waited that out unanswered, the server had its start-up, and the later probes wait the per-request
    `timeout`, so a server that never answers costs a start budget or two, not one per revision.
    """

    target: Target
    timeout: float
    start: float
    unanswered: bool = False

    async def one(self, revision: str, transcript: Transcript) -> ProbeResult:
        budget = self.timeout if self.unanswered else max(self.start, self.timeout)
        result = await probe(self.target, transcript, revision, self.timeout, budget)
        # Every server answers an initialize, if only with an error; a server of the handshake era
        # may well ignore server/discover. Only an initialize unanswered in the start budget says
        # the server had its start-up and still answers nothing.
        if result.unanswered and era_of(revision) == "legacy":
            self.unanswered = True
        return result


def probes_in_turn(target: Target, jobs: int) -> bool:
    """Whether each revision is probed just before its cases run, its probe's session theirs: with
    `-j 1` on stdio, where keeping every probe's process until its cases run would have several server
    processes at once. Probing all first and reopening would start each revision's process twice."""
    return jobs <= 1 and target.kind == "stdio"


async def probe_all(
    target: Target, revisions: tuple[str, ...], timeout: float, start: float, jobs: int = 1
) -> list[tuple[ProbeResult, Transcript]]:
    """Probe each revision on a transcript of its own, which the revision's cases then continue.

    One transcript per revision keeps each case's slice of the wire log its own, also when revisions
    run in parallel. Up to `jobs` probes run at once: with `-j 1` one after another, so a server never
    sees two of its own processes (or handshakes) start together (`probes_in_turn`: on stdio the runner
    then probes each revision just before its cases instead). Each probe's session is kept for its
    revision's cases.
    """
    transcripts = [Transcript(target.secrets) for _ in revisions]
    limit = asyncio.Semaphore(max(1, jobs))
    prober = Prober(target, timeout, start)

    async def one(revision: str, transcript: Transcript) -> ProbeResult:
        async with limit:
            return await prober.one(revision, transcript)

    results = await asyncio.gather(
        *(one(revision, transcript) for revision, transcript in zip(revisions, transcripts, strict=True))
    )
    return list(zip(results, transcripts, strict=True))


def unjudged_reason(probes: list[ProbeResult]) -> str | None:
    """Why a target that opened no revision is SKIP rather than FAIL, or None when it is not.

    It negotiated correctly but in nothing the harness can judge here. Each probe was one of: not
    tried (the transport does not exist in that revision); an initialize answered with a counter-offer
    of a revision this harness does not know or this run did not try (`--protocol` pinned another);
    a server/discover refused with a JSON-RPC error, which is how a server of the handshake era
    answers it. A counter-offer of a revision that was tried and refused is no such case (the server
    offered what it does not speak), and neither is an initialize refused with an error: the lifecycle
    MUST is to answer with a version the server supports.
    """
    tried = {p.revision for p in probes if not p.not_probed}
    reasons: list[str] = []
    for p in probes:
        if p.not_probed:
            reasons.append(f"{p.revision}: {p.message}")
        elif p.offered is not None and not is_known(p.offered):
            reasons.append(
                f"{p.revision}: the server speaks {p.offered!r}, a revision this harness cannot judge"
            )
        elif p.offered is not None and p.offered not in tried:
            reasons.append(
                f"{p.revision}: the server speaks {p.offered}, which this run did not ask for "
                f"(run with --protocol {p.offered} or auto)"
            )
        elif era_of(p.revision) == "modern" and p.call is not None and p.call.error is not None:
            reasons.append(f"{p.revision}: server/discover refused with an error (not spoken)")
        elif (supported := _supported_instead(p)) and not set(supported) & tried:
            # 2026-07-28's UnsupportedProtocolVersionError names what the server speaks instead.
            reasons.append(
                f"{p.revision}: refused, the server supports {', '.join(supported)} "
                f"(error.data.supported), which this run did not ask for"
            )
        else:
            return None
    return "not judged: " + "; ".join(reasons) if reasons else None


def _supported_instead(probe: ProbeResult) -> list[str]:
    """The `error.data.supported` revisions of a refused opening, when it names any."""
    error = probe.call.error if probe.call is not None else None
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if isinstance(supported, list) and supported and all(isinstance(v, str) for v in supported):
        return supported
    return []


@dataclass
class SessionPool:
    target: Target
    revision: str
    transcript: Transcript
    timeout: float
    max_restarts: int = 8
    current: Session | None = None
    gave_up: bool = False
    restarts: int = 0
    broken: bool = False
    extra: list[Session] = field(default_factory=list)
    last_failure: str = ""
    #: Transports booting ahead of the cases that will ask for sessions of their own (`prewarm`).
    spares: list[asyncio.Task[tuple[Adapter, Transcript]]] = field(default_factory=list)
    #: How many more sessions of their own the remaining cases declared (`Check.fresh_sessions`).
    planned: int = 0
    #: A session was opened for this pool already (an adopted probe session counts): later ones are
    #: restarts, bounded by `max_restarts`.
    opened: bool = True
    #: Which requests broke a session in this revision, shared by every session of the pool.
    hangs: HangLedger = field(default_factory=HangLedger)
    #: The case whose re-opening of the session failed (its report key): the later ones are blocked by it.
    gave_up_in: str = ""

    def _watched(self, session: Session) -> Session:
        session.hangs = self.hangs
        return session

    async def session(self) -> Session:
        if self.current is not None and not self.broken:
            return self.current
        if self.current is not None:
            await self.current.close()
            self.current = None
        self._alive()
        if self.gave_up or self.restarts >= self.max_restarts:
            self.gave_up = True
            error = TransportError(
                f"gave up on this target after {self.restarts} restarts; last failure: {self.last_failure}"
            )
            error.blocked_by = self.gave_up_in or None
            raise error
        if self.opened:  # the first opening is no restart (no probe session adopted, or handed over)
            self.restarts += 1
        self.opened = True
        self.broken = False
        try:
            self.current = self._watched(
                await open_session(self.target, self.revision, self.transcript, self.timeout)
            )
        except (HandshakeFailed, TransportError) as exc:
            # A server that cannot even be re-opened would only cost every later case a timeout: this
            # case is the one that met it, the later ones are blocked by it.
            self.gave_up = True
            self.gave_up_in = CURRENT_KEY.get()
            self.last_failure = str(exc)
            raise TransportError(f"re-opening the session failed, giving up on it: {exc}") from None
        return self.current

    async def settle(self) -> None:
        """One sentinel request (ping; server/discover in 2026-07-28) on the shared session, when one is
        open: what the server sent unasked (a notification right after its handshake, on a probe's
        session no case read from) is read into the wire log before the checks that judge that log."""
        session = self.current
        if session is None or self.broken:
            return
        try:
            await session.request("ping" if session.era == "legacy" else "server/discover")
        except TransportError:
            self.broken = True  # the next case that asks gets a restarted session

    async def hand_over(self) -> Session:
        """The shared session, handed to a case that ends it (`Check.ends_session`): no process is
        started for that case. The pool closes it, and a later case that asks opens a new one, which is
        no restart (nothing broke)."""
        session = await self.session()
        self.current = None
        self.opened = False
        self.extra.append(session)
        return session

    def _alive(self) -> None:
        """Raise NotSent, blocked, once every restart broke the same way (`HangLedger.dead`): another
        session of this revision, shared or a case's own, would only break again."""
        if self.hangs.dead is not None:
            self.hangs.before("")

    def adopt(self, session: Session | None) -> None:
        """Continue on the probe's session (None: the first case to ask opens one)."""
        self.current = self._watched(session) if session is not None else None
        self.opened = session is not None

    def prewarm(self, planned: int) -> None:
        """Expect `planned` sessions of their own; on stdio, boot one server process ahead now.

        A stdio session is a process, and an SDK-built server takes ~0.4 s to start: a check that
        opens one would wait that out. One spare at a time boots beside the running cases, and the
        next is started when it is taken, while more are planned. Over HTTP a session is a request,
        so nothing is started ahead.
        """
        self.planned = planned
        self._refill()

    def _refill(self) -> None:
        if self.target.kind == "stdio" and self.planned > 0 and not self.spares:
            self.spares.append(asyncio.create_task(self._boot_spare()))

    async def _boot_spare(self) -> tuple[Adapter, Transcript]:
        own = Transcript(self.target.secrets)
        adapter = make_adapter(self.target, own)
        try:
            await adapter.start()
        except BaseException:
            await adapter.close()
            raise
        return adapter, own

    async def _started_adapter(self, use_spare: bool) -> Adapter:
        """A started transport on the pool's transcript: a spare when allowed and booted, else a new one.

        Only a check that declared `fresh_sessions` may take a spare: another one (a race on shared
        state) gets a process started when it asks, as it would without spares.
        """
        if not use_spare:
            adapter = make_adapter(self.target, self.transcript)
            try:
                await adapter.start()
            except BaseException:
                await adapter.close()
                raise
            return adapter
        self.planned = max(0, self.planned - 1)
        while self.spares:
            task = self.spares.pop(0)
            self._refill()
            try:
                adapter, own = await task
            except Exception:  # a spare that failed to boot: boot one now, and let that one fail visibly
                continue
            self.transcript.absorb(own)
            adapter.transcript = self.transcript
            return adapter
        self._refill()
        return await self._started_adapter(use_spare=False)

    async def fresh(self, use_spare: bool = False) -> Session:
        """A new session of its own for one case (closed when the pool closes)."""
        self._alive()
        async with starting(self.target):
            adapter = await self._started_adapter(use_spare)
            # open_session closes the adapter itself when the opening fails.
            session = await open_session(self.target, self.revision, self.transcript, self.timeout, adapter)
        self.extra.append(self._watched(session))
        return session

    async def open_as(self, target: Target) -> Session:
        """A session opened now on this revision's transcript as `target` (the pool's, or the same server
        with another principal's env or headers); its case closes it, and the pool does if it did not."""
        self._alive()
        session = await open_session(target, self.revision, self.transcript, self.timeout)
        self.extra.append(self._watched(session))
        return session

    async def fresh_unopened(self, use_spare: bool = False) -> Session:
        """A started transport with a session object that has not sent its opening request yet."""
        self._alive()
        async with starting(self.target):
            adapter = await self._started_adapter(use_spare)
        opening = start_budget(self.target, self.timeout) if self.target.kind == "stdio" else None
        session = Session(adapter, self.revision, timeout=self.timeout, opening_timeout=opening)
        self.extra.append(self._watched(session))
        return session

    async def close(self) -> None:
        sessions = [s for s in [self.current, *self.extra] if s is not None]
        self.current, self.extra = None, []
        spares, self.spares, self.planned = self.spares, [], 0
        for task in spares:
            task.cancel()
        booted = await asyncio.gather(*spares, return_exceptions=True)
        closing = [s.close() for s in sessions]
        closing += [b[0].close() for b in booted if isinstance(b, tuple)]
        await asyncio.gather(*closing, return_exceptions=True)


def default_revisions(protocol: str) -> tuple[str, ...]:
    return TESTED_REVISIONS if protocol == "auto" else (protocol,)

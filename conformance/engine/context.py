"""What a check sees: the session(s) of its target and revision, shared facts, and evidence helpers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from conformance.adapters.base import (
    TargetUnreachable,
    TransportClosed,
    TransportError,
    TransportTimeout,
    TransportTooLarge,
    TransportViolation,
)
from conformance.engine import policy
from conformance.engine.checks import missed
from conformance.engine.listing import Listing, cached_listing, fetch_listing
from conformance.engine.memo import CURRENT_KEY, guarded, remember
from conformance.engine.sections import Section
from conformance.engine.sessions import DEFAULT_START_TIMEOUT, SessionPool
from conformance.model.targets import Target
from conformance.model.verdicts import Verdict
from conformance.protocol.session import Call, NotSent, ServerIdentity, Session

if TYPE_CHECKING:
    from conformance.adapters.http import HttpAdapter

T = TypeVar("T")

#: Default seconds of wall time one target may take (`--target-budget`).
DEFAULT_TARGET_BUDGET = 600.0


class SettledPackOptions(dict[str, Any]):
    """The packs' option values once settled (`RunOptions.__post_init__`): every option of every
    installed pack, each default taken and each `settle` run."""


@dataclass
class RunOptions:
    #: Seconds per request, for targets whose file sets no `[timeouts] request`.
    timeout: float = 10.0
    #: Seconds a server the harness starts may take to give its first answer (its `LISTENING` line,
    #: and the opening request of each stdio process and of the probes), for targets whose file sets
    #: no `[timeouts] start`.
    start_timeout: float = DEFAULT_START_TIMEOUT
    protocol: str = "auto"
    strict: bool = False
    #: Claim every experimental feature and extension (`--experimental`): their cases fail the run
    #: like any other. Without it they show their true verdict, counted apart, and fail no run.
    experimental: bool = False
    #: Suites the user named with `--suite`: naming a profile or extension suite claims its rows (the
    #: base protocol's pack, `Pack.default_for_servers`, claims nothing by being named).
    claimed_suites: frozenset[str] = frozenset()
    max_restarts: int = 8
    #: Keep the wire log of passing cases too (snapshots record what the server said when all was well).
    keep_transcripts: bool = False
    #: How many probes and revisions may run at once (`-j`); 1 runs everything in plan order.
    jobs: int = 1
    #: `-j` not given: a Streamable HTTP target's revisions run side by side anyway (each over sessions
    #: of its own, on the one server that is already up) when every pack of its run allows it
    #: (`Pack.revisions_side_by_side`). With `-j 1` given, everything runs in plan order.
    side_by_side: bool = False
    list_page_cap: int = 1000
    #: Which tools the base suite may call: "safe" (read-only hint), "all" or "none".
    call_tools: str = "safe"
    #: Seconds of wall time one target may take (`--target-budget`), for targets whose file sets no
    #: `[timeouts] target`: when spent, its cases not yet run are ERROR at once.
    target_budget: float = DEFAULT_TARGET_BUDGET
    #: Values of the options packs declare (`Pack.options`), by `dest`: `--fuzz-examples` is
    #: `pack_options["fuzz_examples"]`. What is not given takes the option's default; each option's
    #: `settle` runs once, here, so every case of a run sees one value (the fuzz seed drawn once).
    pack_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Settle the packs' options, once: `dataclasses.replace` (a target's timeout, a worker's `-j`)
        hands the settled values on, and they are not settled again (a seed is never drawn twice)."""
        if isinstance(self.pack_options, SettledPackOptions):
            return
        from conformance.model import packs

        given = dict(self.pack_options)
        unknown = set(given) - {option.dest for _, option in packs.all_options()}
        if unknown:
            raise ValueError(f"no installed suite declares the option(s) {', '.join(sorted(unknown))}")
        for _, option in packs.all_options():
            value = given.get(option.dest, option.default)
            given[option.dest] = option.settle(value) if option.settle else value
        self.pack_options = SettledPackOptions(given)

    def pack_option(self, dest: str) -> Any:
        """The settled value of a pack's option (KeyError names an option no installed pack declares)."""
        return self.pack_options[dest]


@dataclass
class TargetShared:
    """What the cases of one target share across its revisions (which may run at once, with `-j`)."""

    #: Facts about the target that do not depend on the revision (`CaseContext.target_memo`).
    memo: dict[str, Any] = field(default_factory=dict)
    #: The target's reader-writer section (`CaseContext.exclusive`, `CaseContext.shared_section`).
    section: Section = field(default_factory=Section)
    #: Exchanges that failed in one revision and are not waited for again in another
    #: (`CaseContext.remember_once` and `CaseContext.guard` with `across_revisions`), by key.
    failures: dict[str, Any] = field(default_factory=dict)
    #: One lock per such exchange: revisions that run at once (`-j`) send it one at a time.
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    #: The verdict of each case that has finished, by report key, and for a case that did not hold the
    #: verdict of a failure it met (a SKIP blocked by another, say), the case that does: a case that
    #: meets that failure again is blocked by a case whose verdict stands for it (`runner.holder_of`).
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    holders: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Violation:
    """One answer to a request that broke a transport rule: the method, why, and the call (None when
    the adapter raised, having no answer to hand back)."""

    method: str
    why: str
    excerpt: str
    call: Call | None


@dataclass
class CaseContext:
    target: Target
    revision: str
    era: str
    transport: str
    identity: ServerIdentity
    pool: SessionPool
    options: RunOptions
    #: Facts shared by the cases of one (target, revision), e.g. the full tools list.
    shared: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: SHOULD-level aspects the server missed (`miss_should`): WARN, FAIL under `--strict`.
    should_misses: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    #: Wire entries from earlier cases that this case's verdict rests on (a cached listing, say).
    attached: list[dict[str, Any]] = field(default_factory=list)
    #: Evidence the case keeps whatever its verdict (a fuzz case's seed and examples per second).
    facts: dict[str, Any] = field(default_factory=dict)
    #: Where the case's own part of the wire log starts, when later than the case's start: a fuzz case
    #: that sent hundreds of inputs attaches only the failing one's entries, not all of them.
    transcript_mark: int | None = None
    #: The check declared `fresh_sessions`, so its own sessions may run on processes booted ahead.
    spares_allowed: bool = False
    #: Answers to this case's `request`s that broke a transport rule, in order.
    violations: list[Violation] = field(default_factory=list)
    #: What the cases of this target share across revisions (the runner passes one per target).
    per_target: TargetShared = field(default_factory=TargetShared)
    #: Sessions this case opened with `session_as`, closed when the case ends (`close`).
    own_sessions: list[Session] = field(default_factory=list)

    # ------------------------------------------------------------------ shared facts

    @property
    def case_key(self) -> str:
        """The report key of the case running now (set by the runner): a fact one case gathers for
        others (`remember_once`) names the case that gathered it, so a later case can say whose it is."""
        return CURRENT_KEY.get()

    @property
    def target_memo(self) -> dict[str, Any]:
        """Facts shared by the cases of one target across its revisions (`shared` is per revision)."""
        return self.per_target.memo

    async def remember_once(
        self, key: str, owner: str, factory: Callable[[], Awaitable[T]], *, across_revisions: bool = False
    ) -> T:
        """`factory()` computed once per (target, revision) and kept in `shared` under `key`.

        A transport failure is remembered too, with the case that met it: every later case that needs
        the fact is SKIP at once, blocked by that case, naming `owner` (what the exchange was), instead
        of sending it again and waiting out the same timeout. With `across_revisions` the failure holds
        for the target's other revisions too (the exchange does not depend on the revision: an HTTP GET
        that never answers), while a fact that was computed is still each revision's own.
        """
        also = self.per_target.failures if across_revisions else None
        return await remember(self.shared, key, owner, factory, also)

    async def target_once(self, key: str, owner: str, factory: Callable[[], Awaitable[T]]) -> T:
        """`factory()` computed once per target and shared by its revisions, for an exchange that carries
        nothing of the revision (an initialize offering a version no revision has): a revision does not
        start a server process of its own to repeat it. A transport failure is remembered too, and the
        later revisions' cases are blocked by the case that met it. Revisions running at once (`-j`)
        wait for the first one's outcome."""
        lock = self.per_target.locks.setdefault(key, asyncio.Lock())
        async with lock:
            return await remember(self.per_target.memo, key, owner, factory)

    def guard(
        self, key: str, owner: str, *, across_revisions: bool = False
    ) -> AbstractAsyncContextManager[None]:
        """The block sends the exchange `key` (`owner` says what it is): when it already failed in an
        earlier case, the case is SKIP at once, blocked by that case (`checks.Blocked`), sending nothing;
        a transport failure in the block is remembered so. For an exchange several checks send on
        sessions of their own (a GET stream), so that one failure is met once and its dependants name
        it; `once` is the same for a fact the cases share."""
        if not across_revisions:
            return guarded(self.shared, key, owner)
        lock = self.per_target.locks.setdefault(key, asyncio.Lock())
        return guarded(self.shared, key, owner, self.per_target.failures, lock)

    async def list_all(self, method: str, key: str, *, attach: bool = True, refetch: bool = False) -> Listing:
        """Every page of a paginated list method, fetched once per (target, revision) whoever asks.

        The one rule of `conformance.engine.listing`: `nextCursor` followed for at most
        `options.list_page_cap` pages, a repeated or non-string cursor ends it with a `problem`. A listing
        fetched by an earlier case is attached to this case's evidence unless `attach` is false;
        `refetch` fetches it anew (a second listing to compare with the first) and keeps that one.
        """
        if refetch:
            self.shared.pop(f"engine:list:{method}", None)
        listing, earlier = await cached_listing(
            self.shared,
            self._request_positional,
            self.pool.transcript,
            method,
            key,
            self.options.list_page_cap,
        )
        if earlier and attach:
            self.attach(listing.entries)
        return listing

    async def _request_positional(self, method: str, params: dict[str, Any] | None) -> Call:
        return await self.request(method, params)

    async def list_on(self, session: Session, method: str, key: str) -> Listing:
        """Every page of a list method on another session (a fresh connection), under `list_all`'s one
        rule, not cached: what a second connection is shown, to compare with the shared listing."""

        async def request(method: str, params: dict[str, Any] | None) -> Call:
            call = await session.request(method, params)
            self.calls.append(call)
            return call

        return await fetch_listing(request, self.pool.transcript, method, key, self.options.list_page_cap)

    # ------------------------------------------------------------------ tool calls

    def may_call(self, tool: dict[str, Any]) -> bool:
        """Whether the run's `--call-tools` policy lets this case call `tool` (`engine.policy`)."""
        return policy.may_call(self.options.call_tools, tool)

    def callable_tools(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The listed tools the run's `--call-tools` policy lets this case call, in listed order."""
        return policy.callable_tools(self.options.call_tools, listed)

    # ------------------------------------------------------------------ scheduling

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Run alone among this target's cases that take a section (it resets or moves shared state)."""
        async with self.per_target.section.hold(exclusive=True):
            yield

    @contextlib.asynccontextmanager
    async def shared_section(self) -> AsyncIterator[None]:
        """Run beside other readers, but never while a case of this target holds `exclusive`."""
        async with self.per_target.section.hold(exclusive=False):
            yield

    # ------------------------------------------------------------------ the wire log

    def mark(self) -> int:
        """A place in this revision's wire log, for `wire_since`."""
        return self.pool.transcript.mark()

    def wire_since(self, mark: int) -> list[dict[str, Any]]:
        """The wire entries recorded since `mark` (a shared exchange's evidence, to `attach` later)."""
        return self.pool.transcript.since(mark)

    def wire_log(self) -> list[dict[str, Any]]:
        """Every wire entry of this revision so far, earlier cases' included (stdio hygiene reads it)."""
        return list(self.pool.transcript.entries)

    def own_from(self, mark: int) -> None:
        """This case's own transcript starts at `mark` (later than its start): a case that sent many
        inputs attaches the one that matters and keeps only what follows."""
        self.transcript_mark = mark

    # ------------------------------------------------------------------ sessions

    def session_broken(self) -> None:
        """Mark the shared session broken: the next case gets a restarted one (a stream that ended)."""
        self.pool.broken = True

    async def session(self) -> Session:
        return await self.pool.session()

    async def ending_session(self) -> Session:
        """The revision's shared session, for a check that ends it (`Check.ends_session`, run after
        every check that sends something): the session a client ends after using it."""
        return await self.pool.hand_over()

    async def fresh_session(self) -> Session:
        return await self.pool.fresh(use_spare=self.spares_allowed)

    async def racer_sessions(self, count: int) -> list[Session]:
        """`count` sessions of their own (a process each over stdio), opened side by side, for races
        (catalog convention C-5); if one cannot be opened, the others are closed and the failure raised."""
        opened = await asyncio.gather(*(self.fresh_session() for _ in range(count)), return_exceptions=True)
        sessions = [o for o in opened if isinstance(o, Session)]
        failures = [o for o in opened if isinstance(o, BaseException)]
        if failures:
            await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
            raise failures[0]
        return sessions

    async def fresh_session_unopened(self) -> Session:
        return await self.pool.fresh_unopened(use_spare=self.spares_allowed)

    async def session_as(self, principal: Mapping[str, Any] | None = None) -> Session:
        """A session opened now as another principal, closed when the case ends.

        `principal` is what a fixture hook (second_account, second_principal) answered: its `env` and
        `headers` are laid over the target's (a stdio server started with other credentials, an HTTP
        request with another token). None opens one more session as the target itself.
        """
        target = self.target
        if principal is not None:
            target = replace(
                target,
                env={**target.env, **principal.get("env", {})},
                headers={**target.headers, **principal.get("headers", {})},
            )
        session = await self.pool.open_as(target)
        self.own_sessions.append(session)
        return session

    async def http_adapter(self, session: Session | None = None) -> HttpAdapter | None:
        """The Streamable HTTP transport under `session` (default: the shared one), for raw HTTP requests
        (GET, DELETE), or None on another transport."""
        from conformance.adapters.http import HttpAdapter

        adapter = (session or await self.session()).adapter
        return adapter if isinstance(adapter, HttpAdapter) else None

    async def end_input(self, session: Session, wait: float) -> float | None:
        """Close the stdin of `session`'s server process (stdio only) and wait up to `wait` seconds for it to
        exit: the seconds it took, or None if it did not. The session is spent afterwards."""
        from conformance.adapters.stdio import StdioAdapter

        adapter = session.adapter
        if not isinstance(adapter, StdioAdapter):
            raise TypeError("end_input needs a stdio session")
        return await adapter.end_input(wait)

    async def close(self) -> None:
        """Close the sessions this case opened itself (`session_as`); the runner calls it at the end."""
        sessions, self.own_sessions = self.own_sessions, []
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    async def request(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Call:
        """A request on the shared session; a transport failure marks the session broken and propagates.

        These are requests the server has to accept (well formed, with the session's own headers), so
        an answer that breaks a transport rule is recorded in `violations`: the runner reports the
        rule broken once and this case as blocked by it (see `conformance.engine.blocking`).
        """
        session = await self.session()
        try:
            call = await session.request(method, params, **kwargs)
        except TransportViolation as exc:
            self.pool.broken = True
            self.violations.append(Violation(method, str(exc), exc.evidence, None))
            raise
        except NotSent:
            raise  # nothing reached the server: the session is as it was
        except Exception:
            self.pool.broken = True
            raise
        self.calls.append(call)
        if call.reply.violation:
            self.violations.append(Violation(method, call.reply.violation, "", call))
        return call

    @contextlib.contextmanager
    def answer_judged(self, what: str) -> Iterator[None]:
        """The exchange inside is the one this row's own rule is about (a ping MUST be answered, a GET
        MUST be an event stream or 405): a server that let it time out, or ended its stream or
        connection instead, was observed breaking that rule. The case is a miss (FAIL or WARN by the
        row's level) saying `what` and what was seen (the wait; the exit status and stderr tail as
        evidence), not an ERROR, which is for what could not be observed.

        An HTTP status that carried no JSON-RPC answer (a 5xx in text/plain, say) was observed too.
        A request not sent because its method already hung (judged where it hung), an answer that broke
        a transport rule (judged once, `conformance.engine.blocking`), one over the message cap and an
        unreachable target stay what they are.
        """
        try:
            yield
        except (NotSent, TransportViolation, TransportTooLarge, TargetUnreachable):
            raise
        except TransportError as exc:
            if not isinstance(exc, TransportTimeout | TransportClosed) and exc.status is None:
                raise
            evidence: dict[str, Any] = {"diagnostics": exc.evidence} if exc.evidence else {}
            if exc.status is not None:
                evidence["http_status"] = exc.status
            missed(f"{what}: {exc}", **evidence)

    def attach(self, entries: list[dict[str, Any]]) -> None:
        """Rest this case on wire entries recorded before it started, so its evidence shows them."""
        self.attached.extend(entries)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def soft_warn(self, text: str) -> None:
        """Record a SHOULD-level miss; the case ends WARN unless something worse happens."""
        self.warnings.append(text)

    def miss_should(self, text: str) -> None:
        """Record a SHOULD-level aspect the server missed (of a MUST row, say); the case goes on.

        It ends WARN, or FAIL under `--strict`, like a miss of a SHOULD row, unless something worse
        happens. `soft_warn` is for what `--strict` leaves a WARN (evidence the harness cannot verify).
        """
        self.should_misses.append(text)

"""What a check sees: the session(s) of its target and revision, shared facts, and evidence helpers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import TransportViolation
from conformance.engine.checks import missed, skip, weak
from conformance.engine.sessions import DEFAULT_START_TIMEOUT, SessionPool
from conformance.protocol.session import Call, ServerIdentity, Session
from conformance.targets import Target


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
    max_restarts: int = 8
    #: Keep the wire log of passing cases too (snapshots record what the server said when all was well).
    keep_transcripts: bool = False
    #: How many probes and revisions may run at once (`-j`); 1 runs everything in plan order.
    jobs: int = 1
    list_page_cap: int = 1000
    #: Which tools the base suite may call: "safe" (read-only hint), "all" or "none".
    call_tools: str = "safe"
    #: Values of the options packs declare (`Pack.options`), by `dest`: `--fuzz-examples` is
    #: `pack_options["fuzz_examples"]`. What is not given takes the option's default; each option's
    #: `settle` runs once, here, so every case of a run sees one value (the fuzz seed drawn once).
    pack_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from conformance import packs

        given = dict(self.pack_options)
        unknown = set(given) - {option.dest for _, option in packs.all_options()}
        if unknown:
            raise ValueError(f"no installed suite declares the option(s) {', '.join(sorted(unknown))}")
        for _, option in packs.all_options():
            value = given.get(option.dest, option.default)
            given[option.dest] = option.settle(value) if option.settle else value
        self.pack_options = given

    def pack_option(self, dest: str) -> Any:
        """The settled value of a pack's option (KeyError names an option no installed pack declares)."""
        return self.pack_options[dest]


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

    async def session(self) -> Session:
        return await self.pool.session()

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
        except Exception:
            self.pool.broken = True
            raise
        self.calls.append(call)
        if call.reply.violation:
            self.violations.append(Violation(method, call.reply.violation, "", call))
        return call

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

    def expect(self, condition: object, message: str, call: Call | None = None) -> None:
        if not condition:
            missed(message, **(call.excerpt() if call else {}))

    def missed(self, message: str, call: Call | None = None) -> None:
        missed(message, **(call.excerpt() if call else {}))

    def weak(self, message: str, call: Call | None = None) -> None:
        weak(message, **(call.excerpt() if call else {}))

    def skip(self, reason: str) -> None:
        skip(reason)

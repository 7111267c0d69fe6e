"""The check registry: each check is an async function tied to one requirement ID.

Packs register checks with the `check` decorator at import time (through `conformance.pack_api`). A
check ends by returning (PASS), or by raising one of the outcomes below; the runner turns a miss into
FAIL or WARN from the requirement's level, so a check never decides that by itself, and names the
blocking case of a `blocked` SKIP.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, cast

from conformance.model.verdicts import SkipKind, Verdict
from conformance.protocol.session import Exchange

if TYPE_CHECKING:
    from conformance.engine.context import CaseContext

CheckFunc = Callable[["CaseContext"], Awaitable[None]]


class Evidence(Exchange, total=False):
    """What a case shows beside its message: the report's `evidence` object, in the order the check
    gave it (the report keeps that order, so a report's bytes never depend on this type).

    The fields below are the ones checks and the engine use across packs, typed; a check may add keys
    of its own (`jobs`, `listed`, `rounds`: what its rule is about), which reach the report as given.
    The exchange (`request` .. `body`) is what `Call.excerpt()` gives; `outcome` is the C-1
    classification a profile reply adds (`Reply.excerpt()`).
    """

    #: How a profile reply was classified by the catalog's C-1 rules (`Classification.describe()`).
    outcome: str
    #: What the transport or the process said when a request failed (an adapter's evidence).
    diagnostics: str
    #: The tail of the server's stderr, when it bears on the verdict.
    stderr: str
    #: The verdict a case had before the engine found it rested on a transport violation.
    unblocked: str
    #: The server's messages a check judged, read from the wire log.
    messages: list[Any]
    #: The answers that broke a transport rule, as the transport's judging check read them.
    violations: list[Any]


class Outcome(Exception):
    """How a check ends other than by returning (PASS): the one `Outcome` family of the code. The
    runner turns it into the case's verdict and message, and keeps its evidence in the report."""

    #: The verdict this outcome always is; None when the runner decides it (a `Missed`).
    verdict: Verdict | None = None

    def __init__(self, message: str, evidence: dict[str, Any] | Evidence | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.evidence: Evidence = cast(Evidence, evidence or {})


class Missed(Outcome):
    """The requirement is not met: no fixed verdict. The runner makes it FAIL or WARN from the
    requirement's level (`conformance.model.verdicts.miss_verdict`), so a check never decides that itself."""

    verdict = None


class Weak(Outcome):
    """Met only on weak evidence, or a SHOULD-level aspect of a MUST check missed: WARN."""

    verdict = Verdict.WARN


class Skipped(Outcome):
    """Nothing to judge (a capability, a fixture hook or the thing the row is about is absent): SKIP.

    `kind` says why in the words every view counts SKIPs by (`SKIP_KINDS`), and `option` names the
    run option that would judge more (`--call-tools all` for tools the policy did not call)."""

    verdict = Verdict.SKIP

    def __init__(self, message: str, kind: SkipKind = "nothing-to-judge", option: str = "") -> None:
        super().__init__(message)
        self.kind: SkipKind = kind
        self.option = option


class Blocked(Skipped):
    """SKIP because another check of the same (target, revision) judges the defect that left this one
    nothing to judge (the document it reads is not served, say); the report names that case. The engine
    names a case it knows itself by its report key (`key`: an exchange that already failed, in another
    revision perhaps)."""

    def __init__(self, message: str, by: str, key: str | None = None) -> None:
        super().__init__(message, "blocked")
        self.by = by
        self.key = key


class Unjudgeable(Outcome):
    """The harness could not judge (the server answered something no rule can read): ERROR."""

    verdict = Verdict.ERROR


def missed(message: str, **evidence: Any) -> NoReturn:
    raise Missed(message, evidence)


def weak(message: str, **evidence: Any) -> NoReturn:
    raise Weak(message, evidence)


def skip(reason: str, *, kind: SkipKind = "nothing-to-judge", option: str = "") -> NoReturn:
    """SKIP: nothing to judge (`kind` says why, `option` what would judge more; see `Skipped`)."""
    raise Skipped(reason, kind, option)


def blocked(by: str, reason: str) -> NoReturn:
    """SKIP naming check `by` (an ID of this suite run on the same revision) as the blocking case."""
    raise Blocked(reason, by)


def unjudgeable(message: str, **evidence: Any) -> NoReturn:
    raise Unjudgeable(message, evidence)


@dataclass(frozen=True)
class Check:
    id: str
    suite: str
    requirement: str
    title: str
    func: CheckFunc = field(compare=False, repr=False)
    eras: frozenset[str] = frozenset({"legacy", "modern"})
    transports: frozenset[str] = frozenset({"stdio", "http", "sse"})
    #: Server capability the check needs (e.g. "resources"); SKIP when not offered.
    capability: str | None = None
    #: Revisions the check applies to, when narrower than its eras.
    revisions: frozenset[str] | None = None
    #: Run on one revision per target only (the newest spoken one): for costly profile checks whose
    #: subject (a race, a document) does not depend on the protocol revision.
    once: bool = False
    #: Sessions of its own the check opens, with no state to see that an earlier case could change
    #: (a handshake probe, say). On stdio the runner boots that many server processes ahead, so the
    #: case does not wait out a start-up. Leave 0 where a process started earlier could differ from
    #: one started when asked (races on shared state): those boot on demand.
    fresh_sessions: int = 0
    #: Run after the revision's other checks: it judges the whole wire log they left (every message
    #: the server sent), so it must see all of it.
    last: bool = False
    #: It ends the revision's shared session (closes a stdio server's stdin): it runs after every
    #: check that sends anything, on that session, so no server process is started for it.
    ends_session: bool = False

    def applies(self, era: str, transport: str, revision: str) -> bool:
        if era not in self.eras or transport not in self.transports:
            return False
        return self.revisions is None or revision in self.revisions

    def revisions_judged(self) -> list[str]:
        """The known revisions this check judges on some transport that revision defines, oldest first
        (`list`, `explain`, and the rows' `by_revision` keys): a Streamable HTTP check never judges
        2024-11-05, which is not probed there."""
        from conformance.protocol.versions import TESTED_REVISIONS, era_of, transport_mismatch

        def judged(revision: str, transport: str) -> bool:
            spoken = transport_mismatch(revision, transport) is None
            return spoken and self.applies(era_of(revision), transport, revision)

        return [r for r in sorted(TESTED_REVISIONS) if any(judged(r, t) for t in self.transports)]


_REGISTRY: dict[str, list[Check]] = {}


def check(
    check_id: str,
    requirement: str,
    title: str,
    *,
    eras: tuple[str, ...] = ("legacy", "modern"),
    transports: tuple[str, ...] = ("stdio", "http", "sse"),
    capability: str | None = None,
    revisions: tuple[str, ...] | None = None,
    once: bool = False,
    fresh_sessions: int = 0,
    last: bool = False,
    ends_session: bool = False,
) -> Callable[[CheckFunc], CheckFunc]:
    """Register `func` as check `check_id` (its pack is the part before the first dot)."""
    suite = check_id.split(".", 1)[0]
    if revisions is None:
        from conformance.model import packs
        from conformance.protocol.versions import since

        pack = packs.installed().get(suite)
        if pack is not None and pack.since is not None:
            revisions = since(pack.since)  # a suite judges no revision older than its binding

    def register(func: CheckFunc) -> CheckFunc:
        checks = _REGISTRY.setdefault(suite, [])
        if any(c.id == check_id for c in checks):
            raise ValueError(f"check {check_id} registered twice")
        checks.append(
            Check(
                check_id,
                suite,
                requirement,
                title,
                func,
                frozenset(eras),
                frozenset(transports),
                capability,
                frozenset(revisions) if revisions else None,
                once,
                fresh_sessions,
                last,
                ends_session,
            )
        )
        return func

    return register


def registered(check_id: str) -> Check:
    """The check registered as `check_id` (KeyError when none is)."""
    for found in _REGISTRY.get(check_id.split(".", 1)[0], []):
        if found.id == check_id:
            return found
    raise KeyError(check_id)


def profile_checks(
    profile_check: str, shown: Callable[[CaseContext], Awaitable[bool]], absent: str
) -> Callable[..., Callable[[CheckFunc], CheckFunc]]:
    """A `check` decorator for a profile's rows: every check but `profile_check` first asks `shown(ctx)`
    whether the server shows the profile at all, and is SKIP blocked by `profile_check` (with `absent`
    as the reason) when it does not, so a server that claims a profile it does not show gets one FAIL,
    on that row, not one per row judged on an absence. `section(ctx)`, when given, is the async context
    the check runs in (the engine's `ctx.exclusive()` or `ctx.shared_section()`)."""

    def profile_check_decorator(
        check_id: str,
        requirement: str,
        title: str,
        *,
        section: Callable[[CaseContext], AbstractAsyncContextManager[Any]] | None = None,
        **options: Any,
    ) -> Callable[[CheckFunc], CheckFunc]:
        def register(func: CheckFunc) -> CheckFunc:
            @functools.wraps(func)
            async def run(ctx: CaseContext) -> None:
                if check_id != profile_check and not await shown(ctx):
                    blocked(profile_check, absent)
                if section is None:
                    await func(ctx)
                    return
                async with section(ctx):
                    await func(ctx)

            check(check_id, requirement, title, **options)(run)
            return func

        return register

    return profile_check_decorator


def load_pack(name: str) -> list[Check]:
    """Import a suite's modules (which register its checks) and return its checks in definition order."""
    from conformance.model import packs

    pack = packs.get(name)
    before = {suite: len(checks) for suite, checks in _REGISTRY.items()}
    pack.load()
    for suite, registered in _REGISTRY.items():
        strays = registered[before.get(suite, 0) :] if suite != name else []
        if strays:  # its modules registered a check under another suite's name: say which, once
            raise packs.PackError(
                f"suite {name!r}: check {strays[0].id} is not named {name}.<...> (every check ID starts "
                "with its suite's name)"
            )
    checks = list(_REGISTRY.get(name, []))
    if not checks:
        raise packs.PackError(f"suite {name!r} registers no check (its modules: {', '.join(pack.checks)})")
    for transport, (check_id, requirement) in pack.transport_judges.items():
        if not any(c.id == check_id and c.requirement == requirement for c in checks):
            raise packs.PackError(
                f"suite {name!r}: the judge of {transport} answers, {check_id} ({requirement}), is not "
                "one of its checks"
            )
    return checks

"""How a pack judges a client: its scenarios (`scenario` registers a `Scenario` subclass) and its checks
(`client_check`: an async function `(ctx: ClientContext) -> None` tied to one requirement row and one
scenario), ended the way every check ends (`missed`, `weak`, `skip`, `blocked`: `engine.checks`).

A client check is registered in the engine's one check registry too (`engine.checks.check`), so
`list`, `explain` and the catalog show client rows beside the servers'; what the engine does not know
(the scenario a check reads) is kept here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, cast

from conformance.clients.launch import Exit
from conformance.clients.scenario import Scenario
from conformance.clients.wire import Message, Recording
from conformance.engine.checks import Blocked, Check, check, registered, skip, weak
from conformance.model.verdicts import Verdict

#: The `scenario` of a pack's contract check: it judges every scenario run, first (the client ran by
#: the contract, sent something and exited 0), and the other checks of the run are blocked by it
#: when it does not pass (`ClientContext.needs`, `ClientContext.absent`).
EVERY_SCENARIO = "*"


@dataclass
class ClientContext:
    """All a client check sees: the scenario as played (its revision, transport, the recording) and how
    the client's process ended."""

    scenario: Scenario
    exit: Exit
    #: The contract case's verdict in this run (PASS when the client ran and exited 0).
    contract: Verdict
    contract_check: str
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    should_misses: list[str] = field(default_factory=list)

    @property
    def recording(self) -> Recording:
        return self.scenario.recording

    @property
    def revision(self) -> str:
        return self.scenario.revision

    @property
    def transport(self) -> str:
        return self.scenario.transport

    def requests(self, method: str) -> list[Message]:
        return self.recording.requests(method)

    def needs(self, method: str, act: str) -> list[Message]:
        """The client's messages of `method`. None is SKIP blocked by the contract case when the client
        did not run to its end; else WARN: the client did not do the scenario's act `act`, which MCP does
        not oblige it to (no FAIL without a MUST), though the official suite fails it."""
        found = self.requests(method)
        if found:
            return found
        self.unless_failed(f"the client sent no {method}")
        # the harness's own scenarios (`x-...`) have no official check
        official = "" if self.scenario.name.startswith("x-") else " (the official check fails this)"
        weak(f"the client sent no {method}, though the scenario asks it to {act}{official}")

    def absent(self, what: str) -> NoReturn:
        """Nothing to judge: blocked by the contract case when the client failed it, else SKIP."""
        self.unless_failed(what)
        skip(what)

    def unless_failed(self, what: str) -> None:
        """SKIP blocked by the contract case when the client failed it (`what` is missing because the
        client did not run to its end); return when it did not, for the check to judge the absence."""
        if self.contract != Verdict.PASS:
            raise Blocked(f"{what}: {self.exit.describe()}", self.contract_check)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def soft_warn(self, text: str) -> None:
        self.warnings.append(text)

    def miss_should(self, text: str) -> None:
        self.should_misses.append(text)


ClientCheckFunc = Callable[[ClientContext], Awaitable[None]]


@dataclass(frozen=True)
class ClientCheck:
    """A registered client check: the engine's `Check` and the scenario it reads."""

    check: Check
    scenario: str
    func: ClientCheckFunc


_SCENARIOS: dict[str, dict[str, type[Scenario]]] = {}
_CHECKS: dict[str, list[ClientCheck]] = {}


def scenario(cls: type[Scenario]) -> type[Scenario]:
    """Register a pack's scenario (a class decorator); its pack is the module's top package name."""
    pack = _pack_of(cls.__module__)
    known = _SCENARIOS.setdefault(pack, {})
    if cls.name in known:
        raise ValueError(f"scenario {cls.name} registered twice")
    known[cls.name] = cls
    return cls


def _pack_of(module: str) -> str:
    from conformance.model import packs

    for pack in packs.installed().values():
        if module == pack.package or module.startswith(pack.package + "."):
            return pack.name
    raise ValueError(f"module {module} belongs to no installed pack")


def client_check(
    check_id: str,
    requirement: str,
    title: str,
    *,
    scenario: str,
    revisions: tuple[str, ...] | None = None,
    transports: tuple[str, ...] = ("http", "sse", "stdio"),
) -> Callable[[ClientCheckFunc], ClientCheckFunc]:
    """Register `func` as check `check_id` judging the runs of scenario `scenario`."""

    def register(func: ClientCheckFunc) -> ClientCheckFunc:
        async def as_engine_check(ctx: Any) -> None:
            await func(cast(ClientContext, ctx))

        eras = ("legacy", "modern")
        check(check_id, requirement, title, eras=eras, transports=transports, revisions=revisions)(
            as_engine_check
        )
        found = registered(check_id)
        _CHECKS.setdefault(found.suite, []).append(ClientCheck(found, scenario, func))
        return func

    return register


def scenarios_of(pack: str) -> dict[str, type[Scenario]]:
    return dict(_SCENARIOS.get(pack, {}))


def checks_of(pack: str) -> list[ClientCheck]:
    return list(_CHECKS.get(pack, []))

"""Case results: the atoms of the canonical report (the verdicts and their rules:
`conformance.model.verdicts`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from conformance.model.verdicts import Verdict, unscored


class Identified(Protocol):
    """What a case takes from its check (`engine.checks.Check`): its identity and row."""

    @property
    def id(self) -> str: ...

    @property
    def suite(self) -> str: ...

    @property
    def requirement(self) -> str: ...

    @property
    def title(self) -> str: ...


@dataclass(frozen=True)
class CaseRecord:
    """One case, as the canonical report's case object holds it (its fields in the report's order): the
    one field list of a case. The engine makes it (`CaseResult`, written with `as_dict`); a report read
    back makes it again (`reporting.model.Case`, which adds what a baseline said of it)."""

    key: str
    check: str
    suite: str
    requirement: str
    level: str
    title: str
    target: int
    transport: str
    revision: str
    verdict: Verdict
    message: str
    duration: float
    evidence: Mapping[str, Any] = field(default_factory=dict)
    transcript: Sequence[Mapping[str, Any]] = field(default_factory=list)
    #: The key of the case whose verdict left this one nothing to judge (a SKIP): the server broke a
    #: transport rule in the very answer this case needed, or does not serve what the case reads.
    #: Absent from the report when None.
    blocked_by: str | None = None
    #: The row's track when it keeps this case from failing the run (`verdicts.unscored`): the case
    #: judges an experimental feature or an extension nobody claimed. Absent from the report when None.
    unscored: str | None = None
    #: The official suite's check IDs judging the same sentence as the case's row (`official.checks`),
    #: so each verdict reads in the IDs SDK teams are tiered by. Absent from the report when None.
    official: Sequence[str] | None = None
    #: On a SKIP the check gave a kind to (`verdicts.SKIP_KINDS`) other than "nothing to judge": that
    #: kind, and the run option that would judge the case (`option`), if one would. A SKIP with
    #: `blocked_by` is "blocked" whatever this says. Absent from the report when None.
    skip: Mapping[str, str] | None = None
    #: On a FAIL or WARN: the level it was judged at when that differs from the row's `level` ("weak
    #: evidence or no MUST" for a WARN under a MUST row, a missed "SHOULD" aspect of one, "--strict" on
    #: a SHOULD made FAIL), shown beside the row's level in every view. Absent from the report when None.
    judged_at: str | None = None


@dataclass(frozen=True)
class CaseResult(CaseRecord):
    """One case as the engine finishes it. The one way into the report is `as_dict` (the canonical
    report's case object); the one way back, for a case a worker process relayed, is `from_dict`."""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = str(self.verdict)  # a plain string in the report
        data["duration"] = round(self.duration, 6)
        if data["blocked_by"] is None:
            del data["blocked_by"]
        if data["unscored"] is None:
            del data["unscored"]
        if data["official"] is None:
            del data["official"]
        if data["skip"] is None:
            del data["skip"]
        if data["judged_at"] is None:
            del data["judged_at"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        """A case from its `as_dict` form (a worker's relayed case), its verdict a `Verdict` again."""
        return cls(**{**data, "verdict": Verdict(data["verdict"])})


def case_key(check_id: str, transport: str, revision: str, target: int) -> str:
    """A stable ID across runs: suite check, transport, revision (and the target's index when > 0)."""
    suffix = f"#{target}" if target else ""
    return f"{check_id}[{transport}@{revision}]{suffix}"


#: A case key's parts: `check[transport@revision]`, `#target` past the first, and a client case's
#: `/scenario` (`clients.run.client_case_key`).
_KEY = re.compile(r"(?P<where>[^\[]*\[[^\]]*\])(?:#(?P<target>[0-9]+))?(?P<scenario>/.+)?")


def key_parts(key: str) -> tuple[str, int, str] | None:
    """(`check[transport@revision]`, target index, `/scenario` or ""), or None for a key of no such form."""
    parts = _KEY.fullmatch(key)
    if parts is None:
        return None
    return parts["where"], int(parts["target"] or 0), parts["scenario"] or ""


def with_target(key: str, target: int) -> str:
    """The key of the same case at another target index (a merge renumbers targets), its scenario kept."""
    parts = key_parts(key)
    if parts is None:
        return key
    where, _, scenario = parts
    return where + (f"#{target}" if target else "") + scenario


def row_case(
    check: Identified,
    row: Any,
    key: str,
    *,
    target: int,
    transport: str,
    revision: str,
    verdict: Verdict,
    message: str,
    claimed: bool,
    **more: Any,
) -> CaseResult:
    """A case of `check`, with what its requirement `row` says at the case's revision (`Requirement.at`:
    level, track, official checks): the one place a server's or a client's case takes its row's fields.
    `more` are the other fields of `CaseRecord` (duration, evidence, transcript, blocked_by, ...)."""
    return CaseResult(
        key=key,
        check=check.id,
        suite=check.suite,
        requirement=check.requirement,
        level=row.level,
        title=check.title,
        target=target,
        transport=transport,
        revision=revision,
        verdict=verdict,
        message=message,
        unscored=unscored(row.track, claimed),
        official=list(row.official_checks) or None,
        **more,
    )

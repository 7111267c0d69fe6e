"""The official conformance suite (`@modelcontextprotocol/conformance`) in this harness's terms.

SDK teams are tiered by the official suite and talk in its scenario and check IDs, so every verdict here
should be readable in those IDs too. The data is split so that each fact is said once:

- a requirement row names the official checks that judge its sentence (`official.checks` of the row,
  validated by `requirements.schema.json`);
- `official.json` (validated by `official.schema.json` when read) pins the release the IDs were read
  from, the frozen server set of each revision (`requirements/<revision>.yaml` of that release), every
  server check of those scenarios and of the release's scenarios no set names yet, the checks its runner
  emits for any scenario, and why a check no row names is not judged here; apart from those, the
  release's authorization-server scenarios (`authorization_server`), which no frozen set scores and
  `mcp-conformance authorization` judges.

How a release is read: unpack `npm pack @modelcontextprotocol/conformance@VERSION` outside the repo;
the revisions' sets are its `requirements/*.yaml`; the check IDs each server scenario emits are the
constants and `id:` members of that scenario in the package's `dist/index.js` (or, in a checkout at the
release's commit, `src/scenarios/server/`), a check's `introducedIn` giving `since`; the registry's
`dist.integrity` pins the tarball. `tests/model/test_official.py` compares the data with those files
when `MCP_CONFORMANCE_OFFICIAL_DIR` names the unpacked package. Only IDs enter the repo.

From the two, `coverage` says for a revision which rows judge each official check, or why none does, and
`summary` reads a report the same way: of the official checks judged at a revision, how many passed.
Both share `check_coverage`, so the coverage command and a report's summary count the same checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

OFFICIAL_ID = "urn:mcp-conformance:official:1"
#: The revisions the official suite freezes a server set for (`requirements/<revision>.yaml`).
REVISIONS = ("2025-11-25", "2026-07-28")


class OfficialError(ValueError):
    """`official.json`, or a row's `official` field, that does not hold together (one line)."""


@dataclass(frozen=True)
class NotJudged:
    """Why no row judges an official check: its reason class and, in a few words, what it needs."""

    reason: str
    why: str


@dataclass(frozen=True)
class Official:
    """The pinned release and what it names, as `official.json` says it."""

    release: Mapping[str, Any]
    #: revision -> the scored server scenarios, in the release's order.
    scored: Mapping[str, tuple[str, ...]]
    #: revision -> scenario -> the release's reason it runs but is not scored.
    not_scored: Mapping[str, Mapping[str, str]]
    #: scenario -> its check IDs.
    scenarios: Mapping[str, tuple[str, ...]]
    not_judged: Mapping[str, NotJudged]
    #: scenario -> the release's status, for a scenario no revision's frozen set names.
    outside: Mapping[str, str]
    #: check -> the first revision whose wire it is emitted at, when later than its scenario's.
    since: Mapping[str, str]
    #: The checks the runner emits for any scenario.
    runner: tuple[str, ...]
    #: The authorization-server scenarios (run against an OAuth authorization server), apart from the
    #: server sets: scenario -> its check IDs. The server side's only (empty on the client side).
    authorization_server: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: check -> the first revision it is emitted at, for those of `authorization_server`.
    authorization_since: Mapping[str, str] = field(default_factory=dict)
    #: The client side (`official.json`'s `client`), read the same way: its scored scenarios under
    #: `scored`, and `unlisted` the scenarios whose checks are not listed yet, each with why.
    client: Official | None = None
    unlisted: Mapping[str, NotJudged] = field(default_factory=dict)
    #: "server" or "client": which side's checks this is.
    side: str = "server"

    @property
    def label(self) -> str:
        """`@modelcontextprotocol/conformance 0.2.0-alpha.12`: the release every figure is of."""
        return f"{self.release['package']} {self.release['version']}"

    @property
    def pin(self) -> str:
        """What pins the release: its commit, or the npm tarball's integrity (a registry package names
        no commit)."""
        if "commit" in self.release:
            return f"commit {self.release['commit'][:12]}"
        return f"npm {self.release['integrity'][:19]}"

    def emits_at(self, check: str, revision: str) -> bool:
        """Whether a scenario run at `revision`'s wire emits `check` (REVISIONS are ISO dates)."""
        since = self.since.get(check) or self.authorization_since.get(check) or revision
        return revision >= since

    def scenarios_of(self, check: str) -> tuple[str, ...]:
        """The scenarios that emit `check` (a check ID is normally one scenario's own), the
        authorization-server scenarios' and the client side's too."""
        every = {**self.scenarios, **self.authorization_server}
        own = tuple(name for name, checks in every.items() if check in checks)
        return own + (self.client.scenarios_of(check) if self.client else ())

    @property
    def authorization_checks(self) -> frozenset[str]:
        """Every check of the authorization-server scenarios."""
        return frozenset(c for checks in self.authorization_server.values() for c in checks)

    def qualified(self, checks: Iterable[str]) -> list[str]:
        """`scenario:check` for each check, the form an official expected-failures file uses."""
        return [f"{scenario}:{check}" for check in checks for scenario in self.scenarios_of(check)]

    def revision_scenarios(self, revision: str) -> list[tuple[str, str | None]]:
        """(scenario, None) for each scored scenario of `revision`, then (scenario, reason) for each
        one the release runs but does not score."""
        out: list[tuple[str, str | None]] = [(name, None) for name in self.scored.get(revision, ())]
        out += list(self.not_scored.get(revision, {}).items())
        out += [(name, f"{status}, in no frozen set") for name, status in self.outside.items()]
        return out


@cache
def load() -> Official:
    """`official.json`, validated against its schema and checked for consistency (every scenario a
    revision names has its checks listed; every check listed as not judged is a check of the release)."""
    from conformance import schemas

    data = json.loads(resources.files("conformance").joinpath("official.json").read_text(encoding="utf-8"))
    problems = schemas.errors(OFFICIAL_ID, None, data, limit=1)
    if problems:
        raise OfficialError(f"official.json breaks its schema at {problems[0]}")
    server = _side(data, data["release"], "server")
    client = _side(data["client"], data["release"], "client") if "client" in data else None
    return Official(**{**server.__dict__, "client": client})


def _side(data: Mapping[str, Any], release: Mapping[str, Any], side: str) -> Official:
    """One side of `official.json` (the top level is the server's, `client` the client's), checked."""
    scenarios = {name: tuple(checks) for name, checks in data["scenarios"].items()}
    unlisted = {name: NotJudged(**why) for name, why in data.get("unlisted", {}).items()}
    _consistent(data, scenarios, side, set(unlisted))
    # The authorization-server scenarios are listed beside the server side's, never the client's.
    apart = data.get("authorization_server", {}) if side == "server" else {}
    return Official(
        release=release,
        scored={rev: tuple(sets[side]) for rev, sets in data["revisions"].items()},
        not_scored={rev: dict(sets["not_scored"]) for rev, sets in data["revisions"].items()},
        scenarios=scenarios,
        not_judged={check: NotJudged(**why) for check, why in data["not_judged"].items()},
        outside=dict(data.get("outside_sets", {})),
        since=dict(data.get("since", {})),
        runner=tuple(data.get("runner", ())),
        authorization_server={name: tuple(c) for name, c in apart.get("scenarios", {}).items()},
        authorization_since=dict(apart.get("since", {})),
        unlisted=unlisted,
        side=side,
    )


def of_side(side: str) -> Official:
    """The official data of `side` ("server" or "client")."""
    data = load()
    if side == "server":
        return data
    if data.client is None:
        raise OfficialError("official.json lists no client side")
    return data.client


def _consistent(
    data: Mapping[str, Any], scenarios: Mapping[str, tuple[str, ...]], side: str, unlisted: set[str]
) -> None:
    """Refuse data that names a scenario without its checks (unless it says why they are not listed
    yet), or a check no scenario (nor the runner) emits, or a runner check without its reason: each
    would make a count silently wrong."""
    every = {check for checks in scenarios.values() for check in checks}
    named = [
        (rev, name) for rev, sets in data["revisions"].items() for name in [*sets[side], *sets["not_scored"]]
    ]
    named += [("outside_sets", name) for name in data.get("outside_sets", {})]
    for where, name in named:
        if name not in scenarios and name not in unlisted:
            raise OfficialError(
                f"official.json: {where} names scenario {name!r}, whose checks it does not list"
            )
    runner = set(data.get("runner", ()))
    for check in [*data["not_judged"], *data.get("since", {})]:
        if check not in every | runner:
            raise OfficialError(f"official.json: {check!r} is named, but no scenario emits it")
    for check in runner - set(data["not_judged"]):
        raise OfficialError(f"official.json: runner check {check!r} is not in not_judged")


def check_rows(rows: Iterable[Any]) -> None:
    """Refuse a row that names a check the release does not emit, or one `official.json` says no row
    judges: a mapping must be to a real ID, and a check is either judged or listed as not judged."""
    official = load()
    sides = [official, *([official.client] if official.client else [])]
    every = {check for side in sides for checks in side.scenarios.values() for check in checks}
    every |= official.authorization_checks
    not_judged = {check for side in sides for check in side.not_judged}
    for row in rows:
        for check in row.official_checks:
            if check not in every:
                raise OfficialError(
                    f"requirement {row.id}: official check {check!r} is not a server, client or "
                    f"authorization-server check of {official.label}"
                )
            if check in not_judged:
                raise OfficialError(
                    f"requirement {row.id}: official check {check!r} is also listed as not judged"
                    " in official.json"
                )


@dataclass(frozen=True)
class CheckCoverage:
    """One official check of a revision's server set, as this harness stands to it."""

    scenario: str
    check: str
    #: None for a scored scenario, else the release's reason it is not scored (extension, pending, ...).
    not_scored: str | None
    #: The rows that judge it at this revision (empty: not judged here).
    rows: tuple[str, ...]
    #: Why not, when `rows` is empty: `official.json`'s reason, or `other-revisions` for a check whose
    #: rows judge other revisions only.
    reason: str = ""
    why: str = ""
    #: False for a scenario no revision's frozen set names (counted apart from the not-scored ones).
    frozen: bool = True


#: What a coverage line shows in the check column for a scenario whose checks are not listed yet.
UNLISTED = "(its checks, not listed yet)"


def check_coverage(
    revision: str, rows_at: Mapping[str, Sequence[str]], side: str = "server"
) -> list[CheckCoverage]:
    """Every check of `revision`'s set of `side` (scored first, then not scored), with the rows that
    judge it at that revision. `rows_at` is check -> rows judging it at `revision`, from the catalog
    (the coverage command) or a report's cases (its summary): the one difference between the two. A
    scenario whose checks are not listed yet is one entry (`UNLISTED`) with its reason."""
    official = of_side(side)
    out = []
    for scenario, not_scored in official.revision_scenarios(revision):
        frozen = scenario not in official.outside
        if scenario in official.unlisted:
            why = official.unlisted[scenario]
            out.append(CheckCoverage(scenario, UNLISTED, not_scored, (), why.reason, why.why, frozen))
            continue
        for check in official.scenarios[scenario]:
            if not official.emits_at(check, revision):
                continue
            rows = tuple(rows_at.get(check, ()))
            if rows:
                out.append(CheckCoverage(scenario, check, not_scored, rows, frozen=frozen))
            elif check in official.not_judged:
                why = official.not_judged[check]
                out.append(CheckCoverage(scenario, check, not_scored, (), why.reason, why.why, frozen))
            else:
                why_not = f"its rows judge other revisions than {revision}"
                out.append(CheckCoverage(scenario, check, not_scored, (), "other-revisions", why_not, frozen))
    return out


def authorization_coverage(revision: str, rows_at: Mapping[str, Sequence[str]]) -> list[CheckCoverage]:
    """Every check of the release's authorization-server scenarios emitted at `revision`, with the rows
    judging it there (`not_scored` says why no frozen set scores it). Judged by `mcp-conformance
    authorization`, so counted apart from the server set's checks."""
    official = load()
    out = []
    for scenario, checks in official.authorization_server.items():
        for check in checks:
            if not official.emits_at(check, revision):
                continue
            rows = tuple(rows_at.get(check, ()))
            reason, why = ("", "") if rows else ("not-yet-judged", f"no row judges it at {revision}")
            out.append(CheckCoverage(scenario, check, "in no frozen set", rows, reason, why))
    return out


def rows_by_check(rows: Iterable[Any]) -> dict[str, list[str]]:
    """check -> the IDs of the `rows` (requirement rows) naming it, in the order given."""
    out: dict[str, list[str]] = {}
    for row in rows:
        for check in row.official_checks:
            out.setdefault(check, []).append(row.id)
    return out


def counts_line(revision: str, entries: Sequence[CheckCoverage], side: str = "server") -> str:
    """The one line `coverage` ends with: of the revision's scored checks, how many a row judges and why
    the others are not; the not-scored scenarios' checks apart."""
    scored = [e for e in entries if e.not_scored is None]
    apart = [e for e in entries if e.not_scored is not None and e.frozen]
    outside = [e for e in entries if not e.frozen]
    reasons: dict[str, int] = {}
    for entry in scored:
        if not entry.rows:
            reasons[entry.reason] = reasons.get(entry.reason, 0) + 1
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    scenarios = len({e.scenario for e in scored})
    judged = sum(1 for e in scored if e.rows)
    return (
        f"{revision}: {len(scored)} official {side} checks in {scenarios} scored scenarios, "
        f"{judged} judged here, {len(scored) - judged} not"
        f"{' (' + why + ')' if why else ''}; not scored: {len(apart)} checks in "
        f"{len({e.scenario for e in apart})} scenarios, {sum(1 for e in apart if e.rows)} judged here"
        + (
            f"; in no frozen set: {len(outside)} checks in {len({e.scenario for e in outside})} scenarios, "
            f"{sum(1 for e in outside if e.rows)} judged here"
            if outside
            else ""
        )
    )


#: How a check's cases at a revision add up: any FAIL or ERROR fails it; else a PASS or WARN passes it
#: (a WARN is a SHOULD missed, which fails no official tier either); else (every case SKIP) it was not
#: judged on this server.
def check_verdict(verdicts: Iterable[str]) -> str:
    seen = set(verdicts)
    if seen & {"FAIL", "ERROR"}:
        return "failed"
    if seen & {"PASS", "WARN"}:
        return "passed"
    return "skipped"


@dataclass(frozen=True)
class RevisionSummary:
    """A report's official view of one revision: the scored checks judged there, by outcome, and the
    not-scored ones apart."""

    revision: str
    judged: int
    passed: int
    failed: int
    skipped: int
    apart_judged: int
    apart_passed: int
    side: str = "server"

    def line(self, label: str) -> str:
        whose = "" if self.side == "server" else f"{self.side} "
        return (
            f"official {whose}{self.revision} ({label}): {self.passed} of {self.judged} official checks "
            f"judged here passed, {self.failed} failed, {self.skipped} skipped; not scored: "
            f"{self.apart_passed} of {self.apart_judged} passed"
        )


def summary(cases: Iterable[Any]) -> list[RevisionSummary]:
    """Per side and official revision the report has cases at, the official view of them. `cases` are
    the report's (`model.Case`: `revision`, `requirement`, `official`, `own_verdict`); a check is the
    server side's or the client side's by the scenarios `official.json` lists it under."""
    cases = list(cases)
    data = load()
    out = []
    for side in [data, *([data.client] if data.client else [])]:
        own = {check for checks in side.scenarios.values() for check in checks}
        out += _side_summary(cases, side.side, own)
    return out


def _side_summary(cases: list[Any], side: str, own: set[str]) -> list[RevisionSummary]:
    by_revision: dict[str, dict[str, list[str]]] = {}
    rows_at: dict[str, dict[str, list[str]]] = {}
    for case in cases:
        # A check of neither side's scenarios (an authorization-server one: no frozen set scores it)
        # is not in `own`, so stays out of the side's figures.
        if case.revision not in REVISIONS or not case.official:
            continue
        for check in case.official:
            if check not in own:
                continue
            by_revision.setdefault(case.revision, {}).setdefault(check, []).append(str(case.own_verdict))
            rows = rows_at.setdefault(case.revision, {}).setdefault(check, [])
            if case.requirement not in rows:
                rows.append(case.requirement)
    out = []
    for revision in REVISIONS:
        if revision not in by_revision:
            continue
        entries = [e for e in check_coverage(revision, rows_at[revision], side) if e.rows]
        outcome = {e.check: check_verdict(by_revision[revision][e.check]) for e in entries}
        scored = [e.check for e in entries if e.not_scored is None]
        apart = [e.check for e in entries if e.not_scored is not None and e.frozen]
        out.append(
            RevisionSummary(
                revision,
                judged=len(scored),
                passed=sum(outcome[c] == "passed" for c in scored),
                failed=sum(outcome[c] == "failed" for c in scored),
                skipped=sum(outcome[c] == "skipped" for c in scored),
                apart_judged=len(apart),
                apart_passed=sum(outcome[c] == "passed" for c in apart),
                side=side,
            )
        )
    return out

"""Each planted defect of the MAP reference must FAIL exactly the rows it breaks, and nothing else.

The mutants are `tests/servers/map_mutants.py --defect NAME`: the reference service with one rule
overridden. Each runs over stdio on 2026-07-28 against every MAP check except the three decision races,
which cost a process per racer and catch only defects of atomicity: those run for `lost-lock` (and for
`text-only-errors`, whose losers' 409s are weak evidence). Every run also carries the one explained WARN
of the suite (MAP-READ-006, contract-revision-unverified, gap rule G-M6).

Two races against a fixture hook FAIL a mutant only in the rounds where the right side wins: MAP-CONC-003
(a decision against a term change) for commit-on-409, snapshot-from-current and stale-revision-accepted,
and MAP-CONC-005 (a decision against a revocation) for refuse-after-commit. Both sides are released at
one barrier and the start is staggered both ways in some rounds, so both orders occur; in the runs
measured, each side won at least 3 of the 20 rounds, and a mutant failed 17 or more of them.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.engine.checks import Check
from conformance.model import requirements
from conformance.model.verdicts import miss_verdict
from tests.map_helpers import DECISION_RACES, PROFILE, checks, non_pass
from tests.profile_helpers import mutant_params
from tests.servers.map_mutants import DEFECTS

EXPLAINED = {("map-review.read.publication-details", "WARN")}
F = "FAIL"
W = "WARN"
#: Every check but MAP-PROFILE-001's, SKIP: what a server that shows neither MAP tool gets besides it.
BLOCKED = {(c.id, "SKIP") for c in checks(without=DECISION_RACES) if c.id != "map-review.profile.shown"}


#: Each check's row level: a miss is FAIL for MUST, MUST NOT and MUST (schema), WARN for implied (the seed
#: states it without an RFC 2119 keyword, `conformance.model.verdicts`).
LEVEL = {c.id: requirements.get(c.requirement).level for c in checks()}


def fail(*check_ids: str) -> set[tuple[str, str]]:
    """The rows a mutant misses, each with the verdict its row's level gives a miss."""
    return {(f"map-review.{c}", miss_verdict(LEVEL[f"map-review.{c}"])) for c in check_ids}


EXPECTED: dict[str, set[tuple[str, str]]] = {
    "lost-lock": fail("race.approve-2", "race.approve-8", "race.mixed"),
    "commit-on-409": fail(
        "decide.stale-revision",
        "decide.never-issued-revision",
        "decide.review-addressing",
        "decide.refusals-commit-nothing",
        "race.decide-vs-mutate",
    ),
    "no-expiry": fail("decide.expired", "race.expiry-boundary", "golden.p7-exchange"),
    "digest-without-final-newline": fail("digest.content", "digest.seed-artifact", "digest.exact-bytes"),
    "text-differs": fail("read.text-mirror", "golden.p7-exchange"),
    "approve-accepts-comment": fail("decide.comment-forbidden"),
    "request-changes-without-comment": fail("decide.request-changes-needs-comment"),
    "recipient-not-enforced": fail("decide.recipient-only"),
    "allowed-actions-not-enforced": fail("decide.allowed-actions"),
    "snapshot-from-current": fail("digest.snapshot-frozen", "race.decide-vs-mutate"),
    "stale-revision-accepted": fail(
        "decide.stale-revision",
        "decide.never-issued-revision",
        "decide.review-addressing",
        "race.decide-vs-mutate",
    ),
    "wrong-state": fail("read.open-review", "read.state-awaiting", "golden.p7-exchange"),
    "tenant-not-enforced": fail("read.other-tenant"),
    "leaky-refusal": fail("read.other-account", "read.other-tenant"),
    "revocation-ignored": fail("decide.permission-revoked"),
    "withdraw-ignored": fail("decide.withdrawn"),
    # MAP-TOOL-003 is a SHOULD (MCP makes outputSchema optional; the seed is illustrative): WARN.
    "no-output-schema": {("map-review.tools.read-output-schema", W)},
    # decide answers queued, but the decided review still reads as open (gap rule G-M3).
    "still-open-after-decision": fail("decide.read-after-decision"),
    "uw-digest-spelling": fail(
        "read.open-review", "read.contract-pinned", "digest.contract-format", "golden.p7-exchange"
    ),
    "utf16-comment-length": fail("decide.comment-length"),
    "reference-normalised": fail("read.reference-echo", "golden.p7-exchange"),
    "unknown-action": fail("read.allowed-actions", "golden.p7-exchange"),
    "fabricates-unknown": fail("read.unknown-reference"),
    "revision-not-bumped": fail("read.revision-binds-terms"),
    # The details break the contract's audience rule: the row's usual explained WARN becomes a FAIL.
    "restricted-without-audience": fail("read.publication-details"),
    "approve-reports-published": fail("decide.approve", "golden.p7-exchange"),
    "request-changes-reports-queued": fail("decide.request-changes"),
    "decline-queues-job": fail("decide.decline"),
    "idempotent-reapprove": fail("decide.already-decided"),
    "refuse-after-commit": fail("decide.permission-revoked", "race.decide-vs-revoke"),
    "unconditional-write": fail("decide.revision-required"),
    # decide_review is callable but not listed: its schema cannot be compared (SKIP, not a false PASS).
    "listed-without-decide": fail("tools.listed") | {("map-review.tools.decide-input-schema", "SKIP")},
    # Neither tool listed: one FAIL (MAP-PROFILE-001), every other row SKIP, blocked by it.
    "lists-no-review-tools": fail("profile.shown") | BLOCKED,
    "loose-read-input": fail("tools.read-input-schema", "read.rejects-bad-input"),
    "decide-schema-without-comment-rule": fail("tools.decide-input-schema"),
    "invalid-output-schema": fail("tools.schemas-meta-valid") | {("map-review.tools.read-output-schema", W)},
    "publish-accepted": fail("decide.decision-enum"),
    "job-publishes-public": fail("decide.approved-snapshot"),
    # No structured code anywhere: every row that expects a 409/410/403 class passes on weak evidence.
    "text-only-errors": {
        (f"map-review.{c}", W)
        for c in (
            "decide.already-decided",
            "decide.decline",
            "decide.request-changes",
            "decide.stale-revision",
            "decide.never-issued-revision",
            "decide.expired",
            "decide.withdrawn",
            "decide.allowed-actions",
            "decide.permission-revoked",
            "decide.recipient-only",
            "decide.review-addressing",
            "decide.read-after-decision",
            "race.approve-2",
            "race.approve-8",
            "race.mixed",
            "race.decide-vs-mutate",
            "race.decide-vs-revoke",
            "race.expiry-boundary",
            "golden.p7-exchange",
        )
    },
}
RACE_MUTANTS = {"lost-lock", "text-only-errors"}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)
    assert len(EXPECTED) >= 12


#: The one check no mutant fails alone: any read that is not stable also breaks every "commits nothing"
#: comparison (C-4), so its mutant would fail dozens of rows; it is proven by the reference passing.
UNMUTATED = {"map-review.read.stable"}


def test_every_check_but_one_has_a_mutant_that_fails_it() -> None:
    """FAIL, or WARN for a SHOULD row (MAP-TOOL-003), which can give nothing harder."""
    failed = {check for expected in EXPECTED.values() for check, verdict in expected if verdict in (F, W)}
    assert {c.id for c in checks()} - failed == UNMUTATED


@pytest.fixture(scope="module")
def reports(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the mutants of one group (`mutant_params`) this session selected, three at a time."""
    return PROFILE.mutant_reports(request, tmp_path_factory, __file__, EXPECTED, selection, parallel=3)


def selection(defect: str) -> list[Check]:
    """The checks a mutant runs: the decision races only where its defect is about them."""
    if defect == "lost-lock":
        return checks(
            only=(*DECISION_RACES, "map-review.decide.approve", "map-review.decide.already-decided")
        )
    if defect in RACE_MUTANTS:
        return checks()
    return checks(without=DECISION_RACES)


@pytest.mark.slow
@mutant_params(EXPECTED)
def test_mutant_fails_exactly_its_rows(defect: str, reports: dict[str, Any]) -> None:
    report = reports[defect]
    explained = (
        set()
        if defect in ("lost-lock", "restricted-without-audience", "lists-no-review-tools")
        else EXPLAINED
    )
    expected = EXPECTED[defect] | explained
    assert non_pass(report) == expected
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert all(c["message"] and (c["evidence"] or c["transcript"]) for c in failed), "a FAIL carries evidence"
    assert report["footer"]["exit_code"] == (1 if failed else 0)

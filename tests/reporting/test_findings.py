"""Findings: the cases that did not pass, grouped by defect (conformance/reporting/findings.py).

The grouping is pure, so it is tested on cases built here: one behaviour seen in several revisions is
one finding whatever revision-specific words its messages carry, two behaviours of one requirement are
two, worst verdict first, PASS and SKIP are no finding, and a SKIP blocked by a finding's case is
listed under it.
"""

from __future__ import annotations

from typing import Any

from conformance.model.verdicts import Verdict
from conformance.protocol.session import SENTINEL_METHODS
from conformance.reporting.findings import (
    ERA_METHODS,
    FINDING_VERDICTS,
    REVISION_PLACEHOLDER,
    findings,
    normalize,
)
from conformance.reporting.model import Case

REVISIONS = ("2026-07-28", "2025-11-25", "2025-06-18")


def _case(requirement: str, verdict: str, message: str, revision: str, **extra: Any) -> Case:
    fields: dict[str, Any] = {
        "key": f"{requirement.lower()}[stdio@{revision}]",
        "check": requirement.lower(),
        "suite": "base",
        "requirement": requirement,
        "level": "SHOULD",
        "title": f"the {requirement} row",
        "target": 0,
        "transport": "stdio",
        "revision": revision,
        "verdict": Verdict(verdict),
        "message": message,
        "duration": 0.0,
    }
    return Case(**(fields | extra))


def _sentinel(revision: str) -> str:
    return "server/discover" if revision == "2026-07-28" else "ping"


def test_the_era_methods_are_the_sessions_settling_requests() -> None:
    assert set(ERA_METHODS) == set(SENTINEL_METHODS.values())


def test_normalize_replaces_only_what_names_the_revision_or_session() -> None:
    line = '`{"jsonrpc":"2.0","id":15,"method":42}` (the server/discover after it was answered) at 2026-07-28'
    assert normalize(line, "2026-07-28") == normalize(line.replace("15", "13"), "2026-07-28")
    assert REVISION_PLACEHOLDER in normalize(line, "2026-07-28")
    # Another revision named in the message is what the server did, not where: it stays.
    other = "error -32602 (the code 2026-07-28 adopted), not the -32002 this revision asks for"
    assert normalize(other, "2025-11-25") == other
    # A method that merely contains the word is no settling request; error codes are behaviour.
    assert normalize("pings/list failed with -32603", "2025-11-25") == "pings/list failed with -32603"


def test_one_behaviour_in_several_revisions_is_one_finding() -> None:
    cases = [
        _case(
            "BASE-RPC-005",
            "WARN",
            f'no answer to `{{"id": {n}}}` (the {_sentinel(r)} after it was answered)',
            r,
            judged_at="SHOULD",
            level="MUST",
        )
        for n, r in enumerate(REVISIONS)
    ]
    [found] = findings(cases)
    assert found.requirement == "BASE-RPC-005" and found.verdict == Verdict.WARN
    assert found.revisions == REVISIONS and found.transports == ("stdio",) and found.targets == (0,)
    assert found.keys == tuple(c.key for c in cases)
    assert found.level_shown == "MUST; judged as SHOULD"
    assert "<ping|server/discover>" in found.message and "server/discover after" not in found.message
    assert found.where == f"3 revisions ({', '.join(REVISIONS)}), stdio"
    # The fingerprint names the defect, not where it was seen: one revision fewer, the same finding.
    assert findings(cases[1:])[0].fingerprint == found.fingerprint


def test_identical_messages_are_shown_as_they_are() -> None:
    cases = [_case("BASE-RES-015", "WARN", "error -32602, not -32002", r) for r in REVISIONS]
    [found] = findings(cases)
    assert found.message == "error -32602, not -32002"


def test_two_behaviours_of_one_requirement_are_two_findings_worst_first() -> None:
    cases = [
        _case("BASE-PROMPT-005", "WARN", "drew error -32603, not -32602", REVISIONS[0]),
        _case("BASE-PROMPT-005", "WARN", "drew error 0, not -32602", REVISIONS[1]),
        _case("BASE-PROMPT-005", "WARN", "drew error 0, not -32602", REVISIONS[2]),
        _case("BASE-ZED-001", "FAIL", "broken", REVISIONS[0], level="MUST"),
        _case("BASE-ALPHA-001", "PASS", "", REVISIONS[0]),
        _case("BASE-ALPHA-002", "SKIP", "not declared", REVISIONS[0]),
    ]
    found = findings(cases)
    assert [(f.verdict, f.requirement, len(f.keys)) for f in found] == [
        (Verdict.FAIL, "BASE-ZED-001", 1),
        (Verdict.WARN, "BASE-PROMPT-005", 1),
        (Verdict.WARN, "BASE-PROMPT-005", 2),
    ]
    assert len({f.fingerprint for f in found}) == 3
    assert findings(cases) == found, "pure: the same cases give the same findings"


def test_a_finding_lists_the_skips_its_cases_blocked_and_verdicts_can_be_chosen() -> None:
    fail = _case("BASE-HTTP-001", "FAIL", "wrong content type", REVISIONS[0], level="MUST")
    blocked = _case("BASE-TOOLS-001", "SKIP", "blocked", REVISIONS[0], blocked_by=fail.key)
    unscored = _case("APPS-UI-001", "FAIL", "no ui", REVISIONS[0], unscored="extension")
    found = findings([fail, blocked, unscored])
    assert [f.requirement for f in found] == ["APPS-UI-001", "BASE-HTTP-001"]
    assert found[0].unscored == "extension" and found[1].unscored is None
    assert found[1].blocks == (blocked.key,)
    assert Verdict.SKIP not in FINDING_VERDICTS and Verdict.PASS not in FINDING_VERDICTS
    assert [f.verdict for f in findings([fail, blocked], verdicts={Verdict.SKIP})] == [Verdict.SKIP]

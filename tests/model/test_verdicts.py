"""The verdict module's rules as tables: level x strict -> verdict, what blocks, what a baseline
excuses, and the exit code of a report (3 for an unreachable target; 130 is left to the CLI)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.model import verdicts
from conformance.model.verdicts import Verdict
from conformance.reporting import canonical


@pytest.mark.parametrize(
    ("level", "normal", "strict"),
    [
        ("MUST", "FAIL", "FAIL"),
        ("MUST NOT", "FAIL", "FAIL"),
        ("MUST (schema)", "FAIL", "FAIL"),
        ("implied", "WARN", "FAIL"),
        ("SHOULD", "WARN", "FAIL"),
        ("SHOULD NOT", "WARN", "FAIL"),
        ("MAY", "WARN", "WARN"),
        ("info", "WARN", "WARN"),
    ],
)
def test_miss_verdict_by_level_and_strict(level: str, normal: str, strict: str) -> None:
    assert verdicts.miss_verdict(level) == normal
    assert verdicts.miss_verdict(level, strict=True) == strict
    assert verdicts.level_fails(level) == (normal == "FAIL")


def test_every_level_is_covered() -> None:
    assert set(verdicts.LEVELS) == verdicts.FAILING_LEVELS | verdicts.STRICT_LEVELS | {"MAY", "info"}


def test_verdict_sets() -> None:
    assert [str(v) for v in verdicts.VERDICTS] == ["PASS", "FAIL", "WARN", "SKIP", "ERROR", "XFAIL", "XPASS"]
    assert {"FAIL", "ERROR", "XPASS"} == verdicts.BLOCKING
    assert {"FAIL", "WARN"} == verdicts.EXCUSABLE
    assert verdicts.should_miss_verdict(False) == "WARN" and verdicts.should_miss_verdict(True) == "FAIL"
    assert [verdicts.baselined(v) for v in ("FAIL", "WARN", "PASS", "SKIP", "ERROR")] == [
        "XFAIL",
        "XFAIL",
        "XPASS",
        None,
        None,
    ]
    # Every verdict has a pytest outcome and a JUnit element; exactly the blocking ones fail an item.
    assert {v for v, o in verdicts.PYTEST_OUTCOME.items() if o == "failed"} == verdicts.BLOCKING
    assert set(verdicts.JUNIT_ELEMENT) == set(Verdict)


def _report(cases: list[str], *, complete: bool = True, unreachable: bool = False) -> dict:
    return {
        "targets": [{"index": 0, "unreachable": unreachable}],
        "cases": [{"verdict": v} for v in cases],
        "footer": {"complete": complete},
    }


@pytest.mark.parametrize(
    ("cases", "complete", "unreachable", "code"),
    [
        (["PASS", "WARN", "SKIP", "XFAIL"], True, False, 0),
        ([], True, False, 0),
        (["PASS", "FAIL"], True, False, 1),
        (["PASS", "ERROR"], True, False, 1),
        (["PASS", "XPASS"], True, False, 1),
        (["SKIP", "SKIP"], True, False, 1),  # nothing judged
        (["PASS"], False, False, 1),  # incomplete
        (["PASS"], True, True, 3),  # unreachable wins
        (["FAIL"], False, True, 3),
    ],
)
def test_exit_code_table(cases: list[str], complete: bool, unreachable: bool, code: int) -> None:
    assert verdicts.exit_code(unreachable=unreachable, complete=complete, verdicts=cases) == code
    assert canonical.exit_code(_report(cases, complete=complete, unreachable=unreachable)) == code
    assert verdicts.EXIT_UNREACHABLE == 3


def test_refresh_leaves_an_interrupted_run_at_130() -> None:
    report = _report(["FAIL"], complete=False)
    report["footer"]["exit_code"] = verdicts.EXIT_INTERRUPTED
    assert canonical.refresh(report)["footer"]["exit_code"] == 130
    report["footer"]["exit_code"] = 0
    assert canonical.refresh(report)["footer"]["exit_code"] == 1


def test_who_claims_an_experimental_row() -> None:
    # A row on an experimental feature or an extension fails the run only when claimed: by
    # --experimental, by the target's `experimental = true`, or by naming its suite with --suite when
    # that suite is a profile (naming the base protocol's pack claims nothing).
    from conformance.engine.context import RunOptions
    from conformance.engine.runner import claimed
    from conformance.model.targets import Target
    from conformance.model.verdicts import Verdict, gate, unscored

    plain = Target(kind="stdio", argv=("server",))
    assert not claimed(RunOptions(), plain, "base")
    assert claimed(RunOptions(experimental=True), plain, "base")
    assert claimed(RunOptions(), Target(kind="stdio", argv=("server",), experimental=True), "base")
    assert not claimed(RunOptions(claimed_suites=frozenset({"base"})), plain, "base")
    assert claimed(RunOptions(claimed_suites=frozenset({"map-review"})), plain, "map-review")
    assert unscored("experimental", claimed=False) == "experimental"
    assert unscored("stable", claimed=False) is None and unscored("extension", claimed=True) is None
    assert gate("FAIL", "experimental") == Verdict.WARN and gate("FAIL") == Verdict.FAIL
    assert gate("PASS", "extension") == Verdict.PASS and gate("SKIP", "experimental") == Verdict.SKIP


@pytest.mark.parametrize(
    ("level", "verdict", "how", "shown"),
    [
        ("MUST", "WARN", "weak", "weak evidence or no MUST"),
        ("MUST", "WARN", "should", "SHOULD"),
        ("MUST", "FAIL", "should", "SHOULD, --strict"),
        ("SHOULD", "FAIL", "miss", "SHOULD, --strict"),
        ("implied", "WARN", "miss", None),
        ("MUST", "FAIL", "miss", None),
        ("SHOULD", "WARN", "should", None),
        ("SHOULD", "WARN", "weak", None),
        ("MUST", "SKIP", "miss", None),
    ],
)
def test_a_verdict_shows_the_level_it_was_judged_at_when_it_differs(
    level: str, verdict: str, how: Any, shown: str | None
) -> None:
    """Issue 31: a WARN beside a row's MUST says at which level it was judged, in every view."""
    assert verdicts.judged_at(level, verdict, how) == shown

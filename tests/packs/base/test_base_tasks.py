"""The tasks rows (BASE-TASK-001 to -014): each planted defect FAILs (or WARNs, for a SHOULD) exactly the
rows it breaks, the conformant mutants pass everything they can judge, and `explain` and `list` show
the rows.

One run judges every mutant (a target each, `-j 2`, the tasks checks only), shared by the module.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import TASK_SERVED, cli, run, stdio
from tests.servers.base_tasks_mutants import DEFECTS

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: What every server that declares tasks, tasks.list and tasks.cancel SKIPs: the row of a server
#: without tasks, and the one of the methods it does not declare (none).
DECLARING = {("base.tasks.undeclared-augmentation", "SKIP"), ("base.tasks.undeclared-methods", "SKIP")}


def declaring(*planted: tuple[str, str]) -> set[tuple[str, str]]:
    """The non-PASS cases of a server that declares tasks with `planted`: its defect's verdicts."""
    checks = {f"base.tasks.{name}" for name, _ in planted}
    return {(c, v) for c, v in DECLARING if c not in checks} | {(f"base.tasks.{n}", v) for n, v in planted}


EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": declaring(),
    "no-tasks": {(check, "SKIP") for check in TASK_SERVED},
    "create-completed": declaring(("create-result", "FAIL")),
    "get-no-ttl": declaring(("get-shape", "FAIL")),
    "terminal-flips": declaring(("terminal-final", "FAIL")),
    # An error has no _meta to carry the related task: that row has nothing to judge.
    "result-error": declaring(("result-underlying", "FAIL"), ("result-related-task", "SKIP")),
    "no-related-task": declaring(("result-related-task", "FAIL")),
    "cancel-terminal-ok": declaring(("cancel-terminal", "FAIL")),
    "cancel-not-kept": declaring(("cancel-working", "FAIL")),
    "unknown-id-code": declaring(("unknown-id", "FAIL")),
    "list-empty": declaring(("list", "FAIL")),
    "forbidden-accepted": declaring(("forbidden-refused", "WARN")),
    "required-plain-ok": declaring(("required-plain", "FAIL")),
    # tasks.list undeclared: its row has nothing to judge, and the method served undeclared is the SHOULD.
    "undeclared-list": declaring(("list", "SKIP"), ("undeclared-methods", "WARN")),
    "modern-served": declaring(("modern-removed", "WARN")),
    # The experimental row FAILs with its true verdict (and fails no run unclaimed: see below).
    "undeclared-refused": {(check, "SKIP") for check in TASK_SERVED}
    | {("base.tasks.undeclared-augmentation", "FAIL")},
}
ORDER = sorted(DEFECTS)


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    targets = [stdio("tests.servers.base_tasks_mutants", "--defect", defect) for defect in ORDER]
    return run(targets, jobs=2, select="base.tasks.")


@pytest.mark.slow
@pytest.mark.parametrize("defect", ORDER)
def test_tasks_mutant_shows_exactly_its_verdicts(report: dict[str, Any], defect: str) -> None:
    index = ORDER.index(defect)
    cases = [c for c in report["cases"] if c["target"] == index and c["check"].startswith("base.tasks.")]
    assert {c["revision"] for c in cases} == {LEGACY, MODERN}
    found = {(c["check"], c["verdict"]) for c in cases if c["verdict"] != "PASS"}
    assert found == EXPECTED[defect]
    for case in cases:
        if case["verdict"] in ("FAIL", "WARN"):
            assert case["message"] and (case["evidence"] or case["transcript"]), case["key"]


@pytest.mark.slow
def test_the_cases_say_what_they_called(report: dict[str, Any]) -> None:
    index = ORDER.index("none")
    # A PASS's message is what the case noted.
    notes = {
        c["check"]: c["message"]
        for c in report["cases"]
        if c["target"] == index and c["check"].startswith("base.tasks.") and c["revision"] == LEGACY
    }
    assert "'echo'" in notes["base.tasks.create-result"]
    assert "'now'" in notes["base.tasks.required-plain"]


def test_list_and_explain_show_the_rows() -> None:
    done = cli("list", "--suite", "base")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert LEGACY in lines["base.tasks.cancel-working"] and MODERN not in lines["base.tasks.cancel-working"]
    assert MODERN in lines["base.tasks.modern-removed"]
    for row in ("BASE-TASK-002", "BASE-TASK-014"):
        explained = cli("explain", row)
        assert (
            explained.returncode == 0
            and "Quote:" in explained.stdout
            and "Checks:  base.tasks." in explained.stdout
        )


def test_the_reference_task_store_is_bounded() -> None:
    # A task past its ttl is forgotten, and the oldest once MAX_TASKS are kept: a long-lived reference
    # server does not grow without end.
    from conformance_reference.base_tasks import MAX_TASKS, TaskSupport, _Task

    store = TaskSupport({})
    expired = _Task(task_id="gone", owner="connection", ttl=0, outcome=("result", {}))
    store.tasks["gone"] = expired
    for number in range(MAX_TASKS - 1):
        store.tasks[f"t{number}"] = _Task(
            task_id=f"t{number}", owner="connection", ttl=60_000, outcome=("result", {})
        )
    store._forget()
    assert "gone" not in store.tasks and len(store.tasks) == MAX_TASKS - 1
    store.tasks["extra"] = _Task(task_id="extra", owner="connection", ttl=60_000, outcome=("result", {}))
    store._forget()  # full: the oldest goes, making room for the one about to be added
    assert "t0" not in store.tasks and "extra" in store.tasks and len(store.tasks) == MAX_TASKS - 1


REFUSED = "base.tasks.undeclared-augmentation"


@pytest.mark.slow
def test_an_experimental_fail_is_shown_and_fails_no_run_unclaimed(report: dict[str, Any]) -> None:
    # 2025-11-25 marks tasks experimental: the refusal is a true FAIL, marked unscored, counted apart in
    # the footer, and the run's exit code is decided without it.
    index = ORDER.index("undeclared-refused")
    case = next(c for c in report["cases"] if c["target"] == index and c["check"] == REFUSED)
    assert case["verdict"] == "FAIL" and case["unscored"] == "experimental"
    assert "-32603" in case["message"]
    assert report["footer"]["unscored"]["FAIL"] >= 1
    scored = [c for c in report["cases"] if not c.get("unscored")]
    assert all(c["check"].startswith("base.tasks.") is False or c["revision"] != LEGACY for c in scored)


@pytest.mark.slow
def test_claiming_experimental_features_makes_the_fail_block() -> None:
    server = stdio("tests.servers.base_tasks_mutants", "--defect", "undeclared-refused")
    unclaimed = run([server], select=REFUSED, protocol=LEGACY)
    assert [c["verdict"] for c in unclaimed["cases"] if c["check"] == REFUSED] == ["FAIL"]
    assert unclaimed["footer"]["exit_code"] == 0, unclaimed["footer"]
    every_view_counts_it_apart(unclaimed)
    claimed = run([server], select=REFUSED, protocol=LEGACY, experimental=True)
    (case,) = [c for c in claimed["cases"] if c["check"] == REFUSED]
    assert case["verdict"] == "FAIL" and "unscored" not in case
    assert claimed["footer"]["exit_code"] == 1 and "unscored" not in claimed["footer"]


def test_list_and_explain_show_the_experimental_track() -> None:
    listed = cli("list", "--suite", "base")
    line = next(line for line in listed.stdout.splitlines() if line.startswith(REFUSED))
    assert "[experimental: fails no run unclaimed]" in line
    explained = cli("explain", "BASE-TASK-001")
    assert "Track:   experimental" in explained.stdout


def every_view_counts_it_apart(report: dict[str, Any]) -> None:
    """The views of a report whose one FAIL is unscored: each shows it, none lets it block."""
    import xml.etree.ElementTree as ET

    from conformance.reporting import badges, html_report, sarif, views

    summary = views.summary_text(report)
    assert "[experimental, not scored]" in summary and "more cases not scored" in summary
    assert summary.splitlines()[-1].startswith("PASSED"), summary
    assert "more cases not scored" in views.markdown(report)
    junit = ET.fromstring(views.junit_xml(report))
    assert not junit.findall(".//failure") and any(
        p.get("name") == "unscored" for p in junit.findall(".//property")
    )
    assert "Not scored" in html_report.render(report)
    levels = {r["level"] for run_ in sarif.sarif(report)["runs"] for r in run_["results"]}
    assert levels == {"note"}
    assert badges.status(report, "base")["color"] != "red"

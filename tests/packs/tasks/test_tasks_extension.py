"""The tasks suite (the 2026-07-28 tasks extension, TASKS-001 to -013): the reference passes every row
over stdio and Streamable HTTP, each planted defect FAILs (or WARNs, for the SHOULD row) exactly its row
with the rows that needed what it broke SKIP blocked by it, a server without the extension SKIPs every
row for one reason with nothing sent, and the rows count as extension rows (unscored unless claimed).

One run judges every mutant (a target each, `-j 2`, over stdio), shared by the module.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import cli, run, stdio
from tests.servers.tasks_mutants import DEFECTS

MODERN = "2026-07-28"
ROWS = {
    "tasks.capability.declared": "TASKS-001",
    "tasks.create.result-type": "TASKS-002",
    "tasks.create.durable": "TASKS-003",
    "tasks.create.undeclared": "TASKS-004",
    "tasks.get.shape": "TASKS-005",
    "tasks.get.terminal-kept": "TASKS-006",
    "tasks.get.terminal-payload": "TASKS-007",
    "tasks.update.ack": "TASKS-008",
    "tasks.cancel.ack": "TASKS-009",
    "tasks.errors.unknown-id": "TASKS-010",
    "tasks.errors.undeclared-methods": "TASKS-011",
    "tasks.errors.result-removed": "TASKS-012",
    "tasks.notify.listen-undeclared": "TASKS-013",
}
#: The rows that need a created task: they SKIP on a server that never makes one.
NEED_TASK = {
    "tasks.create.result-type",
    "tasks.create.durable",
    "tasks.create.undeclared",
    "tasks.get.shape",
    "tasks.get.terminal-kept",
    "tasks.get.terminal-payload",
    "tasks.update.ack",
    "tasks.cancel.ack",
}
#: What needs the followed task's taskId (blocked by TASKS-002) and its first tasks/get (by TASKS-003).
AFTER_CREATE = {
    "tasks.create.durable",
    "tasks.get.shape",
    "tasks.get.terminal-kept",
    "tasks.get.terminal-payload",
    "tasks.update.ack",
    "tasks.cancel.ack",
}
AFTER_GET = {"tasks.get.shape", "tasks.get.terminal-kept", "tasks.get.terminal-payload"}


def only(check: str, verdict: str) -> set[tuple[str, str]]:
    return {(check, verdict)}


EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "no-extension": {(check, "SKIP") for check in ROWS},
    "never-task": {(check, "SKIP") for check in NEED_TASK},
    "legacy-capability": only("tasks.capability.declared", "FAIL"),
    "create-no-result-type": only("tasks.create.result-type", "FAIL"),
    "create-no-task-id": only("tasks.create.result-type", "FAIL") | {(c, "SKIP") for c in AFTER_CREATE},
    "not-durable": only("tasks.create.durable", "FAIL") | {(c, "SKIP") for c in AFTER_GET},
    "undeclared-task": only("tasks.create.undeclared", "FAIL"),
    "get-result-type-task": only("tasks.get.shape", "FAIL"),
    "terminal-flips": only("tasks.get.terminal-kept", "WARN"),
    "completed-no-content": only("tasks.get.terminal-payload", "FAIL"),
    "update-answers-task": only("tasks.update.ack", "FAIL"),
    "cancel-answers-task": only("tasks.cancel.ack", "FAIL"),
    "unknown-id-code": only("tasks.errors.unknown-id", "FAIL"),
    "undeclared-served": only("tasks.errors.undeclared-methods", "FAIL"),
    "result-served": only("tasks.errors.result-removed", "FAIL"),
    "listen-wrong-code": only("tasks.notify.listen-undeclared", "FAIL"),
}
#: Who blocks the SKIPs of the mutants whose defect others depend on.
BLOCKERS = {"create-no-task-id": "tasks.create.result-type", "not-durable": "tasks.create.durable"}
ORDER = sorted(DEFECTS)


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    targets = [stdio("tests.servers.tasks_mutants", "--defect", defect) for defect in ORDER]
    return run(targets, ("tasks",), jobs=2)


def cases_of(report: dict[str, Any], defect: str) -> list[dict[str, Any]]:
    index = ORDER.index(defect)
    return [c for c in report["cases"] if c["target"] == index and c["check"] in ROWS]


@pytest.mark.slow
@pytest.mark.parametrize("defect", ORDER)
def test_tasks_mutant_shows_exactly_its_verdicts(report: dict[str, Any], defect: str) -> None:
    cases = cases_of(report, defect)
    assert {c["check"] for c in cases} == set(ROWS) and {c["revision"] for c in cases} == {MODERN}
    assert {(c["check"], c["verdict"]) for c in cases if c["verdict"] != "PASS"} == EXPECTED[defect]
    for case in cases:
        assert case["unscored"] == "extension", case["key"]  # unclaimed: shown, not scored
        if case["verdict"] in ("FAIL", "WARN"):
            assert case["message"] and (case["evidence"] or case["transcript"]), case["key"]
        if case["verdict"] == "SKIP" and defect in BLOCKERS:
            assert case["blocked_by"] and case["blocked_by"].startswith(BLOCKERS[defect]), case


@pytest.mark.slow
def test_a_server_without_the_extension_skips_for_one_reason_sending_nothing(report: dict[str, Any]) -> None:
    cases = cases_of(report, "no-extension")
    assert {c["message"] for c in cases} == {
        "the server does not offer the tasks extension: server/discover's capabilities.extensions has no "
        "'io.modelcontextprotocol/tasks'"
    }
    assert all(not c["transcript"] for c in cases), [c["key"] for c in cases if c["transcript"]]


@pytest.mark.slow
def test_the_reference_passes_every_row_over_stdio_and_http() -> None:
    done = run(None, ("tasks",), claimed_suites=frozenset({"tasks"}))
    cases = [c for c in done["cases"] if c["check"] in ROWS]
    assert {c["transport"] for c in cases} == {"stdio", "http"}
    assert len(cases) == 2 * len(ROWS)
    assert {c["verdict"] for c in cases} == {"PASS"}, [(c["key"], c["message"]) for c in cases]
    assert all("unscored" not in c for c in cases)  # naming the suite claims it


@pytest.mark.slow
def test_claiming_the_suite_makes_an_extension_fail_block() -> None:
    server = stdio("tests.servers.tasks_mutants", "--defect", "result-served")
    select = "tasks.errors.result-removed"
    unclaimed = run([server], ("tasks",), select=select)
    assert [c["verdict"] for c in unclaimed["cases"] if c["check"] == select] == ["FAIL"]
    assert unclaimed["footer"]["exit_code"] == 0, unclaimed["footer"]
    claimed = run([server], ("tasks",), select=select, claimed_suites=frozenset({"tasks"}))
    (case,) = [c for c in claimed["cases"] if c["check"] == select]
    assert case["verdict"] == "FAIL" and "unscored" not in case
    assert claimed["footer"]["exit_code"] == 1, claimed["footer"]


def test_list_and_explain_show_the_rows() -> None:
    done = cli("list", "--suite", "tasks")
    assert done.returncode == 0, done.stderr
    for check in ROWS:
        assert check in done.stdout
    explained = cli("explain", "TASKS-002")
    assert (
        explained.returncode == 0
        and "Quote:" in explained.stdout
        and "tasks.create.result-type" in explained.stdout
    )


@pytest.mark.slow
def test_a_server_without_2026_07_28_gets_no_tasks_case_unless_the_suite_is_named() -> None:
    # Run by default, an extension's pack says nothing of a server that speaks none of its revisions;
    # named, it says why nothing was judged (nothing judged is never PASS).
    legacy = stdio("conformance_reference.tasks_server", "--era", "legacy")
    unnamed = run([legacy], ("tasks",), select="tasks.errors.result-removed")
    assert [c for c in unnamed["cases"] if c["suite"] == "tasks"] == []
    named = run(
        [legacy], ("tasks",), select="tasks.errors.result-removed", claimed_suites=frozenset({"tasks"})
    )
    (case,) = [c for c in named["cases"] if c["suite"] == "tasks"]
    assert case["verdict"] == "SKIP" and "binds MCP 2026-07-28" in case["message"]

"""One set of totals: every view counts the scored cases, and the not-scored ones apart, exactly as the
canonical report's footer does, on a passing, a failing and an interrupted run (issue 32: the terminal,
report.md, the HTML banner and tiles, and JUnit once disagreed: 359 against 426 cases)."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from conformance.model.verdicts import EXIT_INTERRUPTED
from conformance.reporting import canonical, html_report, views
from tests.conftest import run, stdio

RAW = "tests.servers.raw_server"
#: A few base rows and the apps pack's, which a server without UI leaves SKIP and not scored.
SELECT = "structured,rpc.id,apps.extension"
COUNTED = ("PASS", "FAIL", "WARN", "SKIP", "ERROR")


def _run(defect: str) -> dict[str, Any]:
    return run([stdio(RAW, "--defect", defect)], ("base", "apps"), select=SELECT, protocol="2025-11-25")


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    passing, failing = _run("none"), _run("schema-violation")
    interrupted = copy.deepcopy(failing)
    scored = [c for c in interrupted["cases"] if not c.get("unscored")]
    interrupted["cases"] = scored[: len(scored) // 2 + 1] + [
        c for c in interrupted["cases"] if c.get("unscored")
    ]
    interrupted["footer"].update(complete=False, reason="interrupted", exit_code=EXIT_INTERRUPTED)
    canonical.refresh(interrupted)
    return {"passing": passing, "failing": failing, "interrupted": interrupted}


def _expected(report: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """(scored, not scored) by verdict and `cases`, from the footer alone."""
    totals, apart = report["footer"]["totals"], report["footer"].get("unscored", {})
    keys = (*COUNTED, "cases")
    return {k: totals.get(k, 0) - apart.get(k, 0) for k in keys}, {k: apart.get(k, 0) for k in keys}


def _pairs(text: str) -> dict[str, int]:
    return {
        verdict: int(count) for verdict, count in re.findall(r"\b(PASS|FAIL|WARN|SKIP|ERROR):? (\d+)", text)
    }


def _terminal(report: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    lines = views.summary_text(report).splitlines()
    line = next(line for line in lines if re.match(r"^\d+ cases: ", line))
    scored = {**_pairs(line), "cases": int(line.split()[0])}
    more = next((line for line in lines if re.match(r"^\d+ more cases not scored", line)), "")
    apart = {**_pairs(more.split(":", 1)[-1]), "cases": int(more.split()[0])} if more else {}
    return scored, apart


def _markdown(report: dict[str, Any]) -> dict[str, int]:
    lines = views.markdown(report).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| PASS | FAIL"))
    header = [c.strip() for c in lines[at].strip("|").split("|")]
    row = [int(c) for c in lines[at + 2].strip("|").split("|")]
    return dict(zip(header, row, strict=True))


def _tiles(report: dict[str, Any]) -> dict[str, int]:
    page = html_report.render(report)
    tiles = re.findall(r'<div class="tile[^"]*">(\w+)<b>(\d+)</b></div>', page)
    return {name: int(count) for name, count in tiles}


def _junit(report: dict[str, Any]) -> int:
    root = ET.fromstring(views.junit_xml(report))
    return sum(int(suite.get("tests", "0")) for suite in root.iter("testsuite"))


@pytest.mark.parametrize("kind", ["passing", "failing", "interrupted"])
def test_every_view_counts_the_cases_the_footer_counts(reports: dict[str, dict[str, Any]], kind: str) -> None:
    report = reports[kind]
    scored, apart = _expected(report)
    assert apart["cases"] > 0, "the apps rows are not scored unclaimed: the split is under test"
    terminal, terminal_apart = _terminal(report)
    assert (
        terminal == {k: v for k, v in scored.items() if k in terminal}
        and terminal["cases"] == scored["cases"]
    )
    assert {k: v for k, v in apart.items() if v} == {k: v for k, v in terminal_apart.items() if v}
    assert _markdown(report) == {k: scored[k] for k in _markdown(report)}
    tiles = _tiles(report)
    assert {k: tiles[k] for k in COUNTED if k in tiles} == {k: scored[k] for k in COUNTED if k in tiles}
    assert tiles["cases"] == scored["cases"]
    headline = html_report.headline(report).why
    if kind != "failing":  # a failing headline counts what blocks the run
        assert f"{scored['cases']} case" in headline
    assert f"{apart['cases']} more not scored" in headline
    # JUnit has no "not scored": it lists every case, scored or not, and the two add up to the footer's.
    assert _junit(report) == scored["cases"] + apart["cases"] == report["footer"]["totals"]["cases"]

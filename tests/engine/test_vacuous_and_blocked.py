"""Runs that judged nothing fail, and blocked cases are named in every view.

Why: a gate that exits 0 on a run whose every case was SKIP vouches for a server it never judged (a
fuzz run with no tool it may call, a profile the server does not show); and a SKIP blocked by another
case's FAIL must say which case, in the canonical report and in each view derived from it.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.reporting import badges, canonical, html_report, views
from tests.conftest import cli, run, stdio

JUDGE = "base.http.request-answer[http@2026-07-28]"


@pytest.fixture(scope="module")
def blocked_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The raw server over HTTP answering an unknown method with 400 text/plain, rpc rows only."""
    path = tmp_path_factory.mktemp("blocked") / "target.toml"
    command = [sys.executable, "-m", "tests.servers.raw_server", "--http", "--defect", "unknown-method-text"]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return run([str(path)], select="rpc,request-answer")


def test_a_blocked_case_names_its_blocker_in_the_report_and_every_view(
    blocked_report: dict[str, Any],
) -> None:
    report = blocked_report
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    blocked = [c for c in report["cases"] if c.get("blocked_by")]
    assert {c["check"] for c in blocked} == {
        "base.rpc.version-field",
        "base.rpc.id-echo",
        "base.rpc.result-xor-error",
        "base.rpc.error-shape",
        "base.rpc.method-not-found",
    }
    assert all(c["verdict"] == "SKIP" and c["blocked_by"] == JUDGE for c in blocked)
    # One defect, one FAIL: the judging case, and nothing else fails or errs.
    assert [c["key"] for c in report["cases"] if c["verdict"] in ("FAIL", "ERROR")] == [JUDGE]
    # A case that was not blocked carries no blocked_by at all (the report keeps its old shape).
    assert all("blocked_by" not in c for c in report["cases"] if c not in blocked)
    assert f"SKIP {len(blocked):>5}  blocked by another case's finding" in views.summary_text(report)
    markdown = views.markdown(report)
    assert markdown.count("Blocked by base.http.request-answer\\[http@2026-07-28\\]") == len(blocked)
    junit = ET.fromstring(views.junit_xml(report))
    skipped = [s for s in junit.iter("skipped") if s.get("type") == "blocked"]
    assert len(skipped) == len(blocked) and all(JUDGE in (s.text or "") for s in skipped)
    page = html_report.render(report)
    assert page.count(f"Blocked by <code>{JUDGE}</code>") == len(blocked)


def _report(verdicts: list[str]) -> dict[str, Any]:
    """A schema-valid report of fuzz cases with these verdicts (views and badges read it as the model)."""
    cases = [
        {"verdict": v, "suite": "fuzz", "key": f"c{i}", "requirement": "FUZZ-VALID-001", "message": "why"}
        | {"check": f"c{i}", "level": "MUST", "title": "t", "target": 0, "transport": "stdio"}
        | {"revision": "2025-11-25", "duration": 0.0, "evidence": {}, "transcript": []}
        for i, v in enumerate(verdicts)
    ]
    harness = {"name": "mcp-conformance", "version": "0"}
    header = {"run_id": "r", "harness": harness, "started": "2026-01-01T00:00:00Z", "suites": ["fuzz"]}
    return {
        **{"format": "mcp-conformance-report", "format_version": 1, "header": header, "targets": []},
        **{"cases": cases, "footer": {"complete": True, "reason": "complete"}},
    }


def test_a_run_that_judged_nothing_exits_1_and_says_so_in_one_line() -> None:
    assert canonical.exit_code(_report(["SKIP", "SKIP"])) == 1
    assert canonical.exit_code(_report(["SKIP", "PASS"])) == 0
    assert canonical.exit_code(_report(["SKIP", "WARN"])) == 0
    text = views.summary_text({**_report(["SKIP"] * 3), "targets": []})
    assert [line for line in text.splitlines() if line.startswith("nothing was judged")] == [
        "nothing was judged: all 3 cases are SKIP (see their reasons above), so the run fails"
    ]
    assert badges.status(_report(["SKIP", "SKIP"]), "fuzz")["message"] == "nothing judged"


def test_fuzz_with_no_tool_it_may_call_exits_1(tmp_path: Path) -> None:
    """The five fuzz rows SKIP (no input can be sent): the CLI must not exit 0."""
    result = cli(
        "run",
        "--server",
        stdio("tests.servers.raw_server"),
        "--suite",
        "fuzz",
        "--call-tools",
        "none",
        "--protocol",
        "2025-11-25",
        "--quiet",
        "--report-dir",
        str(tmp_path),
    )
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {c["verdict"] for c in report["cases"]} == {"SKIP"} and len(report["cases"]) == 5
    assert result.returncode == 1 and report["footer"]["exit_code"] == 1
    assert "nothing was judged: all 5 cases are SKIP" in result.stdout


def test_merge_renumbers_the_blocking_case_with_its_target(blocked_report: dict[str, Any]) -> None:
    from conformance.reporting import compare

    other = json.loads(json.dumps(blocked_report))
    for target in other["targets"]:
        target["spec"] += " (second)"
    merged = compare.merge([("a", blocked_report), ("b", other)])
    second = [c for c in merged["cases"] if c["target"] == 1 and c.get("blocked_by")]
    assert second and all(c["blocked_by"] == JUDGE + "#1" for c in second)
    assert all(c["message"].startswith(f"blocked by {JUDGE}#1: ") for c in second)
    keys = {c["key"] for c in merged["cases"]}
    assert all(c["blocked_by"] in keys for c in merged["cases"] if c.get("blocked_by"))


@pytest.mark.parametrize(
    ("status", "content_type", "session", "broken"),
    [
        (200, "application/json", False, False),
        (200, "application/json; charset=utf-8", False, False),
        (200, "Text/Event-Stream", False, False),
        (404, "application/json", False, False),  # 2026-07-28: unknown method, -32601 in a JSON body
        (400, "text/plain; charset=utf-8", False, True),  # Go SDK servers, unknown method
        (202, "", False, True),  # a request is not a notification
        (200, "text/html", False, True),
        (404, "text/plain", False, True),  # no session to have ended
        (404, "text/plain", True, False),  # the session ended: the transport's own refusal
        (401, "text/plain", False, False),  # authorization
        (403, "text/plain", False, False),  # a rejected Origin
        (500, "text/html", False, False),  # a server failure, ERROR where it happens
    ],
)
def test_which_answers_to_a_request_break_the_transport(
    status: int, content_type: str, session: bool, broken: bool
) -> None:
    from conformance.adapters.http import HttpAdapter
    from conformance.adapters.transcript import Transcript

    adapter = HttpAdapter("http://127.0.0.1:9/mcp", Transcript())
    adapter.session_id = "s-1" if session else None
    assert bool(adapter._violation(status, content_type)) is broken


def test_skips_are_counted_by_reason_with_the_option_that_would_judge_them() -> None:
    """A run whose `--call-tools` policy held every tool back says so once, with `--call-tools all`, and
    every SKIP carries its kind in the canonical report (issue 31: a SKIP-heavy run says why)."""
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "none")],
        select="base.call.,base.tools.list-shape",
        protocol="2025-11-25",
        call_tools="none",
    )
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    held = [c for c in report["cases"] if c.get("skip", {}).get("kind") == "needs-option"]
    assert held and all(c["skip"]["option"] == "--call-tools all" for c in held)
    assert all(c["verdict"] == "SKIP" and "--call-tools none" in c["message"] for c in held)
    summary = views.summary_text(report)
    reasons = [line.split() for line in summary.splitlines() if line.startswith("SKIP ")]
    assert reasons[0] == [
        "SKIP", str(len(held)), "not", "judged", "under", "this", "run's", "options",
        "(--call-tools", "all", "would", "judge", f"{len(held)})",
    ]  # fmt: skip
    skips = sum(1 for c in report["cases"] if c["verdict"] == "SKIP")
    assert sum(int(words[1]) for words in reasons) == skips

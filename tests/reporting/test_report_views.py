"""The canonical report follows its schema; views derive from it; a broken view never loses it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.model.verdicts import EXIT_MEANING
from conformance.reporting import canonical, html_report, views
from tests.conftest import cli, run, stdio


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    # Two mutants give every verdict kind a view must render: FAIL with evidence (an invalid
    # inputSchema), WARN and SKIP (a listing that never ends), PASS.
    return run(
        [
            stdio("tests.servers.raw_server", "--defect", "cursor-loop"),
            stdio("tests.servers.raw_server", "--defect", "bad-input-schema"),
        ],
        select="tools",
        protocol="2025-11-25",
    )


def test_report_validates_against_its_schema(report: dict[str, Any]) -> None:
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    assert report["footer"]["totals"]["cases"] == len(report["cases"])
    verdicts = {c["verdict"] for c in report["cases"]}
    assert {"PASS", "FAIL", "SKIP"} <= verdicts


def test_the_schema_rejects_a_malformed_report(report: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(report))
    broken["cases"][0]["verdict"] = "MAYBE"
    del broken["footer"]["complete"]
    found = schemas.errors(schemas.REPORT_ID, None, broken)
    assert any("verdict" in line for line in found) and any("complete" in line for line in found)


def test_failed_cases_carry_evidence_and_transcript(report: dict[str, Any]) -> None:
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert failed
    for case in failed:
        assert case["transcript"], "the wire log of a failing case is in the report"
        assert case["level"] and case["requirement"].startswith("BASE-")


def test_junit_counts_match_the_report(report: dict[str, Any]) -> None:
    root = ET.fromstring(views.junit_xml(report))
    cases = root.findall(".//testcase")
    assert len(cases) == len(report["cases"])
    assert len(root.findall(".//failure")) == sum(c["verdict"] == "FAIL" for c in report["cases"])
    assert len(root.findall(".//skipped")) == sum(c["verdict"] == "SKIP" for c in report["cases"])


def test_markdown_lists_every_case_and_escapes_server_text(report: dict[str, Any]) -> None:
    hostile = json.loads(json.dumps(report))
    hostile["cases"][0]["verdict"] = "FAIL"
    hostile["cases"][0]["message"] = "<script>alert(1)</script> | [x](http://evil) **bold**"
    text = views.markdown(hostile)
    assert "<script>" not in text and "](http" not in text and "**bold**" not in text
    for case in report["cases"]:
        assert case["requirement"] in text


def test_a_failing_view_does_not_lose_the_canonical_report(
    report: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(_: dict[str, Any]) -> str:
        raise RuntimeError("view bug")

    canonical.write_json_atomic(tmp_path / "report.json", report)
    monkeypatch.setitem(views.VIEWS, "markdown", ("report.md", explode))
    failures = views.write_views(report, tmp_path)
    assert failures == ["the markdown view failed: RuntimeError('view bug')"]
    assert (
        json.loads((tmp_path / "report.json").read_text())["header"]["run_id"] == report["header"]["run_id"]
    )
    assert (tmp_path / "junit.xml").exists()


def test_exit_codes_follow_the_verdicts(report: dict[str, Any]) -> None:
    assert canonical.exit_code(report) == 1
    clean = json.loads(json.dumps(report))
    clean["cases"] = [c for c in clean["cases"] if c["verdict"] in ("PASS", "WARN", "SKIP")]
    assert canonical.exit_code(clean) == 0
    clean["footer"]["complete"] = False
    assert canonical.exit_code(clean) == 1
    clean["targets"][0]["unreachable"] = True
    assert canonical.exit_code(clean) == 3


def test_markdown_leads_with_the_result_totals_and_the_problems_worst_first(report: dict[str, Any]) -> None:
    text = views.markdown(report)
    lines = text.splitlines()
    assert lines[2] == "Result: FAILED. " + html_report.headline(report).why
    assert lines[4] == f"Exit code 1: {EXIT_MEANING[1]}."
    assert lines[6].startswith("| PASS | FAIL | WARN | SKIP | ERROR | cases |")
    # The SKIPs counted by reason, one line per kind, then the findings (one row per defect), then the
    # problems case by case.
    at = lines.index("## Findings")
    assert lines[10] == "SKIPs by reason:" and all(line.startswith("- SKIP ") for line in lines[12 : at - 1])
    rows = lines[at + 4 : lines.index("## Problems") - 1]
    assert rows and all(row.startswith(("| FAIL", "| WARN", "| ERROR")) for row in rows)
    headings = [line for line in lines if line.startswith("### ")]
    problems = text[text.index("## Problems") : text.index("## Run")]
    verdicts = [h.split()[1] for h in headings if h in problems]
    assert verdicts == sorted(verdicts, key=["FAIL", "ERROR", "XPASS", "WARN"].index) and "FAIL" in verdicts
    assert "WARN" in verdicts and "SKIP" not in verdicts
    # Then the rest: the run and its targets, the other cases that did not pass (SKIP), every case.
    assert text.index("## Run") < text.index("## Other cases that did not pass") < text.index("## All cases")
    skipped = [c for c in report["cases"] if c["verdict"] == "SKIP"]
    assert text.count("### SKIP ") == len(skipped)


def test_markdown_shows_the_evidence_that_shows_the_fault_first(report: dict[str, Any]) -> None:
    data = json.loads(json.dumps(report))
    failed = next(c for c in data["cases"] if c["verdict"] == "FAIL")
    failed["evidence"] = {"tool_calls": {"calls": 2}, "request": "{}", "response": '{"result": 1}'}
    section = views.markdown(data).split(f"### FAIL {views._md(failed['key'])}")[1]
    assert section.index("- response:") < section.index("- tool\\_calls:") < section.index("- request:")


def test_the_terminal_summary_ends_with_the_result_and_what_the_exit_code_means(
    report: dict[str, Any],
) -> None:
    lines = views.summary_text(report).splitlines()
    assert lines[-1] == f"FAILED: {html_report.headline(report).why} Exit code 1: {EXIT_MEANING[1]}."
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    assert listed == sorted(listed, key=["FAIL", "ERROR", "XPASS", "WARN", "XFAIL", "SKIP"].index)
    clean = json.loads(json.dumps(report))
    clean["cases"] = [c for c in clean["cases"] if c["verdict"] != "FAIL"]
    assert views.summary_text(clean).splitlines()[-1].startswith("PASSED: ")
    assert views.summary_text(clean).splitlines()[-1].endswith(f"Exit code 0: {EXIT_MEANING[0]}.")


def test_a_revision_whose_probe_timed_out_is_shown_in_every_view(tmp_path: Path) -> None:
    """A revision the server did not open (here its probe waited out the start budget) is named with what
    the probe found on the console, in the summary, report.md and report.html: it never just vanishes."""
    server = stdio("tests.servers.legacy_server", "--speaks", "2025-11-25", "--defect", "silent-discover")
    done = cli(
        "run", "--server", server, "-k", "initialize-shape", "--start-timeout", "3", "--timeout", "3",
        "--report-dir", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (probe,) = [p for p in report["targets"][0]["probe"] if p["revision"] == "2026-07-28"]
    assert not probe["spoken"] and "2026-07-28" not in report["targets"][0]["revisions_spoken"]
    why = probe["message"].splitlines()[0]
    # Live progress (stderr) and the summary (stdout).
    console = [line for line in (done.stderr + done.stdout).splitlines() if "not spoken: 2026-07-28" in line]
    assert len(console) == 2 and all(why in line for line in console), done.stdout
    assert f"not spoken: 2026-07-28: {why}" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "not spoken: 2026-07-28: " in (tmp_path / "report.html").read_text(encoding="utf-8")

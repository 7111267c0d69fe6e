"""Badges from a report, and certification bundles that `verify` accepts only while nothing was edited."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.reporting import badges, certify
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"
ARGS = ("--suite", "base", "-k", "rpc", "--timeout", "5", "--quiet")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("reports")
    for name, defect, expected in (("clean", "none", 0), ("broken", "wrong-id", 1)):
        done = cli("run", "--server", stdio(RAW, "--defect", defect), *ARGS, "--report-dir", str(root / name))
        assert done.returncode == expected, done.stdout + done.stderr
    return {"clean": root / "clean", "broken": root / "broken"}


def _report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path / "report.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("name", "message", "color"), [("clean", "passing", "brightgreen"), ("broken", "3 failing", "red")]
)
def test_badge_command_writes_endpoint_json_and_svg_per_suite(
    reports: dict[str, Path], tmp_path: Path, name: str, message: str, color: str
) -> None:
    done = cli("badge", "--report", str(reports[name]), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["badge-base.json", "badge-base.svg"]
    endpoint = json.loads((tmp_path / "badge-base.json").read_text())
    assert endpoint == {"schemaVersion": 1, "label": "MCP base", "message": message, "color": color}
    svg = ET.parse(tmp_path / "badge-base.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert texts.count("MCP base") == 2 and texts.count(message) == 2
    assert badges.COLORS[color] in (tmp_path / "badge-base.svg").read_text()
    assert "href" not in (tmp_path / "badge-base.svg").read_text(), "standalone: links and fetches nothing"


def test_badge_messages_follow_the_verdicts(reports: dict[str, Path]) -> None:
    report = _report(reports["clean"])
    report["cases"][0]["verdict"] = "WARN"
    assert badges.status(report, "base")["message"] == "passing, 1 warnings"
    report["cases"][0]["verdict"] = "XFAIL"
    assert badges.status(report, "base")["color"] == "yellowgreen"
    report["footer"]["complete"] = False
    assert badges.status(report, "base")["message"] == "incomplete"
    assert badges.status(report, "dw-discovery")["message"] == "not run"


def test_certify_writes_a_bundle_that_verifies(reports: dict[str, Path], tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    done = cli("certify", "--report", str(reports["broken"]), "--out", str(bundle))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in bundle.iterdir()) == ["SUMMARY.md", "certificate.json", "report.json"]
    assert (bundle / "report.json").read_bytes() == (reports["broken"] / "report.json").read_bytes()
    cert = json.loads((bundle / "certificate.json").read_text())
    assert cert["harness"] == {"name": "mcp-conformance", "version": __version__}
    assert cert["seed"] is None
    assert cert["targets"][0]["server_info"] == {"name": "raw-reference", "version": "1.0.0"}
    assert cert["result"]["exit_code"] == 1 and cert["result"]["totals"]["FAIL"] == 3
    files = cert["suites"]["base"]["files"]
    assert "suites/base/requirements.json" in files and "suites/base/rpc.py" in files
    assert not any("__pycache__" in f for f in files)
    assert "vectors/base/envelope-probes.json" in cert["vectors"]["base"]["files"]
    summary = (bundle / "SUMMARY.md").read_text()
    assert "raw-reference 1.0.0" in summary and "did not pass (exit code 1)" in summary
    assert cert["report"]["sha256"] in summary

    verified = cli("verify", str(bundle))
    assert verified.returncode == 0 and verified.stdout.startswith("verified:"), (
        verified.stdout + verified.stderr
    )


def _bundle(reports: dict[str, Path], tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    certify.certify(reports["broken"], bundle)
    assert certify.verify(bundle) == []
    return bundle


def test_an_edited_report_fails_verify(reports: dict[str, Path], tmp_path: Path) -> None:
    bundle = _bundle(reports, tmp_path)
    report = json.loads((bundle / "report.json").read_text())
    for case in report["cases"]:
        if case["verdict"] == "FAIL":
            case["verdict"] = "PASS"  # the classic forgery: make the failures go away
    (bundle / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    done = cli("verify", str(bundle))
    assert done.returncode == 1
    assert "refused: report.json was changed" in done.stdout


def test_a_consistently_re_hashed_forgery_is_still_caught_by_the_facts(
    reports: dict[str, Path], tmp_path: Path
) -> None:
    bundle = _bundle(reports, tmp_path)
    report = json.loads((bundle / "report.json").read_text())
    for case in report["cases"]:
        case["verdict"] = "PASS"
    data = json.dumps(report).encode()
    (bundle / "report.json").write_bytes(data)
    cert = json.loads((bundle / "certificate.json").read_text())
    cert["report"]["sha256"] = certify.sha256(data)
    (bundle / "certificate.json").write_text(json.dumps(cert), encoding="utf-8")
    problems = certify.verify(bundle)
    assert any("certificate's result does not match" in p for p in problems)
    assert any("footer does not match its cases" in p for p in problems)


@pytest.mark.parametrize("edit", ["summary", "suite digest", "extra file", "harness"])
def test_other_edits_fail_verify(reports: dict[str, Path], tmp_path: Path, edit: str) -> None:
    bundle = _bundle(reports, tmp_path)
    cert = json.loads((bundle / "certificate.json").read_text())
    if edit == "summary":
        (bundle / "SUMMARY.md").write_text("# All passed\n", encoding="utf-8")
    elif edit == "suite digest":
        cert["suites"]["base"]["files"]["suites/base/rpc.py"] = "0" * 64
        cert["suites"]["base"]["sha256"] = "0" * 64
    elif edit == "extra file":
        shutil.copy(bundle / "report.json", bundle / "report-fixed.json")
    elif edit == "harness":
        cert["harness"]["version"] = "9.9.9"
    (bundle / "certificate.json").write_text(json.dumps(cert), encoding="utf-8")
    problems = certify.verify(bundle)
    assert problems, edit
    if edit == "suite digest":
        assert problems == ["suites base differ from the installed harness: suites/base/rpc.py"]


def test_certify_refuses_an_incomplete_run(reports: dict[str, Path], tmp_path: Path) -> None:
    report = _report(reports["clean"])
    report["footer"].update(complete=False, reason="interrupted")
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    done = cli("certify", "--report", str(tmp_path / "report.json"), "--out", str(tmp_path / "bundle"))
    assert done.returncode == 2 and "incomplete" in done.stderr and not (tmp_path / "bundle").exists()


def test_verify_of_a_folder_that_is_no_bundle(tmp_path: Path) -> None:
    done = cli("verify", str(tmp_path))
    assert done.returncode == 1 and "certificate.json is missing" in done.stdout

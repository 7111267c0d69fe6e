"""Baselines of expected failures: listed FAILs are XFAIL (the run passes), a listed case that passes is
XPASS (a stale entry, the run fails), an ERROR stays ERROR; `baseline update` writes the file."""

from __future__ import annotations

import copy
import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from conformance.reporting import baseline, views
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"
ARGS = ("--suite", "base", "-k", "rpc", "--timeout", "5", "--quiet")


def _run(tmp_path: Path, name: str, *extra: str, defect: str = "none") -> tuple[int, dict[str, Any], Path]:
    out = tmp_path / name
    done = cli("run", "--server", stdio(RAW, "--defect", defect), *ARGS, "--report-dir", str(out), *extra)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    return done.returncode, report, out


def _write(path: Path, entries: dict[str, str]) -> Path:
    data = {
        "format": "mcp-conformance-baseline",
        "format_version": 1,
        "expected_failures": [{"case": k, "reason": v} for k, v in entries.items()],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_update_then_run_turns_known_failures_into_xfail_and_passes(tmp_path: Path) -> None:
    code, before, out = _run(tmp_path, "before", defect="wrong-id")
    assert code == 1 and before["footer"]["totals"]["FAIL"] == 3
    done = cli("baseline", "update", "--report", str(out), "--out", str(tmp_path / "baseline.json"))
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "baseline.json").read_text())
    assert [e["case"] for e in written["expected_failures"]] == ["base.rpc.id-echo"]
    assert "sent id" in written["expected_failures"][0]["reason"]

    code, after, out = _run(
        tmp_path, "after", "--baseline", str(tmp_path / "baseline.json"), defect="wrong-id"
    )
    assert code == 0 and after["footer"]["exit_code"] == 0
    xfail = [c for c in after["cases"] if c["verdict"] == "XFAIL"]
    assert len(xfail) == 3 and all(c["baseline"]["verdict"] == "FAIL" for c in xfail)
    assert after["footer"]["totals"]["XFAIL"] == 3 and after["footer"]["totals"]["FAIL"] == 0
    assert after["footer"]["baseline"]["unmatched"] == []
    junit = ET.parse(out / "junit.xml").getroot()
    assert len(junit.findall(".//skipped[@type='xfail']")) == 3 and not junit.findall(".//failure")
    assert "XFAIL" in (out / "report.md").read_text() and 'value="XFAIL"' in (out / "report.html").read_text()


def test_a_stale_entry_is_xpass_and_fails_the_run(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "baseline.json", {"base.rpc.id-echo": "server bug #12", "base.no.such-check": "old"}
    )
    code, report, out = _run(tmp_path, "stale", "--baseline", str(path))
    assert code == 1 and report["footer"]["exit_code"] == 1
    xpass = [c for c in report["cases"] if c["verdict"] == "XPASS"]
    assert len(xpass) == 3 and all("stale baseline entry" in c["message"] for c in xpass)
    assert not [c for c in report["cases"] if c["verdict"] in ("FAIL", "ERROR")], "only the stale entry fails"
    assert report["footer"]["baseline"]["unmatched"] == ["base.no.such-check"]
    junit = ET.parse(out / "junit.xml").getroot()
    assert len(junit.findall(".//failure[@type='XPASS']")) == 3
    summary = views.summary_text(report)
    assert "XPASS 3" in summary and "base.no.such-check" in summary


def test_a_case_key_entry_covers_only_that_case(tmp_path: Path) -> None:
    path = _write(tmp_path / "baseline.json", {"base.rpc.id-echo[stdio@2025-11-25]": "only this revision"})
    code, report, _ = _run(tmp_path, "one", "--baseline", str(path), defect="wrong-id")
    verdicts = {c["key"]: c["verdict"] for c in report["cases"] if c["check"] == "base.rpc.id-echo"}
    assert verdicts == {
        "base.rpc.id-echo[stdio@2026-07-28]": "FAIL",
        "base.rpc.id-echo[stdio@2025-11-25]": "XFAIL",
        "base.rpc.id-echo[stdio@2025-06-18]": "FAIL",
    }
    assert code == 1


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("not json", "is not JSON"),
        (
            '{"format": "mcp-conformance-baseline", "format_version": 1, '
            '"expected_failures": [{"case": "X"}]}',
            "malformed",
        ),
        (
            '{"format": "mcp-conformance-baseline", "format_version": 1, "expected_failures": '
            '[{"case": "base.a.b", "reason": "r"}, {"case": "base.a.b", "reason": "again"}]}',
            "twice",
        ),
    ],
)
def test_a_bad_baseline_is_a_usage_error_before_any_run(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content, encoding="utf-8")
    done = cli(
        "run", "--server", stdio(RAW), *ARGS, "--report-dir", str(tmp_path / "r"), "--baseline", str(path)
    )
    assert done.returncode == 2 and needle in done.stderr
    assert not (tmp_path / "r").exists()


def _case(key: str, verdict: str, message: str = "why") -> dict[str, Any]:
    check, rest = key.split("[", 1)
    transport, revision = rest.rstrip("]").split("@")
    return {
        **{"key": key, "check": check, "suite": "s", "requirement": "REQ-1", "level": "MUST", "title": "t"},
        **{"target": 0, "transport": transport, "revision": revision, "verdict": verdict, "message": message},
        **{"duration": 0.0, "evidence": {}, "transcript": []},
    }


def _report(*cases: dict[str, Any]) -> dict[str, Any]:
    """A schema-valid report of these cases (`baseline.update` reads it through the report model)."""
    harness = {"name": "mcp-conformance", "version": "0"}
    header = {"run_id": "r1", "harness": harness, "started": "2026-01-01T00:00:00Z", "suites": ["s"]}
    return {
        **{"format": "mcp-conformance-report", "format_version": 1, "header": header, "targets": []},
        **{"cases": list(cases), "footer": {"complete": True, "reason": "complete"}},
    }


def test_apply_leaves_errors_and_skips_alone() -> None:
    report = _report(
        _case("s.a.b[stdio@x]", "ERROR"), _case("s.a.c[stdio@x]", "SKIP"), _case("s.a.d[stdio@x]", "WARN")
    )
    listed = baseline.Baseline({"s.a.b": "flaky", "s.a.c": "n/a", "s.a.d": "known"}, "b.json", "0" * 64)
    baseline.apply(report, listed)
    assert [c["verdict"] for c in report["cases"]] == ["ERROR", "SKIP", "XFAIL"]
    assert report["footer"]["exit_code"] == 1, "a baseline cannot excuse what the harness could not judge"


def test_update_keeps_reasons_and_narrows_to_keys_when_a_check_fails_only_somewhere() -> None:
    report = _report(
        _case("s.a.b[stdio@1]", "FAIL"),
        _case("s.a.b[stdio@2]", "PASS"),
        _case("s.a.c[stdio@1]", "XFAIL"),
        _case("s.a.d[stdio@1]", "FAIL"),
        _case("s.a.e[stdio@1]", "WARN"),
        _case("s.a.f[stdio@1]", "XPASS"),
    )
    report["cases"][2]["baseline"] = {"entry": "s.a.c", "reason": "kept reason", "verdict": "FAIL"}
    previous = baseline.Baseline({"s.a.c": "kept reason", "s.a.f": "stale, dropped"})
    data = baseline.update(copy.deepcopy(report), previous)
    assert schemas.errors(baseline.SCHEMA_ID, None, data) == []
    entries = {e["case"]: e["reason"] for e in data["expected_failures"]}
    assert set(entries) == {"s.a.b[stdio@1]", "s.a.c", "s.a.d"}
    assert entries["s.a.c"] == "kept reason"
    with_warn = baseline.update(copy.deepcopy(report), previous, include_warn=True)
    assert "s.a.e" in {e["case"] for e in with_warn["expected_failures"]}


def test_a_client_report_is_baselined_by_case_key_or_check_in_its_scenario() -> None:
    """A client case key ends in `/scenario`: `update` names a check failing in every case of one
    scenario `check/scenario`, a case failing alone by its key; both load and match, `#target` or not."""
    report = _report(
        _case("c.a.b[http@1]/s1", "FAIL"),
        _case("c.a.b[stdio@1]#1/s1", "FAIL"),
        _case("c.a.b[http@1]/auth/s2", "PASS"),
        _case("c.a.c[http@1]/s1", "PASS"),
        _case("c.a.c[stdio@1]#1/s1", "FAIL"),
    )
    data = baseline.update(copy.deepcopy(report), None)
    assert schemas.errors(baseline.SCHEMA_ID, None, data) == []
    assert [e["case"] for e in data["expected_failures"]] == ["c.a.b/s1", "c.a.c[stdio@1]#1/s1"]
    listed = baseline.Baseline({"c.a.b/s1": "known", "c.a.c[stdio@1]/s1": "known", "c.a.b/auth/s2": "stale"})
    baseline.apply(report, listed)
    assert [c["verdict"] for c in report["cases"]] == ["XFAIL", "XFAIL", "XPASS", "PASS", "XFAIL"]


#: An official expected-failures file as server teams keep them (the official suite's format): a whole
#: scenario, a scenario:check-id, a check only the official fixture shows, an unknown scenario, and a client
#: entry (the client side's import: `test_import_official_client_entries_gate_a_client_run`).
OFFICIAL_EXPECTED = """\
# expected failures of my server (official suite)
server:
  - server-stateless:sep-2575-server-implements-discover   # discover lacks supportedVersions
  - 'tools-call-error'
  - no-such-scenario
client:
  - initialize
"""


def test_import_official_gates_a_run_like_any_baseline(tmp_path: Path) -> None:
    """The imported entries cover the rows judging their checks: the mutant's FAIL of that row is XFAIL
    (the run passes), the reference's PASS is XPASS (the stale entry fails the run); each entry that maps
    to nothing is one line."""
    source = tmp_path / "expected-failures.yml"
    source.write_text(OFFICIAL_EXPECTED, encoding="utf-8")
    done = cli("baseline", "import-official", str(source), "--out", str(tmp_path / "baseline.json"))
    assert done.returncode == 0, done.stderr
    unmapped = [line for line in done.stdout.splitlines() if line.startswith("not mapped: ")]
    assert unmapped == [
        "not mapped: no-such-scenario: no server scenario of @modelcontextprotocol/conformance"
        " 0.2.0-alpha.12 is named 'no-such-scenario'",
    ]
    written = baseline.load(tmp_path / "baseline.json")
    assert written.entries == {
        "base.discover.shape": "official expected failure: "
        + "server-stateless:sep-2575-server-implements-discover",
        # a fixture-only check before the official-fixture pack: its row judges it now
        "official-fixture.content.error": "official expected failure: tools-call-error",
        # the client entry: the client rows judging the scenario's official checks, in that scenario
        "client.lifecycle.initialize-params/initialize": "official expected failure: client:initialize",
        "client.lifecycle.version-offered/initialize": "official expected failure: client:initialize",
    }
    args = ("--suite", "base", "-k", "discover", "--quiet", "--baseline", str(tmp_path / "baseline.json"))
    mutant = cli(
        "run",
        "--server",
        stdio(RAW, "--defect", "discover-no-versions"),
        *args,
        "--report-dir",
        str(tmp_path / "mutant"),
    )
    report = json.loads((tmp_path / "mutant" / "report.json").read_text(encoding="utf-8"))
    assert mutant.returncode == 0, mutant.stdout
    assert [(c["check"], c["verdict"]) for c in report["cases"] if c["check"] != "base.connect"] == [
        ("base.discover.shape", "XFAIL")
    ]
    reference = cli("run", "--server", stdio(RAW), *args, "--report-dir", str(tmp_path / "reference"))
    report = json.loads((tmp_path / "reference" / "report.json").read_text(encoding="utf-8"))
    assert reference.returncode == 1
    assert [c["verdict"] for c in report["cases"] if c["check"] == "base.discover.shape"] == ["XPASS"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("server:\n  - tools-list: tools-name-format\n", "no space after the colon"),
        ("servers:\n  - tools-list\n", "unknown key 'servers'"),
        ("server:\n  - [tools-list]\n", "is not a scenario"),
        ("server: tools-list\n", "line 1: not an expected-failures line"),
        ("server:\n  - tools-list\nserver:\n  - ping\n", "'server' appears twice"),
    ],
)
def test_import_official_refuses_what_is_not_the_format(tmp_path: Path, content: str, needle: str) -> None:
    source = tmp_path / "expected-failures.yml"
    source.write_text(content, encoding="utf-8")
    done = cli("baseline", "import-official", str(source), "--out", str(tmp_path / "baseline.json"))
    assert done.returncode == 2 and needle in done.stderr, done.stderr
    assert not (tmp_path / "baseline.json").exists()


def test_the_subset_parser_reads_what_yaml_reads() -> None:
    """The subset the import parses without a YAML library gives what PyYAML (a test dependency) gives."""
    import yaml

    from conformance.reporting.official_baseline import parse

    text = OFFICIAL_EXPECTED + "  - \"quoted:check\"  # comment\n  - 'it''s'\n"
    assert parse(text) == yaml.safe_load(text)
    assert parse("server: []\nclient:\n") == {"server": [], "client": []}


#: An SDK's expected-failures file (the shape the official README gives, both sections), whose client
#: entries name a check of a scenario, whole scenarios (one an OAuth extension's, whose shared OAuth checks
#: are judged in other scenarios here, so only its own checks become entries), and a check that is the
#: official scenario server's own log.
OFFICIAL_SDK_EXPECTED = """\
# conformance-baseline.yml
server:
  - tools-call-with-progress
client:
  - tools_call:tool-add-numbers
  - sse-retry
  - auth/dpop
  - initialize:server-info
"""
CLIENT_ARGS = ("--scenario", "tools_call", "--scenario", "initialize", "--transport", "http",
               "--transport", "stdio", "--revision", "2025-11-25", "--quiet")  # fmt: skip


def test_import_official_client_entries_gate_a_client_run(tmp_path: Path) -> None:
    """`client:` entries map through official.json's client section to the client pack's checks in their
    scenario: the mutant client's FAIL of tools_call is XFAIL over both transports (the run passes), the
    reference client's PASS of it is XPASS (the stale entry fails the run); `--side client` leaves the
    server entries out."""
    source = tmp_path / "conformance-baseline.yml"
    source.write_text(OFFICIAL_SDK_EXPECTED, encoding="utf-8")
    out = tmp_path / "baseline.json"
    done = cli("baseline", "import-official", str(source), "--out", str(out), "--side", "client")
    assert done.returncode == 0, done.stderr
    unmapped = [line for line in done.stdout.splitlines() if line.startswith("not mapped: ")]
    assert [line.split(": not judged")[0].split(": no row")[0] for line in unmapped] == [
        "not mapped: client:initialize:server-info",
    ]
    entries = baseline.load(out).entries
    assert entries["client.tools.call/tools_call"] == (
        "official expected failure: client:tools_call:tool-add-numbers"
    )
    assert {name.split("/", 1)[1] for name in entries} == {"tools_call", "sse-retry", "auth/dpop"}
    assert {name for name in entries if name.endswith("/auth/dpop")} == {
        f"client.auth.dpop-{part}.dpop/auth/dpop"
        for part in ("jti", "request-proof", "scheme", "token-proof")
    }
    assert "client.sse.retry-wait/sse-retry" in entries and not any(n.startswith("base.") for n in entries)
    mutant = [sys.executable, "-m", "tests.servers.client_mutants", "arguments-list"]
    runs = {}
    for name, command in (("mutant", shlex.join(mutant)), ("reference", None)):
        given = ("--command", command) if command else ()
        folder = tmp_path / name
        runs[name] = cli("client", *given, *CLIENT_ARGS, "--baseline", str(out), "--report-dir", str(folder))
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        tools = [c["verdict"] for c in report["cases"] if c["check"] == "client.tools.call"]
        assert tools == (["XFAIL", "XFAIL"] if name == "mutant" else ["XPASS", "XPASS"]), name
        assert {c["verdict"] for c in report["cases"] if c["check"] != "client.tools.call"} == {"PASS"}
        assert report["footer"]["baseline"]["unmatched"] == sorted(
            n for n in entries if "tools_call" not in n
        )
    assert runs["mutant"].returncode == 0 and runs["reference"].returncode == 1

"""The pytest plugin: inert without --mcp-server or --mcp-client; with either, one item per case and the
CLI's verdicts, IDs and report (`run`'s, or `client`'s for a client); each pytest session runs in a
subprocess, as an implementer's own would."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformance import schemas
from tests.conftest import PY, REPO, cli, stdio

pytest_plugins = ["pytester"]

RAW = "tests.servers.raw_server"
# A FAIL (a structuredContent that breaks its outputSchema), and a WARN with SKIPs (a cursor that loops).
SERVERS = [stdio(RAW, "--defect", "schema-violation"), stdio(RAW, "--defect", "cursor-loop")]
SELECT = "call,tools"

INERT = """
import sys

HEAVY = ("conformance.front.api", "conformance.engine.runner", "conformance.reporting.views", "mcp", "httpx",
         "jsonschema", "pydantic")


def test_nothing_heavy_was_imported(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("mcp_conformance")
    assert [m for m in HEAVY if m in sys.modules] == []
"""


def _server_args() -> list[str]:
    return [arg for server in SERVERS for arg in ("--mcp-server", server)]


def test_without_mcp_server_the_plugin_adds_nothing_and_imports_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine=INERT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=1)
    assert "mcp-conformance:" not in result.stdout.str()  # no header line, no summary line
    assert "--mcp-server=SPEC" in pytester.runpytest_subprocess("--help", timeout=300).stdout.str()


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("cli")
    done = cli(
        "run", *(a for s in SERVERS for a in ("--server", s)), "--suite", "base", "-k", SELECT,
        "--timeout", "5", "--quiet", "--report-dir", str(out),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


def test_same_cases_and_verdicts_as_the_cli(
    pytester: pytest.Pytester, cli_report: dict[str, Any], tmp_path: Path
) -> None:
    pytester.makepyfile(test_own="def test_implementers_own_test():\n    assert True\n")
    report_dir = tmp_path / "plugin-report"
    result = pytester.runpytest_subprocess(
        *_server_args(), "--mcp-suite", "base", "--mcp-select", SELECT, "--mcp-timeout", "5",
        f"--mcp-report-dir={report_dir}", f"--junitxml={tmp_path / 'junit.xml'}", "-p", "no:cacheprovider",
        "-rA", timeout=300,
    )  # fmt: skip
    verdicts = Counter(c["verdict"] for c in cli_report["cases"])
    assert verdicts["FAIL"] and verdicts["WARN"] and verdicts["SKIP"] and verdicts["PASS"]
    result.assert_outcomes(
        passed=verdicts["PASS"] + verdicts["WARN"] + 1,  # + the implementer's own test
        failed=verdicts["FAIL"] + verdicts["ERROR"],
        skipped=verdicts["SKIP"],
        warnings=verdicts["WARN"],
    )
    plugin_report = json.loads((report_dir / "report.json").read_text())
    assert schemas.errors(schemas.REPORT_ID, None, plugin_report) == []
    assert [(c["key"], c["verdict"]) for c in plugin_report["cases"]] == [
        (c["key"], c["verdict"]) for c in cli_report["cases"]
    ]
    assert plugin_report["footer"]["exit_code"] == cli_report["footer"]["exit_code"] == 1
    assert plugin_report["header"]["options"]["select"] == SELECT
    assert {p.name for p in report_dir.iterdir()} >= {"report.md", "junit.xml", "report.html"}

    output = result.stdout.str()
    failed = [c for c in cli_report["cases"] if c["verdict"] == "FAIL"]
    for case in failed:
        assert f"FAILED mcp-conformance::{case['key']}" in output
    assert "quote:" in output and "McpConformanceWarning" in output
    # pytest counts the cases as it collects them, beside the implementer's own test.
    assert f"collected {len(cli_report['cases']) + 1} items" in output
    # Each warning is located at its case (requirement and level), never at the plugin's own code.
    summary = output[output.index("warnings summary") : output.index("-- Docs: https://docs.pytest.org")]
    assert "pytest_plugin.py" not in summary
    for case in (c for c in cli_report["cases"] if c["verdict"] == "WARN"):
        level = f"{case['level']}; judged as {case['judged_at']}" if case.get("judged_at") else case["level"]
        assert f"mcp-conformance::{case['key']}" in summary
        assert f"{case['requirement']} ({level}):0: McpConformanceWarning: {case['message']}" in summary
    ours = [tc for tc in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")]
    ours = [tc for tc in ours if tc.get("classname") == "mcp-conformance"]
    assert len(ours) == len(cli_report["cases"])
    # pytest's own JUnit writer re-brackets names ending in `#target`; first-target keys come out verbatim.
    names = {tc.get("name") for tc in ours}
    assert {c["key"] for c in cli_report["cases"] if c["target"] == 0} <= names


def test_pytest_k_selects_among_the_cases(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--mcp-server", SERVERS[0], "--mcp-suite", "base", "--mcp-select", SELECT, "--mcp-timeout", "5",
        "-k", "structured-matches-schema",
        "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    result.assert_outcomes(failed=3)  # one per revision the mutant speaks


def test_baseline_turns_failures_into_xfail(pytester: pytest.Pytester, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    entries = [{"case": "base.call.structured-matches-schema", "reason": "known: echo's text is a number"}]
    data = {"format": "mcp-conformance-baseline", "format_version": 1, "expected_failures": entries}
    baseline.write_text(json.dumps(data), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--mcp-server", SERVERS[0], "--mcp-suite", "base", "--mcp-select", SELECT, "--mcp-timeout", "5",
        f"--mcp-baseline={baseline}", "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 3 and "failed" not in outcomes, result.stdout.str()
    assert result.ret == pytest.ExitCode.OK


def test_a_bad_server_spec_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--mcp-server", "ftp://nowhere", "-p", "no:cacheprovider", timeout=300
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--mcp-server" in result.stderr.str()


def test_a_session_that_judged_nothing_fails(pytester: pytest.Pytester) -> None:
    """Every case SKIP (no tool may be called): pytest alone would pass it; the plugin fails it."""
    result = pytester.runpytest_subprocess(
        "--mcp-server", SERVERS[0], "--mcp-suite", "fuzz", "--mcp-call-tools", "none",
        "--mcp-protocol", "2025-11-25", "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    result.assert_outcomes(skipped=5)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "nothing was judged: all 5 cases are SKIP" in result.stdout.str()


OWN_TESTS = """
import sys


def test_the_harness_was_imported_without_assertion_rewriting():
    # pytest itself imports the plugin module (its entry point), and with it its parent packages.
    loaded_by_pytest = {"conformance", "conformance.front", "conformance.front.pytest_plugin"}
    loaders = {type(sys.modules[name].__loader__).__name__ for name in sys.modules
               if name.startswith(("conformance", "hypothesis.")) and name not in loaded_by_pytest}
    assert "conformance.engine.runner" in sys.modules and "conformance_packs.base.rpc" in sys.modules
    assert loaders and "AssertionRewritingHook" not in loaders


def test_the_sessions_own_asserts_are_still_rewritten():
    assert [1, 2] == [1, 3]
"""


def test_the_run_imports_as_the_cli_and_the_sessions_own_tests_keep_their_asserts(
    pytester: pytest.Pytester,
) -> None:
    """The harness and its packs are imported without pytest's assertion rewriting (the CLI's cost);
    the hook is back for the implementer's tests, whose failed assert still shows its introspection."""
    pytester.makepyfile(test_own=OWN_TESTS)
    result = pytester.runpytest_subprocess(
        "--mcp-server", SERVERS[0], "--mcp-suite", "base", "--mcp-select", "call",
        "--mcp-protocol", "2025-11-25", "--mcp-timeout", "5", "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2, result.stdout.str()  # the mutant's FAIL, and the second own test
    result.stdout.fnmatch_lines(["*At index 1 diff: 2 != 3*"])
    assert "FAILED test_own.py::test_the_sessions_own_asserts_are_still_rewritten" in result.stdout.str()


#: A client judged by the plugin as `mcp-conformance client` judges it: two scenarios, over HTTP and
#: stdio, at one revision (the client pack's own tests judge every row; here the wiring is under test).
CLIENT_SELECTION = ("scenario", "tools_call", "scenario", "initialize", "transport", "http", "transport",
                    "stdio", "revision", "2025-11-25")  # fmt: skip
REFERENCE_CLIENT = shlex.join([PY, "-m", "conformance_reference.client"])
#: The mutant that sends tools/call its arguments as a list: CLIENT-TOOLS-001 FAILs over each transport.
MUTANT_CLIENT = f"PYTHONPATH={shlex.quote(str(REPO))} " + shlex.join(
    [PY, "-m", "tests.servers.client_mutants", "arguments-list"]
)


def _client_args(prefix: str) -> list[str]:
    pairs = zip(CLIENT_SELECTION[::2], CLIENT_SELECTION[1::2], strict=True)
    return [arg for name, value in pairs for arg in (f"{prefix}{name}", value)]


@pytest.fixture(scope="module")
def client_cli_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("client-cli")
    done = cli("client", "--command", MUTANT_CLIENT, *_client_args("--"), "--quiet", "--report-dir", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


def test_a_client_is_judged_with_the_cli_cases_and_verdicts(
    pytester: pytest.Pytester, client_cli_report: dict[str, Any], tmp_path: Path
) -> None:
    report_dir = tmp_path / "plugin-report"
    result = pytester.runpytest_subprocess(
        "--mcp-client", MUTANT_CLIENT, *_client_args("--mcp-"), f"--mcp-report-dir={report_dir}",
        "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    verdicts = Counter(c["verdict"] for c in client_cli_report["cases"])
    assert set(verdicts) == {"PASS", "FAIL"} and verdicts["FAIL"] == 2
    result.assert_outcomes(passed=verdicts["PASS"], failed=verdicts["FAIL"])
    plugin_report = json.loads((report_dir / "report.json").read_text())
    assert schemas.errors(schemas.REPORT_ID, None, plugin_report) == []
    assert [(c["key"], c["verdict"]) for c in plugin_report["cases"]] == [
        (c["key"], c["verdict"]) for c in client_cli_report["cases"]
    ]
    assert plugin_report["header"]["options"] == client_cli_report["header"]["options"]
    output = result.stdout.str()
    assert "mcp-conformance: client " in output  # the session's header names the client
    for case in (c for c in client_cli_report["cases"] if c["verdict"] == "FAIL"):
        assert case["requirement"] == "CLIENT-TOOLS-001"
        assert f"FAILED mcp-conformance::{case['key']}" in output
    assert "quote:" in output and "arguments" in output


def test_a_client_baseline_and_the_reference_client(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """The mutant's FAILs listed by `check/scenario` are xfails (the session passes); the reference
    client passes every item."""
    baseline = tmp_path / "baseline.json"
    entries = [{"case": "client.tools.call/tools_call", "reason": "known: arguments sent as a list"}]
    data = {"format": "mcp-conformance-baseline", "format_version": 1, "expected_failures": entries}
    baseline.write_text(json.dumps(data), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--mcp-client", MUTANT_CLIENT, *_client_args("--mcp-"), f"--mcp-baseline={baseline}",
        "-p", "no:cacheprovider", timeout=300,
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 2 and "failed" not in outcomes, result.stdout.str()
    assert result.ret == pytest.ExitCode.OK
    reference = pytester.runpytest_subprocess(
        "--mcp-client", REFERENCE_CLIENT, *_client_args("--mcp-"), "-p", "no:cacheprovider", timeout=300
    )
    outcomes = reference.parseoutcomes()
    assert outcomes.get("passed", 0) > 20 and set(outcomes) == {"passed"}, reference.stdout.str()
    assert reference.ret == pytest.ExitCode.OK


def test_a_bad_client_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    bad = {
        "--mcp-suite": ("base", "--mcp-client: 'base' is not a client pack"),
        "--mcp-scenario": ("no-such", "--mcp-client: no scenario run matches: no-such"),
        "--mcp-server": ("stdio:x", "--mcp-server and --mcp-client: one session judges servers or a client"),
        "--mcp-select": ("tools", "a client's cases are chosen with -k"),
        "--mcp-protocol": ("2025-06-18", "--mcp-protocol sets how a server is judged"),
    }
    for option, (value, said) in bad.items():
        result = pytester.runpytest_subprocess(
            "--mcp-client", REFERENCE_CLIENT, option, value, "-p", "no:cacheprovider", timeout=300
        )
        assert result.ret == pytest.ExitCode.USAGE_ERROR and said in result.stderr.str(), option

"""`mcp-conformance show CASE` and `replay CASE`, as a user runs them (real CLI subprocesses, the raw
test server with one planted defect over stdio)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PY, REPO, cli

SPEC = "stdio:" + shlex.join([PY, "-m", "tests.servers.raw_server", "--defect", "wrong-id"])
KEY = "base.rpc.id-echo[stdio@2025-06-18]"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of the id-echo check on the server that answers with the id off by one."""
    where = tmp_path_factory.mktemp("cases")
    result = cli("run", "--server", SPEC, "-k", "id-echo", "--quiet", "--report-dir", str(where))
    assert result.returncode == 1, result.stdout + result.stderr
    return where


def test_show_prints_the_quote_evidence_transcript_and_reproduction(folder: Path) -> None:
    result = cli("show", KEY, "--report", str(folder))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"FAIL  {KEY}\n")
    assert "Requirement: BASE-RPC-002 (MUST)" in out
    assert "Quote:       id: This member is REQUIRED. It MUST be the same as the value of the id" in out
    assert "tools/list: sent id 1002 (int), the response has 1003 (int)" in out
    assert "Evidence:" in out and "Transcript (2 entries):" in out
    assert "printf '%s\\n' " in out and '"method":"initialize"' in out
    assert f"mcp-conformance replay '{KEY}' --report" in out


@pytest.mark.parametrize("named", ["BASE.RPC.ID-ECHO[STDIO@2025-06-18]", "base.rpc.id-echo[stdio@2025-06"])
def test_show_takes_a_key_in_any_case_or_a_unique_prefix(folder: Path, named: str) -> None:
    result = cli("show", named, "--report", str(folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"FAIL  {KEY}\n")


def test_show_lists_the_cases_an_ambiguous_name_matches(folder: Path) -> None:
    result = cli("show", "base.rpc.id-echo", "--report", str(folder))
    assert result.returncode == 2
    assert "3 cases match 'base.rpc.id-echo'" in result.stderr and KEY in result.stderr


def test_show_suggests_the_case_a_typo_meant(folder: Path) -> None:
    result = cli("show", "base.rpc.id-ehco[stdio@2025-06-18]", "--report", str(folder))
    assert result.returncode == 2
    assert f"did you mean {KEY}?" in result.stderr
    assert "see `mcp-conformance show --help`" in result.stderr


def _show_in(folder: Path) -> subprocess.CompletedProcess[str]:
    """`mcp-conformance show KEY` run from `folder` without `--report` (so it looks under reports/)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [PY, "-m", "conformance", "show", KEY],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_show_reads_the_newest_report_by_default(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "reports" / "old").mkdir(parents=True)
    (tmp_path / "reports" / "new").mkdir()
    data = (folder / "report.json").read_bytes()
    (tmp_path / "reports" / "old" / "report.json").write_bytes(data.replace(b"1003 (int)", b"OLD"))
    newest = tmp_path / "reports" / "new" / "report.json"
    newest.write_bytes(data)
    os.utime(tmp_path / "reports" / "old" / "report.json", (1, 1))
    result = _show_in(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "the response has 1003 (int)" in result.stdout
    assert f"--report {newest.relative_to(tmp_path)}" in result.stdout


def test_show_without_a_report_says_how_to_name_one(tmp_path: Path) -> None:
    result = _show_in(tmp_path)
    assert result.returncode == 2
    assert "no report under reports/; name one with --report PATH" in result.stderr


def test_replay_runs_the_check_again_and_compares(folder: Path, tmp_path: Path) -> None:
    result = cli("replay", KEY, "--report", str(folder), "--report-dir", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert (
        f"replay: {KEY}: was FAIL, now FAIL: tools/list: sent id 1002 (int), the response has 1003 (int)"
        in result.stdout
    )
    assert "-k base.rpc.id-echo --protocol 2025-06-18" in result.stdout
    assert (tmp_path / "report.json").is_file()


def test_replay_of_a_connect_case_says_to_run_again(tmp_path: Path) -> None:
    where = tmp_path / "r"
    cli("run", "--server", "stdio:no-such-command-7f3a", "--quiet", "--report-dir", str(where))
    result = cli("replay", "base.connect", "--report", str(where))
    assert result.returncode == 2
    assert "whether the target can be reached at all" in result.stderr


def test_show_takes_a_requirement_id_and_picks_the_failing_case(folder: Path, tmp_path: Path) -> None:
    """The summary's finding lines name requirements: `show BASE-RPC-002` is the case that found it."""
    ambiguous = cli("show", "base-rpc-002", "--report", str(folder))
    assert ambiguous.returncode == 2 and "3 cases match 'base-rpc-002'" in ambiguous.stderr
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    for case in report["cases"]:
        if case["key"] != KEY and case["requirement"] == "BASE-RPC-002":
            case["verdict"] = "PASS"  # the other revisions met it: only KEY did not
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    result = cli("show", "BASE-RPC-002", "--report", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"FAIL  {KEY}\n")

"""docs/client.md's minimal client, written to the official contract and nothing else (the URL last on
its command line, the contract's environment variables, the standard library), runs unchanged: every
case of its two scenarios PASSes; the same program with one planted defect (its tools/list reuses the
initialize's request ID) FAILs exactly the row that defect breaks, CLIENT-HYG-001."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, cli

ARGS = (
    "--transport",
    "http",
    "--revision",
    "2025-11-25",
    "--scenario",
    "initialize",
    "--scenario",
    "tools_call",
)


def _program() -> str:
    doc = (REPO / "docs" / "client.md").read_text(encoding="utf-8")
    found = re.search(r"### A minimal client that honours it\n.*?```python\n(.*?)```", doc, re.S)
    assert found, "docs/client.md has no minimal client"
    return found.group(1)


def _judge(source: str, folder: Path) -> tuple[int, list[dict[str, object]]]:
    program = folder / "minimal.py"
    program.write_text(source, encoding="utf-8")
    reports = folder / "report"
    command = shlex.join([sys.executable, str(program)])
    done = cli("client", "--command", command, *ARGS, "--quiet", "--report-dir", str(reports))
    cases = json.loads((reports / "report.json").read_text(encoding="utf-8"))["cases"]
    return done.returncode, cases


@pytest.mark.parametrize("planted", [False, True], ids=["as-documented", "reused-id"])
def test_the_documented_minimal_client_passes_and_its_planted_defect_fails(
    planted: bool, tmp_path: Path
) -> None:
    source = _program()
    if planted:
        assert '"id": 2,' in source
        source = source.replace('"id": 2,', '"id": 1,')
    code, cases = _judge(source, tmp_path)
    failed = {(c["requirement"], c["verdict"]) for c in cases if c["verdict"] != "PASS"}
    if planted:
        assert (code, failed) == (1, {("CLIENT-HYG-001", "FAIL")})
    else:
        assert (code, failed) == (0, set())
    assert len(cases) == 16

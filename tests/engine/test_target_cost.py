"""A target's cost is bounded: a method that hung twice in a revision is not sent there again, and
`--target-budget` caps a target's wall time.

The server is `tests/servers/costly_server.py hang-tools`: six read-only tools whose every tools/call is
read and never answered, over three revisions, over stdio and (`--http`) Streamable HTTP, where every
other request is still answered while the calls hang; `--log` makes it write one line per call it left
unanswered, so the tests count the hangs the server saw instead of timing them. The harness runs as a
real subprocess under the peak-RSS wrapper of tests/hostile.py, and no process carrying the test's tag
may be left after it.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.sessions import HANGS_PER_METHOD
from conformance.model.targets import load_targets
from conformance.reporting import model
from tests.conftest import cli
from tests.hostile import PEAK_LIMIT_MB, harness, left_after

TIMEOUT = 2.0
REVISIONS = ("2026-07-28", "2025-11-25", "2025-06-18")  # what the raw server speaks
#: What the harness itself may spend beyond the hangs the rule allows: probes, starting and stopping
#: processes, the other cases (a few seconds on an idle machine, more on a loaded 2-core runner).
SLACK = 60.0


def _server(tmp_path: Path, *, http: bool = False) -> tuple[str, Path, str]:
    """A target file for `costly_server hang-tools` tagged for this test: its path, log and tag."""
    log, tag = tmp_path / "unanswered.log", f"costly-{uuid.uuid4().hex}"
    command = [sys.executable, "-m", "tests.servers.costly_server", "hang-tools", tag, "--log", str(log)]
    command += ["--http"] if http else []
    transport = 'transport = "http"\n' if http else ""
    path = tmp_path / "target.toml"
    path.write_text(f"[target]\ncommand = {json.dumps(command)}\n{transport}", encoding="utf-8")
    return str(path), log, tag


def _run(tag: str, *args: str) -> tuple[int, dict[str, Any], float]:
    """The harness on the tagged server: exit code, report.json (read back by the typed model too),
    peak RSS in MB; no tagged process may be left."""
    out = args[args.index("--report-dir") + 1]
    try:
        done, peak_mb = harness("run", *args)
    finally:
        left = left_after(tag)
    print(f"peak RSS {peak_mb:.0f} MB")  # shown with -s
    assert not left, f"left running: {left}"
    model.load(Path(out))
    assert peak_mb < PEAK_LIMIT_MB, f"the harness peaked at {peak_mb:.0f} MB"
    return done.returncode, _report(Path(out)), peak_mb


def _report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_a_method_that_hung_twice_is_not_sent_again_in_that_revision(http: bool, tmp_path: Path) -> None:
    server, log, tag = _server(tmp_path, http=http)
    began = time.monotonic()
    code, report, _ = _run(
        tag, "--server", server, "--timeout", f"{TIMEOUT:g}", "--quiet",
        "--report-dir", str(tmp_path / "out"),
    )  # fmt: skip
    wall = time.monotonic() - began
    assert code == 1, report["footer"]
    assert report["footer"]["exit_code"] == 1 and report["footer"]["complete"] is True
    assert report["targets"][0]["transport"] == ("http" if http else "stdio")
    assert sorted(report["targets"][0]["revisions_spoken"]) == sorted(REVISIONS)
    # The server saw exactly two unanswered tools/call per revision: the rest were never sent.
    assert Counter(log.read_text(encoding="utf-8").split()) == dict.fromkeys(REVISIONS, HANGS_PER_METHOD)
    # Without the rule each revision waited out 5 timeouts or more (two in the tool sweep, two in the
    # stack-trace probe, one for the unknown tool); with it, the hangs cost this much at most.
    bound = len(REVISIONS) * HANGS_PER_METHOD * TIMEOUT + SLACK
    assert wall < bound, f"{wall:.1f} s, the rule allows {bound:.0f} s"
    not_sent = [
        c
        for c in report["cases"]
        if re.search(r"not sent: tools/call (of '[^']*' )?already hung", c["message"])
    ]
    assert {c["revision"] for c in not_sent} == set(REVISIONS)
    for case in not_sent:
        assert "in this revision (case base." in case["message"], case["message"]
        assert case["duration"] < TIMEOUT * 1.5 + 5  # nothing waited a timeout: at most a restart
    # One defect, one verdict per revision: the sweep SKIPs its tools that never answered (a slow tool
    # breaks no rule), so the first case whose own call was not sent holds the hang (ERROR) and the
    # others that were not sent are blocked by it.
    for revision in REVISIONS:
        cases = [c for c in not_sent if c["revision"] == revision]
        assert [c["verdict"] for c in cases][:1] == ["ERROR"]
        assert all(c["verdict"] == "SKIP" and c["blocked_by"] == cases[0]["key"] for c in cases[1:])
    # Nothing judged is never PASS: the calls that hung or were not sent judged nothing.
    calls = [c for c in report["cases"] if c["check"].startswith("base.call.")]
    assert calls and all(c["verdict"] != "PASS" for c in calls)
    if http:  # the hanging calls blocked nothing: the other requests were answered and judged
        assert any(c["check"] == "base.tools.list-shape" and c["verdict"] == "PASS" for c in report["cases"])


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_a_spent_target_budget_ends_the_target_with_its_cases_error(http: bool, tmp_path: Path) -> None:
    """Also over Streamable HTTP, where the budget cuts a tools/call whose connection the server holds
    open: the launched server process is stopped all the same (`_run` counts what is left)."""
    server, _, tag = _server(tmp_path, http=http)
    began = time.monotonic()
    code, report, _ = _run(
        tag, "--server", server, "--timeout", f"{TIMEOUT:g}", "--target-budget", "5", "--quiet",
        "--report-dir", str(tmp_path / "out"),
    )  # fmt: skip
    wall = time.monotonic() - began
    assert code == 1, report["footer"]
    assert wall < 5 + SLACK
    assert report["targets"][0]["transport"] == ("http" if http else "stdio")
    assert report["targets"][0]["timeouts"] == {"request": TIMEOUT, "start": 60.0, "target": 5.0}
    spent = "the target's budget of 5 s was spent"
    cases = report["cases"]
    # A revision runs its cases in report order (over HTTP the revisions run side by side, each in
    # order): once the budget is spent, every later case of each revision is ERROR at once.
    for revision in {c["revision"] for c in cases}:
        own = [c for c in cases if c["revision"] == revision]
        first = next((i for i, c in enumerate(own) if spent in c["message"]), len(own))
        for case in own[first:]:
            assert case["verdict"] == "ERROR" and spent in case["message"], case
            assert case["message"].startswith(("not run: ", "not finished: "))
    assert any(spent in c["message"] for c in cases)
    assert sum(c["message"].startswith("not run: ") for c in cases) > 20


def test_a_target_file_sets_the_budget_and_the_command_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "target.toml"
    command = [sys.executable, "-m", "tests.servers.costly_server", "hang-tools"]
    path.write_text(
        f"[target]\ncommand = {json.dumps(command)}\n[timeouts]\ntarget = 3\nrequest = 2\n", encoding="utf-8"
    )
    (target,) = load_targets(path)
    assert target.target_budget == 3.0
    done = cli(
        "run", "--server", str(path), "--quiet", "-k", "tools.list", "--report-dir", str(tmp_path / "a")
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1 if this machine took the 3 s to probe
    assert _report(tmp_path / "a")["targets"][0]["timeouts"]["target"] == 3.0
    done = cli(
        "run", "--server", str(path), "--quiet", "-k", "tools.list", "--target-budget", "300",
        "--report-dir", str(tmp_path / "b"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert _report(tmp_path / "b")["targets"][0]["timeouts"]["target"] == 300.0

"""Start-up budgets and start order: a slow first answer is not an outage, and `-j 1` starts one server
process at a time (issue 12, items 3 and 4).

Both run real processes through `tests/servers/start_wrapper.py`, which wraps the base reference server:
it holds a lock from its start until the server's first answer has passed and logs any start that found
the lock taken, and it can make the first start cold.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, server_argv

#: Full CLI runs through a start wrapper, one of them a 20 s cold start.
pytestmark = pytest.mark.slow

REFERENCE = server_argv("conformance_reference.base_server")


def _wrapped(tmp_path: Path, *extra: str) -> str:
    wrapper = [sys.executable, "-m", "tests.servers.start_wrapper", "--lock", str(tmp_path / "lock")]
    wrapper += ["--log", str(tmp_path / "starts.log"), *extra, "--", *REFERENCE]
    return "stdio:" + shlex.join(wrapper)


def _report(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


def _log(tmp_path: Path, key: str) -> list[str]:
    lines = (tmp_path / "starts.log").read_text(encoding="utf-8").splitlines()
    return [
        line.split()[1] if key == "live" else line.split()[0]
        for line in lines
        if (key == "live") == line.startswith("live")
    ]


def _starts(tmp_path: Path) -> list[str]:
    return _log(tmp_path, "start")


def test_a_cold_start_of_20_s_passes_with_the_default_start_budget(tmp_path: Path) -> None:
    spec = _wrapped(tmp_path, "--cold", "20", "--cold-marker", str(tmp_path / "warm"))
    out = tmp_path / "report"
    # The checks that need no sessions of their own: every revision is probed (the cold start waited
    # out in the first), and judged.
    args = ("-k", "rpc.,tools.list", "--quiet", "--report-dir", str(out))
    result = cli("run", "--server", spec, *args, timeout=600)
    report = _report(out)
    assert result.returncode == 0, result.stdout[-3000:]
    assert report["targets"][0]["timeouts"] == {"request": 10.0, "start": 60.0, "target": 600.0}
    assert report["targets"][0]["revisions_spoken"], "the cold server was judged, not given up on"
    assert not [c for c in report["cases"] if c["verdict"] in ("FAIL", "ERROR")]


def test_the_same_cold_start_is_unreachable_with_a_start_budget_of_5_s(tmp_path: Path) -> None:
    spec = _wrapped(tmp_path, "--cold", "20", "--cold-marker", str(tmp_path / "warm"))
    out = tmp_path / "report"
    # --timeout 2 only shortens the later probes: after one probe waited out the start budget, the
    # server has had its start-up and each further probe waits the per-request timeout.
    args = ("--start-timeout", "5", "--timeout", "2", "--quiet", "--report-dir", str(out))
    result = cli("run", "--server", spec, *args, timeout=600)
    report = _report(out)
    assert result.returncode == 3, result.stdout[-3000:]
    assert report["targets"][0]["timeouts"] == {"request": 2.0, "start": 5.0, "target": 600.0}
    connect = report["cases"][0]
    assert connect["verdict"] == "ERROR" and "within 5 s" in connect["message"], connect["message"]
    assert not (tmp_path / "warm").exists(), "no start was allowed to finish"


def test_a_target_files_timeouts_are_read_and_the_command_line_wins(tmp_path: Path) -> None:
    command = json.dumps(REFERENCE)
    target = tmp_path / "target.toml"
    target.write_text(
        f"[target]\ncommand = {command}\n[timeouts]\nrequest = 7\nstart = 33\n", encoding="utf-8"
    )
    out = tmp_path / "a"
    assert (
        cli("run", "--server", str(target), "-k", "id-echo", "--quiet", "--report-dir", str(out)).returncode
        == 0
    )
    assert _report(out)["targets"][0]["timeouts"] == {"request": 7.0, "start": 33.0, "target": 600.0}
    out = tmp_path / "b"
    args = ("-k", "id-echo", "--timeout", "4", "--quiet", "--report-dir", str(out))
    assert cli("run", "--server", str(target), *args).returncode == 0
    assert _report(out)["targets"][0]["timeouts"] == {"request": 4.0, "start": 33.0, "target": 600.0}


def test_with_j1_no_two_server_processes_start_at_once(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = cli("run", "--server", _wrapped(tmp_path), "-j", "1", "--quiet", "--report-dir", str(out))
    assert result.returncode == 0, result.stdout[-3000:]
    starts = _starts(tmp_path)
    assert len(starts) >= 4, "probes and fresh sessions each start a process"
    assert "overlap" not in starts, starts


def test_with_j1_a_probe_stops_its_process_before_the_next_starts(tmp_path: Path) -> None:
    """Checks that need no sessions of their own: each revision's process is alone, probes included."""
    out = tmp_path / "report"
    args = ("-j", "1", "-k", "rpc.,tools.list", "--quiet", "--report-dir", str(out))
    result = cli("run", "--server", _wrapped(tmp_path), *args)
    assert result.returncode == 0, result.stdout[-3000:]
    live = _log(tmp_path, "live")
    assert len(live) >= 5 and set(live) == {"0"}, live


def test_the_overlap_detector_sees_parallel_starts_with_j4(tmp_path: Path) -> None:
    """The control: with -j 4 the probes start side by side, and the wrapper notices."""
    out = tmp_path / "report"
    args = ("-j", "4", "-k", "rpc.,tools.list", "--quiet", "--report-dir", str(out))
    result = cli("run", "--server", _wrapped(tmp_path), *args)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "overlap" in _starts(tmp_path)
    assert set(_log(tmp_path, "live")) != {"0"}, "probe processes stay alive side by side with -j 4"

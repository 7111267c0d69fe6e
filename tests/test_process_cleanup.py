"""Every process a target starts ends with its session, also one that left the process group.

The servers are `tests/servers/costly_server.py`: one whose child calls `setsid()` and sleeps, one whose
child (in a session of its own too) keeps the server's stdout open after the server exits. Every
process carries the test's own tag in its command line, so only this test's processes are counted.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import cli, run

MODES = ("setsid-grandchild", "stdout-holder")
NOISE = ("Exception ignored", "Event loop is closed", "Task was destroyed")
#: /proc holds a few hundred processes on a runner; more than this is not a machine to scan.
MAX_SCAN = 100_000


def _tagged(tag: str) -> list[int]:
    """The live processes whose command line carries `tag` (a bounded scan of /proc)."""
    found = []
    for count, entry in enumerate(Path("/proc").iterdir()):
        if count > MAX_SCAN:
            break
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if tag.encode() in argv:
            found.append(int(entry.name))
    return found


def _children() -> set[int]:
    """The processes (zombies too) whose parent is this one."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rfind(b")") + 2 :].split()[1]) == me:
            found.add(int(entry.name))
    return found


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.mark.parametrize("mode", MODES)
def test_no_process_outlives_the_run_and_stderr_stays_clean(mode: str, tmp_path: Path) -> None:
    tag = f"costly-{uuid.uuid4().hex}"
    server = f"stdio:{sys.executable} -m tests.servers.costly_server {mode} {tag}"
    done = cli(
        "run", "--server", server, "--protocol", "2025-11-25", "--timeout", "2", "--quiet",
        "--report-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert (tmp_path / "out" / "report.json").exists()
    left = _tagged(tag)
    assert not left, f"left running: {left}"
    for noise in NOISE:
        assert noise not in done.stderr, done.stderr[-3000:]


def test_strays_are_killed_and_reaped_in_process(tmp_path: Path) -> None:
    """In the harness's own process: no tagged process is left, and no zombie child either (the harness
    is a subreaper, so the strays' orphans came to it, and it reaped them)."""
    tag = f"costly-{uuid.uuid4().hex}"
    before = _children()
    servers = [f"stdio:{sys.executable} -m tests.servers.costly_server {mode} {tag}" for mode in MODES]
    report = run(servers, protocol="2025-11-25", timeout=2.0, select="tools.list")
    assert report["cases"] and all(c["verdict"] == "PASS" for c in report["cases"]), report["cases"]
    assert not _tagged(tag)
    assert _children() <= before

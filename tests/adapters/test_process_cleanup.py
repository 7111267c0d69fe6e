"""Every process a target starts ends with its session, also one that left the process group.

The servers are `tests/servers/costly_server.py`: one whose child calls `setsid()` and sleeps, one whose
child (in a session of its own too) keeps the server's stdout open after the server exits. Every
process carries the test's own tag in its command line, so only this test's processes are counted.
The harness runs as a real subprocess under the peak-RSS wrapper of tests/hostile.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

import pytest

from conformance.adapters.stdio import StdioAdapter
from conformance.adapters.transcript import Transcript
from conformance.reporting import model
from tests.conftest import REPO, run
from tests.hostile import PEAK_LIMIT_MB, harness, left_after, tagged

MODES = ("setsid-grandchild", "stdout-holder")
NOISE = ("Exception ignored", "Event loop is closed", "Task was destroyed")


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


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
@pytest.mark.parametrize("mode", MODES)
def test_no_process_outlives_the_run_and_stderr_stays_clean(mode: str, http: bool, tmp_path: Path) -> None:
    """Over stdio and as a launched Streamable HTTP server (whose stdout the harness reads for its
    `LISTENING` line, and which the stray of stdout-holder keeps open)."""
    tag = f"costly-{uuid.uuid4().hex}"
    server = f"stdio:{sys.executable} -m tests.servers.costly_server {mode} {tag}"
    if http:
        command = [sys.executable, "-m", "tests.servers.costly_server", mode, tag, "--http"]
        server = str(tmp_path / "target.toml")
        Path(server).write_text(
            f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8"
        )
    try:
        done, peak_mb = harness(
            "run", "--server", server, "--protocol", "2025-11-25", "--timeout", "2", "--quiet",
            "--report-dir", str(tmp_path / "out"),
        )  # fmt: skip
    finally:
        # The harness kills every stray before it exits: none may be alive at once (not even after a
        # grace), and any found is killed so it cannot reach the next test.
        left = left_after(tag, within=0)
    print(f"{mode}: peak RSS {peak_mb:.0f} MB")  # shown with -s
    assert not left, f"left running: {left}"
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = model.load(tmp_path / "out")
    assert report.footer.complete is True and report.footer.exit_code == done.returncode
    assert peak_mb < PEAK_LIMIT_MB, f"the harness peaked at {peak_mb:.0f} MB"
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
    assert not tagged(tag)
    assert _children() <= before


def test_a_close_cancelled_part_way_still_kills_the_server_and_its_strays() -> None:
    """A case cut by the target's budget may be closing a session when it is cancelled: the close is
    cancelled while it waits for a server that ignores the end of its stdin and SIGTERM. Nothing waits
    any more, but the group and the setsid() stray are killed all the same (the server was left running
    before, and outlived the harness)."""
    tag = f"costly-{uuid.uuid4().hex}"
    argv = [sys.executable, "-m", "tests.servers.costly_server", "stubborn", tag]

    async def start_then_cancel_close() -> bool:
        adapter = StdioAdapter(argv, Transcript(), cwd=str(REPO))
        await adapter.start()
        # The stray is started before the server reads anything: an answer means it exists.
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        reply = await adapter.exchange(ping, expect_id=1, timeout=30)
        assert reply.response is not None
        closing = asyncio.ensure_future(adapter.close())
        await asyncio.sleep(0)  # the close has started: stdin is closed, it waits for the exit
        closing.cancel()
        try:
            await closing
        except asyncio.CancelledError:
            return True
        return False

    try:
        cancelled = asyncio.run(start_then_cancel_close())
    finally:
        left = left_after(tag, within=10)
    assert cancelled, "the close finished before it could be cancelled: nothing was tested"
    assert not left, f"left running after a cancelled close: {left}"

"""The reference servers' fork server (conformance_reference/forkserver.py, started by
conformance.infra.prefork) starts a server as `python -m` would: the same
answers, exit code and stderr, the end of stdin seen, signals forwarded, and no child left behind when
the process the harness started is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from conformance.adapters.stdio import _process_table
from conformance.infra.prefork import spawn_command, supported
from tests.conftest import FORKS, FORKSERVER, PY, REPO, server_argv

pytestmark = pytest.mark.skipif(not supported(), reason="the fork server needs Linux (pidfd_open)")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _children(pid: int) -> set[int]:
    """The live children of `pid`, read from /proc as the stdio adapter reads it for strays."""
    return {child for child, stat in _process_table().items() if stat.ppid == pid and not stat.zombie}


def _start(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def test_a_forked_server_answers_and_exits_when_its_stdin_closes() -> None:
    argv = server_argv("conformance_reference.base_server")
    assert argv[:4] == [PY, "-m", FORKSERVER, "spawn"]
    proc = _start(argv)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-06-18"
    assert FORKS._proc is not None and _children(FORKS._proc.pid), "it runs as a fork of the fork server"
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stdout.read() == b"", "stdout ends with the child"


def test_exit_code_and_stderr_are_the_modules_own() -> None:
    direct = subprocess.run(
        [PY, "-m", "json.tool", "--no-such-flag"], cwd=REPO, capture_output=True, timeout=60
    )
    FORKS.ensure()
    forked = subprocess.run(
        spawn_command(FORKSERVER, "json.tool", "--no-such-flag"), cwd=REPO, capture_output=True, timeout=60
    )
    assert direct.returncode == 2
    assert (forked.returncode, forked.stderr) == (direct.returncode, direct.stderr)


def test_sigterm_reaches_the_child_and_sigkill_leaves_no_child() -> None:
    FORKS.ensure()  # the fork server is running
    assert FORKS._proc is not None
    server = FORKS._proc.pid
    before = _children(server)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        codes = []
        for argv in (
            [PY, "-m", "conformance_reference.base_server"],
            server_argv("conformance_reference.base_server"),
        ):
            proc = _start(argv)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 1  # the server is up
            proc.send_signal(sig)
            codes.append(proc.wait(timeout=60))
            proc.stdin.close()
        assert codes[1] == codes[0], f"{sig.name}: forked exit {codes[1]}, direct {codes[0]}"
        deadline = time.monotonic() + 60
        while _children(server) - before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _children(server) - before, f"{sig.name}: the forked child outlived its spawner"


@pytest.mark.parametrize(
    "socket_path", [None, "/nonexistent/mcp-conformance-forkserver"], ids=["unset", "gone"]
)
def test_without_a_fork_server_the_module_runs_directly(socket_path: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCP_CONFORMANCE_FORKSERVER"}
    if socket_path:
        env["MCP_CONFORMANCE_FORKSERVER"] = socket_path
    done = subprocess.run(
        spawn_command(FORKSERVER, "json.tool", "--no-such-flag"),
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and b"--no-such-flag" in done.stderr, done.stderr

"""Bad input gets a clear one-line error and no traceback, a bounded run, and still a report."""

from __future__ import annotations

import json
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import budget

CLI = [sys.executable, "-m", "conformance"]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def stdio_python(code: str) -> str:
    return "stdio:" + shlex.join([sys.executable, "-c", code])


def report_of(directory: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((directory / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "spec",
    ["ftp://example.com", "nonsense", "stdio:", "http://", "http://127.0.0.1:notaport/mcp", "missing.toml"],
)
def test_malformed_server_is_a_usage_error(spec: str) -> None:
    result = cli("run", "--server", spec)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("mcp-conformance: ")


def test_unreachable_url_exits_3_with_an_error_report(tmp_path: Path) -> None:
    result = cli("run", "--server", "http://127.0.0.1:9/mcp", "--report-dir", str(tmp_path), "--quiet")
    assert result.returncode == 3
    assert "Traceback" not in result.stdout + result.stderr
    report = report_of(tmp_path)
    # The extensions' packs that run by default (apps, tasks), unnamed and unscored, say nothing.
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "ERROR")]
    message = report["cases"][0]["message"]
    assert "connection refused at 127.0.0.1:9" in message
    assert "Errno" not in message and "Connect call failed" not in message
    # One line per distinct cause: the four Streamable HTTP revisions share theirs.
    out = result.stdout + result.stderr
    assert out.count("connection refused") == 1, out


def test_an_unreachable_target_gives_each_cause_once_in_words(tmp_path: Path) -> None:
    result = cli("run", "--server", "stdio:no-such-command-7f3a", "--report-dir", str(tmp_path))
    assert result.returncode == 3
    out = result.stdout + result.stderr
    # Once in the live progress (stderr), once in the summary (stdout): not once per revision and pack.
    assert result.stderr.count("command not found: no-such-command-7f3a") == 1, result.stderr
    assert result.stdout.count("command not found: no-such-command-7f3a") == 1, result.stdout
    assert "apps.connect" not in out and "tasks.connect" not in out
    assert "No such file or directory" not in out


def test_a_named_extension_pack_still_says_its_target_is_unreachable(tmp_path: Path) -> None:
    result = cli(
        "run", "--server", "stdio:no-such-command-7f3a", "--suite", "tasks", "--report-dir", str(tmp_path)
    )
    assert result.returncode == 3
    assert [c["check"] for c in report_of(tmp_path)["cases"]] == ["tasks.connect"]


def test_missing_command_exits_3(tmp_path: Path) -> None:
    result = cli("run", "--server", "stdio:no-such-command-7f3a", "--report-dir", str(tmp_path), "--quiet")
    assert result.returncode == 3
    assert "command not found: no-such-command-7f3a" in report_of(tmp_path)["cases"][0]["message"]


def test_server_that_exits_at_start_shows_its_stderr(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('fatal: config file missing\\n'); sys.exit(4)"
    result = cli("run", "--server", stdio_python(code), "--report-dir", str(tmp_path), "--quiet")
    assert result.returncode == 3
    case = report_of(tmp_path)["cases"][0]
    assert case["verdict"] == "ERROR"
    assert "fatal: config file missing" in case["message"]
    assert "exit status 4" in case["evidence"]["diagnostics"]


def test_server_that_exits_0_at_once(tmp_path: Path) -> None:
    result = cli("run", "--server", stdio_python("pass"), "--report-dir", str(tmp_path), "--quiet")
    assert result.returncode == 3
    assert "exit status 0" in report_of(tmp_path)["cases"][0]["message"]


def test_hanging_server_is_bounded_by_the_start_and_request_timeouts(tmp_path: Path) -> None:
    started = time.monotonic()
    result = cli(
        "run",
        "--server",
        stdio_python("import time; time.sleep(3600)"),
        "--timeout",
        "1",
        "--start-timeout",
        "1",
        "--report-dir",
        str(tmp_path),
        "--quiet",
        timeout=900,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 3
    assert "within 1 s" in report_of(tmp_path)["cases"][0]["message"]
    bound = budget(30)
    assert elapsed < bound, f"three bounded probes and the kills ({bound:.0f} s), not the server's hour"


def interrupt_after(args: list[str], wanted: str, wait: float = 300) -> tuple[int, str, str, list[str]]:
    """Run the CLI, send SIGINT once a stderr line starting with `wanted` is out, and return its exit
    code, stdout, the rest of stderr and the stderr lines read before the signal (every wait bounded)."""
    proc = subprocess.Popen(
        [*CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A harness started from a background job inherits an ignored SIGINT; a user's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: queue.Queue[str | None] = queue.Queue()
    early: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + wait
        while True:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            assert line is not None, f"the run ended before {wanted!r}: {''.join(early)}"
            early.append(line)
            if line.lstrip().startswith(wanted):
                break
        proc.send_signal(signal.SIGINT)
        out = proc.stdout.read() if proc.stdout else ""
        proc.wait(timeout=120)
        rest = []
        while (line := lines.get(timeout=60)) is not None:
            rest.append(line)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return proc.returncode, out, "".join(rest), early


def test_ctrl_c_during_the_start_up_probe_writes_a_partial_report(tmp_path: Path) -> None:
    code, out, err, _ = interrupt_after(
        ["run", "--server", stdio_python("import time; time.sleep(120)"), "--report-dir", str(tmp_path)],
        "» target 0",
    )
    assert code == 130, err
    assert "Traceback" not in err and "RuntimeWarning" not in err, err
    report = report_of(tmp_path)
    assert report["footer"]["complete"] is False
    assert report["footer"]["reason"] == "interrupted"
    assert "INCOMPLETE" in out


def interrupt_two_targets(tmp_path: Path, wait_for: str, *extra: str) -> tuple[int, str, str]:
    """Ctrl-C on a run of two raw-server targets (the first fails its id echo at once, the second has a
    tool that takes a minute) once `wait_for` shows: (exit code, stdout, stderr)."""
    server = [sys.executable, "-m", "tests.servers.raw_server"]
    code, out, err, _ = interrupt_after(
        [
            "run",
            "--server",
            "stdio:" + shlex.join([*server, "--defect", "wrong-id"]),
            "--server",
            "stdio:" + shlex.join([*server, "--defect", "slow-tool"]),
            "--call-tools",
            "all",
            *extra,
            "--report-dir",
            str(tmp_path),
        ],
        wait_for,
    )
    return code, out, err


def test_ctrl_c_while_cases_run_exits_130_quietly_with_a_partial_report(tmp_path: Path) -> None:
    """Ctrl-C once a case has finished, with more of this target's cases and a second target to come: no
    traceback, no `coroutine ... was never awaited` for what never started, the cases so far reported."""
    code, out, err = interrupt_two_targets(tmp_path, "FAIL  base.rpc.id-echo")
    assert code == 130, err
    assert "Traceback" not in err, err
    assert "RuntimeWarning" not in err and "never awaited" not in err, err
    report = report_of(tmp_path)
    assert report["footer"]["complete"] is False
    assert report["footer"]["reason"] == "interrupted"
    assert report["footer"]["exit_code"] == 130
    assert any(c["check"] == "base.rpc.id-echo" and c["verdict"] == "FAIL" for c in report["cases"])
    assert (
        "INCOMPLETE" in out
        and "; exit 130)" in out
        and out.rstrip().splitlines()[-1].startswith("INTERRUPTED")
    )


def test_bad_option_values_are_usage_errors() -> None:
    assert cli("run", "--timeout", "0").returncode == 2
    assert cli("run", "-k", "no-such-check-anywhere").returncode == 2
    assert cli("explain", "NOPE-1").returncode == 2


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a usage error (exit 2, nothing on stdout, no usage dump)."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mcp-conformance: ") and "usage:" not in result.stderr
    assert result.stdout == ""
    return lines[0]


def test_an_unknown_suite_is_one_line_naming_the_suites() -> None:
    line = one_line(cli("run", "--suite", "nosuch"))
    assert "--suite" in line and "'nosuch'" in line
    for suite in ("base", "dw-discovery", "map-review", "uwmd", "fuzz"):
        assert f"'{suite}'" in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--protocol", "1999-01-01"], ["--protocol", "'2025-11-25'", "'auto'"]),
        (["run", "--call-tools", "some"], ["--call-tools", "'safe'"]),
        (["run", "--no-such-option"], ["unrecognized arguments: --no-such-option"]),
        (["run", "--timeout", "ten"], ["--timeout", "'ten'"]),
        (["run", "--server"], ["--server", "expected one argument"]),
        (["explain"], ["required: id"]),
        (["no-such-command"], ["'no-such-command'", "'run'"]),
        (["rnu"], ["'rnu'", "did you mean run?", "see `mcp-conformance --help`"]),
        (["EXPLAIN", "x"], ["did you mean explain?"]),
        (["run", "--sever", "x"], ["--sever", "did you mean --server?", "see `mcp-conformance run --help`"]),
        (["run", "--serverr=x"], ["did you mean --server?", "see `mcp-conformance run --help`"]),
        (["run", "--suite", "BASE"], ["did you mean base?", "see `mcp-conformance run --help`"]),
        (["run", "--protocol", "2025-11-24"], ["did you mean 2025-11-25?"]),
        (["diff", "a", "b", "--jsn"], ["did you mean --json?", "see `mcp-conformance diff --help`"]),
        (
            ["baseline", "update", "--report", "r", "--out", "o", "--include-wran"],
            ["did you mean --include-warn?", "see `mcp-conformance baseline update --help`"],
        ),
        (["run", "--timeout", "0"], ["--timeout must be positive", "see `mcp-conformance run --help`"]),
        (["run", "--server", "nonsense"], ["stdio:COMMAND", "see `mcp-conformance run --help`"]),
        (["explain", "BASE-RPC-02"], ["'BASE-RPC-02'", "did you mean BASE-RPC-002?"]),
        (["explain", "base.rpc.id-ehco"], ["did you mean base.rpc.id-echo?"]),
        ([], ["required: command"]),
        (["list", "--suite", "nosuch"], ["'nosuch'", "'base'"]),
    ],
)
def test_argument_errors_are_one_line(args: list[str], words: list[str]) -> None:
    line = one_line(cli(*args))
    for word in words:
        assert word in line


def test_version() -> None:
    from conformance import __version__

    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mcp-conformance {__version__}"


@pytest.mark.parametrize("wanted", ["base-rpc-002", "Base.Rpc.Id-Echo", "BASE-RPC-002"])
def test_explain_takes_an_id_in_any_case(wanted: str) -> None:
    result = cli("explain", wanted)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("BASE-RPC-002  ")


def test_a_bare_command_as_server_suggests_stdio(tmp_path: Path) -> None:
    program = tmp_path / "my-mcp-server"
    program.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    program.chmod(0o755)
    line = one_line(cli("run", "--server", f"{program} --flag"))
    assert f"--server 'stdio:{program} --flag'" in line
    assert "see `mcp-conformance run --help`" in line


def test_help_still_prints_usage_and_every_exit_code() -> None:
    result = cli("run", "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: mcp-conformance run")
    text = " ".join(result.stdout.split())
    for code in (
        "0: every MUST-level check passed",
        "1: a check FAILed",
        "stale (XPASS)",
        "2: usage",
        "3: a target",
        "130: the run was interrupted",
        "143: the run was terminated (SIGTERM)",
    ):
        assert code in text


def test_the_pytest_plugin_refuses_an_unknown_suite_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
            "--mcp-server",
            "stdio:python -m no_such_server",
            "--mcp-suite",
            "nosuch",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--mcp-suite 'nosuch' is not a suite" in lines[0] and "base" in lines[0]

"""The harness against a hostile server, as a user runs it: a real subprocess whose peak RSS is read
from /proc, and the tagged server processes still alive once it is done.

`harness(ARGS)` runs `python -m conformance ARGS` under a two-line wrapper that prints its own peak
RSS (VmHWM in /proc/self/status) to stderr as it exits; `tagged(TAG)` lists the live processes whose
command line carries TAG as one argument, and `left_after(TAG)` polls /proc (bounded) until none is
left, killing any still there at the end so one test's strays never reach the next.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, AnyStr

from tests.conftest import PY, REPO

#: The bound README's robustness section promises on any one hostile target at the default caps.
PEAK_LIMIT_MB = 256
#: How long the tagged processes may take to end once the harness has exited (it kills them on close;
#: the kernel may take a moment to reap them). Polled, not slept.
GONE_WITHIN = 10.0
#: /proc holds a few hundred processes on a runner; more than this is not a machine to scan.
MAX_SCAN = 100_000
WRAPPER = (
    "import atexit, sys\n"
    "def _peak():\n"
    "    with open('/proc/self/status') as status:\n"
    "        kb = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    sys.stderr.write(f'PEAK-KB {kb}\\n')\n"
    "atexit.register(_peak)\n"
    "from conformance.front.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def env(**extra: str) -> dict[str, str]:
    """The environment a harness subprocess runs in: this one, with the repo on PYTHONPATH."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **extra,
    }


def harness(
    *args: str, environ: dict[str, str] | None = None, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the harness (`python -m conformance ARGS`) from the repo root: its result and peak RSS in MB."""
    result = subprocess.run(
        [PY, "-c", WRAPPER, *args],
        cwd=REPO,
        env=environ if environ is not None else env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    peaks = [line.split()[1] for line in result.stderr.splitlines() if line.startswith("PEAK-KB ")]
    assert peaks, f"the harness printed no peak (exit {result.returncode}; stderr: {result.stderr[-2000:]})"
    return result, int(peaks[-1]) / 1024


def process_tag(tmp_path: Path) -> str:
    """A tag for the processes of the test that owns `tmp_path`, carried by no other test's: the folder's
    own name is not enough, as the same test's other parameters on another xdist worker get the same
    one (`popen-gw0/test_flood0`, `popen-gw1/test_flood0`), so the run's and the worker's are in it."""
    return "-".join(tmp_path.parts[-3:])


def tagged(tag: str) -> list[int]:
    """The live processes whose command line carries `tag` as one argument (a bounded scan of /proc)."""
    found, needle = [], tag.encode()
    for count, entry in enumerate(Path("/proc").iterdir()):
        if count > MAX_SCAN:
            break
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in argv and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def left_after(tag: str, within: float = GONE_WITHIN) -> list[int]:
    """The tagged processes still alive after polling /proc for up to `within` seconds (none expected).
    Any found at the end are killed, so a failing test leaks nothing into the next."""
    deadline = time.monotonic() + within
    while (left := tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def line_queue(stream: IO[AnyStr]) -> queue.Queue[AnyStr | None]:
    """Read `stream` line by line on a daemon thread; None marks its end. Lets every read of a child's
    output carry a timeout (`queue.get(timeout=...)`) instead of blocking the test."""
    lines: queue.Queue[AnyStr | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines

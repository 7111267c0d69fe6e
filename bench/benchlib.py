"""Helpers shared by the benchmark scripts: alternating rounds, bounded processes, judged targets.

Why alternating rounds and ratios: these machines are shared and noisy, so an absolute figure says
more about the neighbours than about the harness. Contenders run in rotating order, round after
round, so a slow spell hits all of them alike, and every target is judged on a ratio of medians
measured in the same run (or, for the issue's fixed budgets, printed beside the baseline that
explains it).

Why bounded everything: a benchmark that hangs on a broken server teaches nothing and blocks CI.
Every wait has a deadline, every process is started in its own process group and the whole group
is killed on the way out, and servers are only ever bound to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
PYTHON = sys.executable
LISTENING = re.compile(r"LISTENING (http://127\.0\.0\.1:\d+/\S*)")


@dataclass
class Judged:
    """One target of the issue, judged from figures of this run (met None: not measured, say why)."""

    target: str
    measured: str
    met: bool | None
    why: str = ""


@dataclass
class PartResult:
    """What one benchmark part printed and judged; run_all gathers these for the closing summary."""

    name: str
    judged: list[Judged] = field(default_factory=list)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


def alternate(rounds: int, contenders: Mapping[str, Callable[[], T]]) -> dict[str, list[T]]:
    """Run every contender once per round, rotating who goes first, so no one always runs warm or cold."""
    names = list(contenders)
    out: dict[str, list[T]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            out[name].append(contenders[name]())
    return out


def heading(text: str) -> None:
    print(f"\n== {text} ==", flush=True)


def kill_group(proc: subprocess.Popen[Any], grace: float = 3.0) -> None:
    """SIGTERM the process group, then SIGKILL it; bounded. Safe on a process that already exited."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # Children the leader left behind in its group die too, even when the leader already exited.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@dataclass
class Ran:
    """A finished (or killed) subprocess: exit code, output, wall time, and whether it was cut off."""

    returncode: int
    stdout: str
    stderr: str
    wall: float
    timed_out: bool


def run_bounded(
    argv: Sequence[str],
    timeout: float,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Ran:
    """Run a command to completion or kill its whole process group at `timeout` seconds."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
        text=True,
        errors="replace",
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc, grace=0.5)
        out, err = proc.communicate(timeout=5)
        timed_out = True
    finally:
        kill_group(proc, grace=0.5)
    return Ran(proc.returncode, out, err, time.perf_counter() - started, timed_out)


class Launched:
    """A server process that prints `LISTENING http://127.0.0.1:<port>/...`, on stdout or stderr.

    Both pipes are drained by daemon threads for the process's whole life, so a chatty server never
    blocks on a full pipe; the LISTENING line is awaited with a deadline. Use as a context manager:
    the whole process group is killed on exit.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.timeout = timeout
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[str] = queue.Queue()
        self.tail: list[str] = []

    def __enter__(self) -> Launched:
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._drain, args=(stream,), daemon=True).start()
        deadline = time.monotonic() + self.timeout
        try:
            while not self.url:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"no LISTENING line within {self.timeout:g} s from {self.argv[:4]}")
                try:
                    line = self._lines.get(timeout=min(remaining, 0.5))
                except queue.Empty:
                    if self.proc.poll() is not None:
                        raise RuntimeError(
                            f"{self.argv[:4]} exited with {self.proc.returncode} before listening: "
                            + " | ".join(self.tail[-3:])
                        ) from None
                    continue
                match = LISTENING.search(line)
                if match:
                    self.url = match.group(1)
        except BaseException:
            kill_group(self.proc)
            raise
        return self

    def _drain(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            if not self.url:
                line = raw.decode("utf-8", errors="replace").rstrip()
                self.tail = [*self.tail[-9:], line]
                self._lines.put(line)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            kill_group(self.proc)


@contextlib.contextmanager
def reference_http(module: str = "conformance_reference.base_server") -> Iterator[str]:
    """A reference server over Streamable HTTP on 127.0.0.1; yields its URL, kills it on exit."""
    with Launched([PYTHON, "-m", module, "--http", "--port", "0"]) as server:
        yield server.url


def worker(args: Sequence[str], timeout: float) -> dict[str, Any]:
    """Run bench/worker.py in a fresh interpreter and return the JSON it printed last.

    A separate process gives a clean peak-RSS figure for the harness alone (its servers are children,
    so RUSAGE_SELF leaves them out) and keeps one measurement's garbage out of the next.
    """
    ran = run_bounded([PYTHON, str(BENCH_DIR / "worker.py"), *args], timeout, cwd=REPO_DIR)
    if ran.timed_out:
        return {"error": f"worker timed out after {timeout:g} s", "wall_outer": ran.wall}
    lines = [line for line in ran.stdout.splitlines() if line.startswith("{")]
    if ran.returncode != 0 or not lines:
        tail = (ran.stderr or ran.stdout).strip().splitlines()[-3:]
        return {"error": f"worker exit {ran.returncode}: {' | '.join(tail)}", "wall_outer": ran.wall}
    result: dict[str, Any] = json.loads(lines[-1])
    result["wall_outer"] = ran.wall
    return result


def yes_no(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "not measured"}[met]


def npm_install(npm: str, folder: Path, specs: list[str], timeout: float) -> str:
    """`npm install specs` into `folder` (nothing saved, no audit), bounded by `timeout`: "" or why not."""
    argv = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        "--prefix",
        str(folder),
    ]
    ran = run_bounded([*argv, *specs], timeout, cwd=folder)
    if ran.timed_out:
        return f"npm install did not finish within {timeout:g} s"
    if ran.returncode != 0:
        return f"npm install failed (exit {ran.returncode}): {ran.stderr.strip()[-300:]}"
    return ""

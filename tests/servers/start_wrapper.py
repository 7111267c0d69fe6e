"""Wraps a stdio MCP server command to observe and shape its start-up; for the start-budget tests.

    python -m tests.servers.start_wrapper --lock FILE --log FILE [--cold S --cold-marker FILE] -- CMD...

Every process holds an exclusive lock on `--lock` from its start until the wrapped server's first line
on stdout has passed through (its start-up, as a client sees it). A process that finds the lock taken
logs `overlap`, so a test can tell whether the harness ever had two server processes starting at once.
Each process also logs `live N`: how many other wrapped processes (pid files under `--lock`'s folder
that name a running process) were alive when it started.
With `--cold S` the wrapper waits S seconds before starting the server until `--cold-marker` exists,
and creates the marker once a first answer has passed: a cold start (an `npx -y` download, say) that
costs its time once, and again each time a start was cut short before it answered.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lock", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--cold", type=float, default=0.0)
    parser.add_argument("--cold-marker")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    lock = os.open(args.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        event = "start"
    except BlockingIOError:
        event = "overlap"
    folder = os.path.join(os.path.dirname(os.path.abspath(args.lock)), "live")
    os.makedirs(folder, exist_ok=True)
    others = [name for name in os.listdir(folder) if os.path.exists(f"/proc/{name}")]
    open(os.path.join(folder, str(os.getpid())), "w").close()
    with open(args.log, "a", encoding="utf-8") as log:
        log.write(f"{event} {os.getpid()}\nlive {len(others)}\n")

    cold = args.cold and not (args.cold_marker and os.path.exists(args.cold_marker))
    if cold:
        time.sleep(args.cold)
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    threading.Thread(target=_pump_stdin, args=(child.stdin,), daemon=True).start()
    first = True
    for line in child.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        if first:
            first = False
            fcntl.flock(lock, fcntl.LOCK_UN)
            if args.cold_marker:
                open(args.cold_marker, "a").close()
    sys.exit(child.wait())


def _pump_stdin(sink: object) -> None:
    stream = sys.stdin.buffer
    try:
        while True:
            data = stream.readline()
            if not data:
                break
            sink.write(data)  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()

"""Servers that cost their client: hangs that would eat a run's time, processes that outlive a close.

    python -m tests.servers.costly_server hang-tools [TAG] [--log FILE]
    python -m tests.servers.costly_server setsid-grandchild TAG
    python -m tests.servers.costly_server stdout-holder TAG

Every mode is the conformant raw server (three revisions) with one fault. TAG is an argument every
process of the mode carries in its command line, so a test can look for what is left after a run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from typing import Any

from tests.servers.raw_server import META_VERSION, Server

MODES = {
    "hang-tools": "six read-only tools; every tools/call is read and never answered",
    "setsid-grandchild": "starts a child that calls setsid() and sleeps, so a process-group kill misses it",
    "stdout-holder": "starts a child in a session of its own that keeps the server's stdout open and "
    "sleeps, so stdout does not end when the server exits",
}
#: Six read-only tools with nothing required: each one is callable under the default `--call-tools safe`.
HANGING_TOOLS = [
    {
        "name": f"slow_{n}",
        "description": f"Never answers ({n}).",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": {"readOnlyHint": True},
    }
    for n in range(1, 7)
]
#: How long a stray child sleeps: far longer than any test, so only a kill ends it.
STRAY_SECONDS = 600


class HangingTools(Server):
    def __init__(self) -> None:
        super().__init__("none")

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": [dict(tool) for tool in HANGING_TOOLS]}
        return super().method(method, params, revision)


def stray(tag: str, *, stdout: Any) -> None:
    """Start a child that leaves the process group (setsid) and sleeps; `stdout` is what it holds."""
    code = f"import os, time; os.setsid(); time.sleep({STRAY_SECONDS})"
    subprocess.Popen(
        [sys.executable, "-c", code, tag],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
    )


def serve_stdio(mode: str, tag: str, log: str = "") -> None:
    server: Server = HangingTools() if mode == "hang-tools" else Server("none")
    if mode == "setsid-grandchild":
        stray(tag, stdout=subprocess.DEVNULL)
    if mode == "stdout-holder":
        stray(tag, stdout=None)  # inherits the server's stdout
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if mode == "hang-tools" and isinstance(message, dict) and message.get("method") == "tools/call":
                if log:  # one line per call left unanswered, naming the revision it came in
                    meta = (message.get("params") or {}).get("_meta") or {}
                    with open(log, "a", encoding="utf-8") as f:
                        f.write(f"{meta.get(META_VERSION) or server.revision}\n")
                continue  # read, never answered; everything else still is
        response = server.handle_line(line.rstrip(b"\r\n"))
        if response is not None:
            out.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")
            out.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=sorted(MODES))
    parser.add_argument("tag", nargs="?", default="")
    parser.add_argument("--log", default="", help="append the revision of each unanswered tools/call here")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve_stdio(args.mode, args.tag, args.log)


if __name__ == "__main__":
    main()

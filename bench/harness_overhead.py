"""Per-call overhead of the harness against a raw JSON-lines loop on the same reference server.

Both loops run in this one process against fresh copies of the reference server over stdio, in
alternating rounds, so machine noise hits both alike; the figure that matters is the ratio of medians.
Also times `mcp-conformance --help` as a whole process.

    python bench/harness_overhead.py [--calls 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time

from conformance.adapters.stdio import StdioAdapter
from conformance.adapters.transcript import Transcript
from conformance.protocol.session import Session

SERVER = [sys.executable, "-m", "conformance_reference.base_server"]
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def raw_loop(calls: int) -> list[float]:
    """The baseline: a plain loop writing JSON lines to the server's stdin and reading its stdout."""
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    try:

        def send(message: dict[str, object]) -> None:
            proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]

        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        proc.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for i in range(1, calls + 1):
            started = time.perf_counter()
            send(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hello"}},
                }
            )
            json.loads(proc.stdout.readline())
            times.append(time.perf_counter() - started)
        return times
    finally:
        proc.kill()
        proc.wait()


async def harness_loop(calls: int) -> list[float]:
    """The same calls through the harness: adapter, transcript, session, frame classification."""
    adapter = StdioAdapter(SERVER, Transcript())
    await adapter.start()
    session = Session(adapter, "2025-11-25", timeout=10)
    try:
        await session.open()
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            call = await session.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
            assert call.result is not None
            times.append(time.perf_counter() - started)
        return times
    finally:
        await session.close()


def help_time(runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "conformance", "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    raw: list[float] = []
    harness: list[float] = []
    for _ in range(args.rounds):
        raw += raw_loop(args.calls)
        harness += asyncio.run(harness_loop(args.calls))
    raw_ms = statistics.median(raw) * 1000
    harness_ms = statistics.median(harness) * 1000
    print(f"stdio tools/call, {args.rounds} x {args.calls} calls each, median per call:")
    print(f"  raw JSON-lines loop   {raw_ms:7.3f} ms")
    print(f"  harness               {harness_ms:7.3f} ms")
    print(f"  ratio harness/raw     {harness_ms / raw_ms:7.2f}x   (target <= 1.3x)")
    print(f"mcp-conformance --help  {help_time(5) * 1000:7.1f} ms as a whole process (target < 300 ms)")


if __name__ == "__main__":
    main()

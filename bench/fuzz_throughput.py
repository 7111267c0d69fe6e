"""Fuzz throughput: examples per second the fuzz suite sends over stdio to the base reference server.

An example is one generated input sent as `tools/call`, plus the ping that checks the server lives on.
Beside it, the same pair of requests through the harness's session without hypothesis, so the figure
can be read as a share of what the transport allows on this (shared, noisy) machine. The first round
also pays hypothesis's one-time start (its Unicode tables), so it is reported apart and not counted.

    python bench/fuzz_throughput.py [--examples 100] [--rounds 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import time

from conformance.adapters.stdio import StdioAdapter
from conformance.adapters.transcript import Transcript
from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.protocol.session import Session

SERVER = [sys.executable, "-m", "conformance_reference.base_server"]
REVISION = "2026-07-28"


def fuzz_round(examples: int, seed: int) -> dict[str, float]:
    """One run of the fuzz suite; examples per second of each mode, as its cases report them."""
    options = RunOptions(
        timeout=10.0, protocol=REVISION, pack_options={"fuzz_examples": examples, "fuzz_seed": seed}
    )
    report = api.run_report(["stdio:" + shlex.join(SERVER)], ["fuzz"], options=options)
    bad = [c for c in report["cases"] if c["verdict"] != "PASS"]
    if bad:
        raise SystemExit(f"the reference did not pass: {bad[0]['check']} {bad[0]['verdict']}")
    rates: dict[str, float] = {}
    for case in report["cases"]:
        for mode, facts in case["evidence"].get("fuzz", {}).items():
            rates[mode] = facts["examples"] / facts["seconds"]
            rates[mode + "_examples"] = facts["examples"]
    return rates


async def plain_pairs(count: int) -> float:
    """tools/call + ping pairs per second through the harness session, no hypothesis."""
    session = Session(StdioAdapter(SERVER, Transcript()), REVISION, timeout=10)
    await session.adapter.start()
    try:
        await session.open()
        started = time.perf_counter()
        for i in range(count):
            await session.request("tools/call", {"name": "echo", "arguments": {"text": f"x{i}"}})
            await session.request("ping")
        return count / (time.perf_counter() - started)
    finally:
        await session.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=100, help="examples per tool and mode")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    warm = fuzz_round(args.examples, args.seed)
    rounds = [fuzz_round(args.examples, args.seed) for _ in range(args.rounds)]
    plain = [asyncio.run(plain_pairs(300)) for _ in range(args.rounds)]
    valid = statistics.median(r["valid"] for r in rounds)
    invalid = statistics.median(r["invalid"] for r in rounds)
    pairs = statistics.median(plain)
    print(
        f"fuzz throughput over stdio against the base reference ({REVISION}): "
        f"valid {valid:.0f} examples/s, invalid {invalid:.0f} examples/s "
        f"(median of {args.rounds} rounds of {rounds[0]['valid_examples']:.0f} + "
        f"{rounds[0]['invalid_examples']:.0f} examples, seed {args.seed}; "
        f"first round with hypothesis start-up: valid {warm['valid']:.0f}/s)"
    )
    print(
        f"baseline: tools/call + ping through the harness session without hypothesis: {pairs:.0f}/s; "
        f"fuzzing runs at {valid / pairs:.0%} (valid) and {invalid / pairs:.0%} (invalid) of it"
    )


if __name__ == "__main__":
    main()

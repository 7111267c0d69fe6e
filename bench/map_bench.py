"""Timing of the MAP review profile: one race round of 8 sessions over HTTP, and the full map-review suite.

A race round is what MAP-CONC-001 repeats: a fresh review from the fixture controller, one read, then 8
sessions of their own released at one barrier with the same approval; the round ends when the last
answer arrives. The bench runs it against the reference service over Streamable HTTP (2026-07-28),
checks every round had exactly one winner, and prints the distribution. Then it times the full suite
as `mcp-conformance run --suite map-review` runs it: the reference over stdio and over HTTP, every
revision, races at full strength.

    python bench/map_bench.py [--rounds 50] [--racers 8] [--skip-suite]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.adapters.transcript import Transcript
from conformance.engine.context import RunOptions
from conformance.engine.sessions import launched, open_session
from conformance.fixtures.client import ControllerClient, ControllerConfig
from conformance.front import api
from conformance.model.targets import Target
from conformance.pack_api.statuses import classify
from conformance.protocol.session import Session

SERVER = (sys.executable, "-m", "conformance_reference.map_server")
CONTROLLER = (sys.executable, "-m", "conformance_reference.map_controller")
REVISION = "2026-07-28"


async def approve(session: Session, gate: asyncio.Event, arguments: dict[str, Any]) -> Any:
    """One racer: wait at the barrier, then send the approval on its own session."""
    await gate.wait()
    call = await session.request("tools/call", {"name": "decide_review", "arguments": arguments})
    return classify(call.response)


async def race_rounds(rounds: int, racers: int, folder: Path) -> dict[str, Any]:
    db = str(folder / "bench.db")
    target = Target(kind="http", launch=(*SERVER, "--http", "--port", "0", "--db", db))
    transcript = Transcript()
    async with launched(target, transcript) as live:
        controller = await ControllerClient.connect(ControllerConfig(command=(*CONTROLLER, "--db", db)))
        opened = time.perf_counter()
        sessions: list[Session] = list(
            await asyncio.gather(*(open_session(live, REVISION, transcript, 10.0) for _ in range(racers + 1)))
        )
        setup = time.perf_counter() - opened
        reader, racing = sessions[0], sessions[1:]
        times: list[float] = []
        full_rounds: list[float] = []
        try:
            for _ in range(rounds):
                started = time.perf_counter()
                review = await controller.call("create_review", {})
                await reader.request(
                    "tools/call", {"name": "read_review", "arguments": {"reference": review["reference"]}}
                )
                gate = asyncio.Event()
                arguments = {
                    "review_id": review["review_id"],
                    "decision": "approve",
                    "expected_revision": review["revision"],
                }

                tasks = [asyncio.create_task(approve(s, gate, arguments)) for s in racing]
                await asyncio.sleep(0)
                released = time.perf_counter()
                gate.set()
                outcomes = await asyncio.gather(*tasks)
                times.append(time.perf_counter() - released)
                full_rounds.append(time.perf_counter() - started)
                winners = sum(1 for o in outcomes if o.success)
                losers = sum(1 for o in outcomes if o.kind == "STATUS" and o.status == 409)
                if winners != 1 or losers != racers - 1:
                    raise SystemExit(
                        f"a round had {winners} winners and {losers} 409s: the reference is broken"
                    )
        finally:
            await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
            await controller.close()
    return {"setup": setup, "race": times, "round": full_rounds}


def describe(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
    return (
        f"{label}: median {statistics.median(ordered) * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms, "
        f"min {ordered[0] * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms ({len(ordered)} rounds)"
    )


def full_suite() -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    report = api.run_report(None, ["map-review"], options=RunOptions(timeout=10.0))
    return time.perf_counter() - started, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/map_bench.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="race rounds to time (default 50)")
    parser.add_argument("--racers", type=int, default=8, help="sessions per round (default 8)")
    parser.add_argument("--skip-suite", action="store_true", help="time only the race rounds")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="map-bench-"))
    try:
        result = asyncio.run(race_rounds(args.rounds, args.racers, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"race round over HTTP ({REVISION}), {args.racers} sessions released at one barrier:")
    print(f"  opening {args.racers + 1} sessions: {result['setup'] * 1000:.1f} ms")
    print("  " + describe("release to last answer", result["race"]))
    print("  " + describe("whole round (create_review + read + race)", result["round"]))
    if args.skip_suite:
        return 0
    elapsed, report = full_suite()
    totals = report["footer"].get("totals", {})
    verdicts = ", ".join(f"{k} {v}" for k, v in totals.items() if k != "cases" and v)
    per_target: dict[str, float] = {}
    for case in report["cases"]:
        per_target[case["transport"]] = per_target.get(case["transport"], 0.0) + case["duration"]
    print(f"full map-review suite (reference over stdio and HTTP, every revision): {elapsed:.1f} s wall")
    print(
        f"  {len(report['cases'])} cases ({verdicts}); time inside checks: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in per_target.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

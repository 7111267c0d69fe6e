"""Wall time of every suite in the catalog against its own reference server, per transport.

Why per transport: the issue's budget is "the base suite against the reference in under 3 s per
transport", and the two transports cost differently (stdio starts a server process per session;
HTTP pays per request). Why the harness's CPU beside the wall time: when CPU is far below wall, the
run waits on the server (start-up, per-request cost) or on fixed observation windows, and that is
where a fix must go. Why the catalog at run time: suites are added by other engineers in parallel.

Each figure is one `run_report` in a fresh interpreter (bench/worker.py), timed after the imports:
the launch of an HTTP reference, every probe and every session are inside it. The base suite, whose
budget is judged, gets `--rounds` rounds; the other suites `--other-rounds` (default 1), as some
take a minute a round.

    python bench/suite_times.py [--rounds 3] [--other-rounds 1] [--suite base ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from benchlib import Judged, PartResult, alternate, heading, median, worker

from conformance.model import packs

BUDGET_S = 3.0
WORKER_TIMEOUT = 300.0


def _runner(suite: str, transport: str) -> Callable[[], dict[str, Any]]:
    return lambda: worker(["--reference", suite, "--transport", transport], WORKER_TIMEOUT)


def run(rounds: int = 3, suites: list[str] | None = None, other_rounds: int = 1) -> PartResult:
    part = PartResult("suite wall times")
    names = suites or list(packs.names())
    heading(
        f"each suite against its reference server, per transport: median of {rounds} alternating rounds"
        f" for base, {other_rounds} for the others"
    )
    print(
        f"  {'suite':14} {'transport':16} {'cases':>5} {'wall':>8} {'per case':>9} {'harness CPU':>11}"
        f" {'CPU/wall':>8}  verdicts"
    )
    for suite in names:
        contenders = {"stdio": _runner(suite, "stdio"), "http": _runner(suite, "http")}
        runs = alternate(rounds if suite == "base" else other_rounds, contenders)
        for label, results in runs.items():
            good = [r for r in results if "error" not in r]
            if not good:
                print(f"  {suite:14} {label:16} failed: {results[0]['error']}")
                part.judged.append(Judged(f"{suite} suite runs over {label}", results[0]["error"], False))
                continue
            wall = median([r["wall"] for r in good])
            cpu = median([r["cpu_s"] for r in good])
            cases = good[-1]["totals"]["cases"]
            totals = good[-1]["totals"]
            verdicts = " ".join(f"{k} {v}" for k, v in totals.items() if v and k != "cases")
            print(
                f"  {suite:14} {label:16} {cases:5d} {wall:6.2f} s {wall / max(cases, 1) * 1e3:6.1f} ms"
                f" {cpu:9.2f} s {cpu / wall:7.0%}  {verdicts}",
                flush=True,
            )
            if suite == "base":
                name = f"base suite vs reference < {BUDGET_S:g} s, {label}"
                part.judged.append(
                    Judged(name, f"{wall:.2f} s median, harness CPU {cpu:.2f} s", wall < BUDGET_S)
                )
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--other-rounds", type=int, default=1)
    parser.add_argument("--suite", action="append")
    args = parser.parse_args()
    run(args.rounds, args.suite, args.other_rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

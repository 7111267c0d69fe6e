"""Every benchmark of issue 8 in one run, closing with each target judged: met, MISSED or not measured.

Why one run: the figures are only comparable when their baselines were measured side by side, on
the same machine in the same minutes; each part alternates its contenders round by round for the
same reason. Why a load-average line: these machines are shared, and a reader should know how
noisy the minutes were (CPU figures are printed beside wall times for the same reason).

Parts, in order: start-up, per-call overhead, suite wall times, the base suite against its
baseline commit (issue 14), the time a base run on a real server
waits for answers that never come (silence), the official suite, scale, parallel runs, the base
suite on real servers beside the floor of the same exchanges (real, issue 24), and the official suite and
this harness on the same HTTP servers, check by check and per judged check (agreement, issue 34; the
real-server kit's servers that `bench/real_kit/run.py --install` installed, and the reference server).
A part that cannot run (no npm, say) says why and is skipped; a part that crashes is reported and the
run goes on, then exits 1. The full run takes about 10 to 20 minutes on a 2-core machine;
`--quick` does one round of everything (about 5 to 10).

    python bench/run_all.py [--quick] [--only per-call,scale] [--skip official] [--npm-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
import traceback
from collections.abc import Callable

from benchlib import PYTHON, REPO_DIR, Judged, PartResult, heading, median, run_bounded, yes_no

PARTS = (
    "startup",
    "quickstart",
    "per-call",
    "suites",
    "growth",
    "silence",
    "official",
    "scale",
    "parallel",
    "real",
    "agreement",
)
STARTUP_BUDGET_S = 0.3
#: Issue 24: `list` and `explain` start as lightly as `--help` (the checks and rows from the cached catalog).
LIST_BUDGET_S = 0.2


def startup(rounds: int) -> PartResult:
    """Whole-process start of the commands that must stay fast (lazy imports), beside bare Python.

    `list` reads its checks from a catalog cached in the user's cache folder (conformance/front/catalog.py),
    built by the first `list` after the packs change: that first run is timed apart, once, and the
    median is of the runs after it, the start every later `list` has. `explain` reads the same catalog
    (a row a check names), so it is timed after `list` and held to the same budget."""
    part = PartResult("start-up")
    heading(f"start-up, whole process, median of {rounds}")
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "mcp-conformance --help": [PYTHON, "-m", "conformance", "--help"],
        "mcp-conformance list": [PYTHON, "-m", "conformance", "list"],
        "mcp-conformance explain": [PYTHON, "-m", "conformance", "explain", "BASE-RPC-002"],
    }
    first_list = run_bounded(commands["mcp-conformance list"], 60, cwd=REPO_DIR).wall
    walls: dict[str, float] = {}
    for label, argv in commands.items():
        walls[label] = median([run_bounded(argv, 60, cwd=REPO_DIR).wall for _ in range(rounds)])
        print(f"  {label:26} {walls[label] * 1000:7.1f} ms")
    print(f"  {'list, first (cold catalog)':26} {first_list * 1000:7.1f} ms  (before the rounds: it builds")
    print(f"  {'':26} {'':10} the catalog when the packs changed since the last list)")
    help_s, list_s = walls["mcp-conformance --help"], walls["mcp-conformance list"]
    python_s = walls["python -c pass"]
    part.judged.append(
        Judged(
            f"--help starts in < {STARTUP_BUDGET_S * 1000:.0f} ms",
            f"{help_s * 1000:.0f} ms ({python_s * 1000:.0f} ms of it is Python itself)",
            help_s < STARTUP_BUDGET_S,
        )
    )
    part.judged.append(
        Judged(
            f"list starts in < {LIST_BUDGET_S * 1000:.0f} ms",
            f"{list_s * 1000:.0f} ms, --help {help_s * 1000:.0f} ms",
            list_s < LIST_BUDGET_S,
        )
    )
    explain_s = walls["mcp-conformance explain"]
    part.judged.append(
        Judged(
            f"explain starts in < {LIST_BUDGET_S * 1000:.0f} ms",
            f"{explain_s * 1000:.0f} ms, --help {help_s * 1000:.0f} ms",
            explain_s < LIST_BUDGET_S,
        )
    )
    return part


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round of everything, fewer calls")
    parser.add_argument("--only", help=f"comma-separated parts to run, of: {', '.join(PARTS)}")
    parser.add_argument("--skip", action="append", default=[], help="a part to leave out (repeatable)")
    parser.add_argument(
        "--npm-dir",
        help="keep what npm brings (the official suite, server-everything) here, outside the repo",
    )
    args = parser.parse_args(argv)
    chosen = [p for p in (args.only.split(",") if args.only else PARTS) if p not in args.skip]
    unknown = sorted(set(chosen) - set(PARTS))
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    quick = args.quick

    import agreement
    import per_call
    import quickstart
    import real_servers
    import scale
    import silence
    import suite_growth
    import suite_times
    from official import run as official_run
    from parallel import run as parallel_run

    from conformance import __version__

    runners: dict[str, Callable[[], PartResult]] = {
        "startup": lambda: startup(3 if quick else 5),
        "quickstart": lambda: quickstart.run(rounds=1),
        "per-call": lambda: per_call.run(calls=100 if quick else 200, rounds=2 if quick else 5),
        "suites": lambda: suite_times.run(rounds=1 if quick else 3),
        "growth": lambda: suite_growth.run(rounds=1 if quick else 3),
        "silence": lambda: silence.run(rounds=1 if quick else 3),
        "official": lambda: official_run(rounds=1 if quick else 3, npm_dir=args.npm_dir),
        "scale": lambda: scale.run(rounds=1 if quick else 3),
        "parallel": lambda: parallel_run(rounds=1 if quick else 2),
        # One round even in a full run: a base run on server-everything alone takes minutes.
        "real": lambda: real_servers.run(npm_dir=args.npm_dir),
        "agreement": lambda: agreement.run(agreement.arguments(["--rounds", "1" if quick else "3"])),
    }
    started = time.perf_counter()
    command = shlex.join(["python", "bench/run_all.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"mcp-conformance {__version__} benchmarks: {command}")
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average"
        f" {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}"
    )
    parts: list[PartResult] = []
    crashed = False
    for name in chosen:
        try:
            parts.append(runners[name]())
        except Exception as exc:  # a bench bug must show, and the other parts still run
            crashed = True
            print(f"  part {name} crashed: {exc!r}")
            traceback.print_exc(limit=4)
            parts.append(PartResult(name, [Judged(f"part {name}", "crashed", None, repr(exc)[:200])]))

    heading(
        f"targets (issue 8), after {time.perf_counter() - started:.0f} s; load average now"
        f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for part in parts:
        for judged in part.judged:
            why = f"  [{judged.why}]" if judged.why else ""
            print(f"  {yes_no(judged.met):12} {judged.target}: {judged.measured}{why}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())

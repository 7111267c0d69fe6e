"""`-j 2` against `-j 1` on the full embedded-default run (`mcp-conformance run`, no `--server`).

Why the whole CLI: that is what a user times, and `-j` reaches from the runner down to how many
server processes run at once. Why compare verdict lists: a parallel run that is faster but judges
differently is a bug, not a speed-up; the lists must be identical, key by key and in order. The
`-j 1` runs are also compared with each other, so a check that is flaky on its own is not blamed
on `-j`.

    python bench/parallel.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchlib import PYTHON, REPO_DIR, Judged, PartResult, alternate, heading, median, run_bounded

RUN_TIMEOUT = 1500.0


def _cli(jobs: int, out: Path) -> dict[str, Any]:
    argv = [PYTHON, "-m", "conformance", "run", "--quiet", "-j", str(jobs), "--report-dir", str(out)]
    ran = run_bounded(argv, RUN_TIMEOUT, cwd=REPO_DIR)
    try:
        report = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return {"error": f"no report (exit {ran.returncode}, timed out {ran.timed_out})", "wall": ran.wall}
    cases = report["cases"]
    return {
        "wall": ran.wall,
        "exit": ran.returncode,
        "totals": report["footer"]["totals"],
        "verdicts": [(c["key"], c["verdict"]) for c in cases],
        "messages": {c["key"]: c["message"][:160] for c in cases},
    }


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    if [k for k, _ in a["verdicts"]] != [k for k, _ in b["verdicts"]]:
        return ["the case lists differ (keys or order)"]
    return [
        f"{key}: {va} -> {vb} ({b['messages'][key]})"
        for (key, va), (_, vb) in zip(a["verdicts"], b["verdicts"], strict=True)
        if va != vb
    ]


def run(rounds: int = 2) -> PartResult:
    part = PartResult("parallel runs")
    heading(f"full embedded-default run: -j 2 vs -j 1, {rounds} alternating rounds (whole CLI process)")
    folder = Path(tempfile.mkdtemp(prefix="mcp-bench-parallel-"))
    try:
        counter = iter(range(10_000))
        runs = alternate(
            rounds,
            {
                "j1": lambda: _cli(1, folder / str(next(counter))),
                "j2": lambda: _cli(2, folder / str(next(counter))),
            },
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    good = {k: [r for r in v if "error" not in r] for k, v in runs.items()}
    for key, results in runs.items():
        for r in results:
            if "error" in r:
                print(f"  -{key[0]} {key[1]}: {r['error']}")
    if not good["j1"] or not good["j2"]:
        part.judged.append(Judged("-j 2 faster than -j 1", "a run failed", False))
        return part
    walls = {k: [r["wall"] for r in v] for k, v in good.items()}
    for key, label in (("j1", "-j 1"), ("j2", "-j 2")):
        totals = good[key][-1]["totals"]
        counts = " ".join(f"{k} {v}" for k, v in totals.items() if v and k != "cases")
        rounds_text = ", ".join(f"{w:.1f}" for w in walls[key])
        print(
            f"  {label}: median {median(walls[key]):6.1f} s  (rounds {rounds_text} s)"
            f"  {totals['cases']} cases: {counts}"
        )
    ratio = median(walls["j2"]) / median(walls["j1"])
    print(f"  wall ratio -j 2 / -j 1: {ratio:.2f}")
    part.judged.append(
        Judged(
            "-j 2 faster than -j 1 (full run)", f"-j 2 takes {ratio:.2f}x the wall time of -j 1", ratio < 1.0
        )
    )
    reference = good["j1"][0]
    flaky = [d for other in good["j1"][1:] for d in _differences(reference, other)]
    by_jobs = [d for other in good["j2"] for d in _differences(reference, other)]
    if flaky:
        print(f"  -j 1 runs disagree among themselves ({len(flaky)}): " + "; ".join(flaky[:3]))
    if by_jobs:
        print(f"  -j 2 verdicts differ from -j 1 ({len(by_jobs)}):")
        for line in by_jobs[:6]:
            print(f"    {line}")
    else:
        print(f"  verdict lists identical: {len(reference['verdicts'])} cases, same keys, order and verdicts")
    part.judged.append(
        Judged(
            "-j 2 verdicts identical to -j 1",
            f"{len(by_jobs)} differing case(s) over {len(good['j2'])} -j 2 run(s)"
            + (f"; -j 1 itself varied in {len(flaky)}" if flaky else ""),
            not by_jobs,
        )
    )
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    run(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

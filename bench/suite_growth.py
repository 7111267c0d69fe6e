"""The base suite on its reference, every revision, stdio and HTTP: today's harness against a baseline commit.

Why a baseline commit, run in the same minutes: issue 14 grows the base pack threefold (35 rows to
110+) and bounds the whole base run at twice the wall time of the harness as it was before
(`BASELINE`, main when the issue began). A figure written down once says more about that day's
machine than about the harness, so the baseline's own code is unpacked from git (`git archive`, into a
temporary folder, nothing in the repository changes) and run with this same interpreter through
PYTHONPATH, its reference server included, round after round beside today's.

Each figure is one `run_report` in a fresh interpreter (that commit's own bench/worker.py), timed
after the imports: the launch of the HTTP reference, every probe and every session are in it. Printed
per transport and in all: cases judged, wall time, cases judged per second, and the CPU time of the
harness and of its children (the reference servers: on stdio a session is a process start). CPU is
printed because this machine is shared: wall time is what the bound is about, CPU is what says
whether a wall ratio came from the harness or from the neighbours.

    python bench/suite_growth.py [--rounds 3] [--baseline 1905e37]
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchlib import PYTHON, REPO_DIR, Judged, PartResult, alternate, heading, median, run_bounded

#: main when issue 14 began: the base pack's 35 rows, the wall time the bound is measured against.
BASELINE = "1905e37"
#: The whole base run may take this many times the baseline's wall time.
BOUND = 2.0
TRANSPORTS = ("stdio", "http")
WORKER_TIMEOUT = 600.0


@contextmanager
def baseline_tree(commit: str) -> Iterator[Path]:
    """The files of `commit`, unpacked into a temporary folder that is removed on the way out."""
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-baseline-") as tmp:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit],
            cwd=REPO_DIR,
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


#: Runs the baseline's bench/worker.py seeing only the packs its own tree has: the installed distribution
#: registers today's packs too (auth, from 2026-12), which that commit's Pack class cannot load.
BASELINE_LAUNCHER = """
import importlib.metadata as metadata, os, runpy, sys
root, worker = sys.argv[1], sys.argv[2]
original = metadata.entry_points
def entry_points(**params):
    found = original(**params)
    if params.get("group") != "mcp_conformance.suites":
        return found
    return metadata.EntryPoints(e for e in found if os.path.isdir(os.path.join(root, *e.module.split("."))))
metadata.entry_points = entry_points
sys.argv = [worker, *sys.argv[3:]]
runpy.run_path(worker, run_name="__main__")
"""


def _worker(root: Path | None, transport: str) -> Callable[[], dict[str, Any]]:
    """One base run on the reference over `transport`, by the code under `root` (None: this checkout)."""
    import json

    where = root or REPO_DIR
    env = dict(os.environ)
    if root is not None:
        # Ahead of the editable install's finder: the baseline's packages, reference server included
        # (the servers are children and inherit it).
        env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    argv = [PYTHON, str(where / "bench" / "worker.py"), "--reference", "base", "--transport", transport]
    if root is not None:
        argv = [PYTHON, "-c", BASELINE_LAUNCHER, str(root), *argv[1:]]

    def run() -> dict[str, Any]:
        ran = run_bounded(argv, WORKER_TIMEOUT, env=env, cwd=where)
        lines = [line for line in ran.stdout.splitlines() if line.startswith("{")]
        if ran.timed_out or ran.returncode != 0 or not lines:
            tail = (ran.stderr or ran.stdout).strip().splitlines()[-3:]
            return {"error": f"exit {ran.returncode}{' (timed out)' * ran.timed_out}: {' | '.join(tail)}"}
        result: dict[str, Any] = json.loads(lines[-1])
        return result

    return run


def _row(label: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in results if "error" not in r]
    if not good:
        return {"error": results[0]["error"]}
    totals = good[-1]["totals"]
    return {
        "label": label,
        "wall": median([r["wall"] for r in good]),
        "cpu": median([r["cpu_s"] for r in good]),
        "children": median([r["children_cpu_s"] for r in good]),
        "cases": totals["cases"],
        "bad": sum(totals.get(k, 0) for k in ("FAIL", "ERROR")),
        "revisions": len((good[-1]["revisions"] or [[]])[0] or []),
    }


def _print(row: dict[str, Any]) -> None:
    if "error" in row:
        print(f"  {row.get('label', '?'):22} failed: {row['error']}")
        return
    print(
        f"  {row['label']:22} {row['revisions']:4d} {row['cases']:6d} {row['wall']:8.2f} s"
        f" {row['cases'] / row['wall']:9.1f} {row['cpu']:8.2f} s {row['children']:9.2f} s"
        f"  {'all pass' if not row['bad'] else str(row['bad']) + ' FAIL/ERROR'}"
    )


def run(rounds: int = 3, baseline: str = BASELINE) -> PartResult:
    part = PartResult("base suite growth")
    heading(
        f"base suite on its reference, every revision, today's harness vs {baseline}:"
        f" median of {rounds} alternating rounds"
    )
    with baseline_tree(baseline) as root:
        jobs: dict[str, Callable[[], dict[str, Any]]] = {}
        for transport in TRANSPORTS:
            jobs[f"{baseline}:{transport}"] = _worker(root, transport)
            jobs[f"now:{transport}"] = _worker(None, transport)
        runs = {key: _row(key, results) for key, results in alternate(rounds, jobs).items()}
    print(
        f"  {'harness:transport':22} {'revs':>4} {'cases':>6} {'wall':>10} {'cases/s':>9}"
        f" {'CPU':>10} {'servers CPU':>11}  verdicts"
    )
    for key in jobs:
        _print(runs[key])
    if any("error" in r for r in runs.values()):
        part.judged.append(Judged("base run in <= 2x the baseline's wall time", "a run failed", None))
        return part
    total = {
        who: {k: sum(runs[f"{who}:{t}"][k] for t in TRANSPORTS) for k in ("wall", "cpu", "children", "cases")}
        for who in (baseline, "now")
    }
    old, new = total[baseline], total["now"]
    wall_ratio = new["wall"] / old["wall"]
    cpu_ratio = (new["cpu"] + new["children"]) / (old["cpu"] + old["children"])
    cases_ratio = new["cases"] / old["cases"]
    print(
        f"  both transports: {old['cases']:.0f} cases in {old['wall']:.2f} s ({baseline}),"
        f" {new['cases']:.0f} cases in {new['wall']:.2f} s (now): wall {wall_ratio:.2f}x for"
        f" {cases_ratio:.2f}x the cases; CPU, harness and servers, {cpu_ratio:.2f}x;"
        f" cases judged per second {old['cases'] / old['wall']:.1f} -> {new['cases'] / new['wall']:.1f}"
    )
    part.judged.append(
        Judged(
            f"base run, every revision, stdio + HTTP, <= {BOUND:g}x the wall time of {baseline}",
            f"{new['wall']:.2f} s vs {old['wall']:.2f} s ({wall_ratio:.2f}x) judging {cases_ratio:.2f}x the"
            f" cases; CPU {cpu_ratio:.2f}x",
            wall_ratio <= BOUND and not any(r["bad"] for r in runs.values()),
        )
    )
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    args = parser.parse_args()
    run(args.rounds, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())

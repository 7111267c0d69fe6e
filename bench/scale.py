"""Scale: the base suite against servers with 10 to 5,000 tools and with 1 MB and 10 MB tool results.

Why a plain server (bench/scale_server.py, raw JSON lines over stdio, tools paginated 100 a page,
a distinct schema per tool): its own cost is small and grows linearly, so what grows faster than
linearly here is the harness's. Each run is the full base suite pinned to 2025-11-25 (one revision,
so sizes compare cleanly), once with the default `--call-tools safe` (every tool is read-only, so
each is called once and its structuredContent validated) and once with `--call-tools none` (listing
and per-tool schema checks only). Peak memory is the harness process's own `ru_maxrss`, from a fresh
interpreter per run (bench/worker.py); the server is a child and is not counted.

Growth is judged from the harness's CPU time per added tool: between 1,000 and 5,000 tools it must be
no more than 1.5x what it is between 100 and 1,000 (linear growth gives 1x; quadratic would give
about 6x). CPU rather than wall, because on a shared machine a small run's wall time is mostly
scheduling noise, and the server's share of the wall time is linear by construction; the wall-time
slopes are printed beside it. Memory growth: the run's own peak above that of the same server with
no big result, per result megabyte, at 1 MB and at 10 MB.

    python bench/scale.py [--rounds 3] [--sizes 10,100,1000,5000]
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from typing import Any

from benchlib import BENCH_DIR, PYTHON, Judged, PartResult, alternate, heading, median, worker

REVISION = "2025-11-25"
SIZES = (10, 100, 1000, 5000)
RESULT_SIZES = (1 << 20, 10 << 20)
TOOLS_BUDGET_S = 5.0
MEMORY_BUDGET_MB = 200.0
GROWTH_TOLERANCE = 1.5
WORKER_TIMEOUT = 600.0


def _spec(tools: int, result_bytes: int = 0, schemas: str = "distinct") -> str:
    server = BENCH_DIR / "scale_server.py"
    argv = [
        PYTHON,
        str(server),
        "--tools",
        str(tools),
        "--result-bytes",
        str(result_bytes),
        "--schemas",
        schemas,
    ]
    return "stdio:" + shlex.join(argv)


def _job(spec: str, call_tools: str = "safe") -> Callable[[], dict[str, Any]]:
    args = ["--server", spec, "--protocol", REVISION, "--call-tools", call_tools, "--timeout", "30"]
    return lambda: worker(args, WORKER_TIMEOUT)


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in results if "error" not in r]
    if not good:
        return {"error": results[0]["error"]}
    bad = sum(good[-1]["totals"].get(k, 0) for k in ("FAIL", "ERROR"))
    return {
        "wall": median([r["wall"] for r in good]),
        "cpu": median([r["cpu_s"] for r in good]),
        "rss": max(r["maxrss_mb"] for r in good),
        "run_peak": max(r["run_peak_mb"] for r in good),
        "rss_before": min(r["rss_before_mb"] for r in good),
        "cases": good[-1]["totals"]["cases"],
        "bad": bad,
        "nonpass": [n for n in good[-1]["nonpass"] if n[1] in ("FAIL", "ERROR")][:2],
    }


def run(rounds: int = 3, sizes: tuple[int, ...] = SIZES) -> PartResult:
    part = PartResult("scale")
    heading(
        f"scale: base suite @{REVISION} against bench/scale_server.py (stdio, 100 tools a page,"
        f" distinct schemas); median of {rounds} rounds"
    )
    jobs: dict[str, Callable[[], dict[str, Any]]] = {}
    for n in sizes:
        jobs[f"calls:{n}"] = _job(_spec(n))
        jobs[f"nocalls:{n}"] = _job(_spec(n), "none")
    jobs["same"] = _job(_spec(max(sizes), schemas="same"))
    for size in (0, *RESULT_SIZES):
        jobs[f"result:{size}"] = _job(_spec(10, size))
    runs = {key: _summary(results) for key, results in alternate(rounds, jobs).items()}

    print(
        f"  {'tools':>6} {'wall, call each':>16} {'per tool':>9} {'CPU':>7} {'peak RSS':>9}"
        f"   {'wall, no calls':>15} {'per tool':>9}  verdicts"
    )
    for n in sizes:
        full, bare = runs[f"calls:{n}"], runs[f"nocalls:{n}"]
        if "error" in full or "error" in bare:
            print(f"  {n:6d} failed: {full.get('error') or bare.get('error')}")
            continue
        verdict = "all pass" if not full["bad"] else f"{full['bad']} FAIL/ERROR {full['nonpass']}"
        print(
            f"  {n:6d} {full['wall']:14.2f} s {full['wall'] / n * 1e3:6.2f} ms {full['cpu']:5.2f} s"
            f" {full['rss']:6.1f} MB   {bare['wall']:13.2f} s {bare['wall'] / n * 1e3:6.2f} ms  {verdict}"
        )
    same = runs["same"]
    if "error" not in same:
        print(
            f"  {max(sizes):6d} {same['wall']:14.2f} s {same['wall'] / max(sizes) * 1e3:6.2f} ms"
            f" {same['cpu']:5.2f} s {same['rss']:6.1f} MB   (every tool with the same two schemas)"
        )
    _judge_tools(part, runs, sizes)

    print(
        f"\n  {'result size':>12} {'wall':>8} {'peak RSS':>9} {'above 0 B':>10} {'per result MB':>14}"
        "  verdicts"
    )
    base = runs["result:0"]
    added: dict[int, float] = {}
    for size in (0, *RESULT_SIZES):
        r = runs[f"result:{size}"]
        if "error" in r or "error" in base:
            print(f"  {size >> 20:9d} MB failed: {r.get('error') or base.get('error')}")
            continue
        added[size] = r["run_peak"] - base["run_peak"]
        per_mb = f"{added[size] / (size >> 20):11.1f} MB" if size else f"{'':14}"
        verdict = "all pass" if not r["bad"] else f"{r['bad']} FAIL/ERROR {r['nonpass']}"
        print(
            f"  {size >> 20:9d} MB {r['wall']:6.2f} s {r['rss']:6.1f} MB {added[size]:7.1f} MB"
            f" {per_mb}  {verdict}"
        )
    big = runs[f"result:{RESULT_SIZES[-1]}"]
    if "error" not in big:
        part.judged.append(
            Judged(
                f"peak memory < {MEMORY_BUDGET_MB:g} MB with a 10 MB result",
                f"{big['rss']:.1f} MB peak RSS of the harness ({big['rss_before']:.1f} MB before the run)",
                big["rss"] < MEMORY_BUDGET_MB and not big["bad"],
            )
        )
    if all(size in added for size in RESULT_SIZES):
        small, large = (added[size] / (size >> 20) for size in RESULT_SIZES)
        growth = large / small if small > 0 else float("inf")
        print(f"  memory per result MB: {small:.1f} MB at 1 MB, {large:.1f} MB at 10 MB ({growth:.2f}x)")
        part.judged.append(
            Judged(
                "memory grows no worse than linearly with result size",
                f"{large:.1f} MB per result MB at 10 MB vs {small:.1f} at 1 MB ({growth:.2f}x)",
                growth <= GROWTH_TOLERANCE,
            )
        )
    return part


def _judge_tools(part: PartResult, runs: dict[str, dict[str, Any]], sizes: tuple[int, ...]) -> None:
    top = max(sizes)
    full = runs[f"calls:{top}"]
    bare = runs[f"nocalls:{top}"]
    if "error" not in full:
        part.judged.append(
            Judged(
                f"{top} tools listed and checked < {TOOLS_BUDGET_S:g} s",
                f"{full['wall']:.2f} s calling each tool,"
                f" {bare.get('wall', float('nan')):.2f} s without calls"
                f" (harness CPU {full['cpu']:.2f} s)",
                full["wall"] < TOOLS_BUDGET_S and not full["bad"],
            )
        )
    if not {100, 1000, 5000} <= set(sizes):
        return
    for mode in ("calls", "nocalls"):
        if any("error" in runs[f"{mode}:{n}"] for n in (100, 1000, 5000)):
            continue
        slopes = {}
        for measure in ("cpu", "wall"):
            t: dict[int, float] = {n: runs[f"{mode}:{n}"][measure] for n in (100, 1000, 5000)}
            low, high = (t[1000] - t[100]) / 900, (t[5000] - t[1000]) / 4000
            slopes[measure] = (low, high, high / low if low > 0 else float("inf"))
        what = "calling each tool" if mode == "calls" else "no calls"
        (c_low, c_high, growth), (w_low, w_high, w_growth) = slopes["cpu"], slopes["wall"]
        print(
            f"  per added tool ({what}): harness CPU {c_low * 1e3:.3f} ms (100->1000),"
            f" {c_high * 1e3:.3f} ms (1000->5000): {growth:.2f}x;"
            f" wall {w_low * 1e3:.3f} / {w_high * 1e3:.3f} ms: {w_growth:.2f}x"
        )
        part.judged.append(
            Judged(
                f"time grows no worse than linearly with tools ({what})",
                f"harness CPU per added tool 1000->5000 is {growth:.2f}x that of 100->1000"
                f" (wall: {w_growth:.2f}x)",
                growth <= GROWTH_TOLERANCE,
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    run(args.rounds, tuple(int(s) for s in args.sizes.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

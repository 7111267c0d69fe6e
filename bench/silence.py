"""How much of a base run on a real server is spent waiting for answers that never come.

Why this figure: negative probes (a line that is not JSON, a request whose method is a number) draw no
answer from the official SDKs on stdio. A fixed wait per probe made that most of a run (about 18 s of
25 on mcp-server-time); the session now settles each probe with a sentinel request the server must
answer, so the silence should cost a round trip and a short grace. The worker reports the seconds
spent in exchanges that ended without the answer they waited for (`Session`'s UNANSWERED tally); the
target is under 10 % of the run's wall time. Why mcp-server-time: a server no one here wrote, built on
the official SDK, in the test extras (`pip install mcp-server-time`).

    python bench/silence.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from benchlib import PYTHON, Judged, PartResult, heading, median, worker, yes_no

SERVER = f"stdio:{PYTHON} -m mcp_server_time"
SHARE_BUDGET = 0.10
WORKER_TIMEOUT = 300.0


def run(rounds: int = 3) -> PartResult:
    part = PartResult("silence")
    target = f"waiting for answers that never came < {SHARE_BUDGET:.0%} of a base run on mcp-server-time"
    heading(f"base suite on mcp-server-time over stdio: wall time and unanswered waits, median of {rounds}")
    if importlib.util.find_spec("mcp_server_time") is None:
        print("  skipped: mcp-server-time is not installed (pip install mcp-server-time)")
        part.judged.append(Judged(target, "not installed", None, "pip install mcp-server-time"))
        return part
    runs = [worker(["--server", SERVER, "--suite", "base"], WORKER_TIMEOUT) for _ in range(rounds)]
    good = [r for r in runs if "error" not in r]
    if not good:
        print(f"  failed: {runs[0]['error']}")
        part.judged.append(Judged(target, runs[0]["error"], False))
        return part
    print(
        f"  {'round':>5} {'cases':>5} {'wall':>8} {'unanswered':>11} {'exchanges':>9} {'share':>6}  verdicts"
    )
    for index, r in enumerate(good, 1):
        totals = r["totals"]
        verdicts = " ".join(f"{k} {v}" for k, v in totals.items() if v and k != "cases")
        print(
            f"  {index:5d} {totals['cases']:5d} {r['wall']:6.2f} s {r['unanswered_s']:9.3f} s"
            f" {r['unanswered_exchanges']:9d} {r['unanswered_s'] / r['wall']:6.1%}  {verdicts}"
        )
    wall = median([r["wall"] for r in good])
    waited = median([r["unanswered_s"] for r in good])
    share = waited / wall
    part.judged.append(Judged(target, f"{waited:.2f} s of {wall:.2f} s ({share:.1%})", share < SHARE_BUDGET))
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    part = run(args.rounds)
    for judged in part.judged:
        print(f"  {judged.target}: {judged.measured} ({yes_no(judged.met)})")
    return 0 if all(j.met is not False for j in part.judged) else 1


if __name__ == "__main__":
    sys.exit(main())

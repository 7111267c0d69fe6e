"""One harness run in a fresh interpreter, reported as one JSON line: wall, CPU and peak RSS.

Why a separate process: peak memory must be the harness's own (the servers it starts are its
children and are left out), and one run's garbage or warm caches must not flatter the next. `wall`
is the run itself (`run_report`), after the imports, which `import_s` gives apart.
Why CPU beside wall: when the harness's CPU time is far below its wall time, the run is waiting on
the server or on a fixed observation window, and making the harness faster would not help.

Why peak RSS from /proc/self/status (VmHWM) rather than `getrusage(RUSAGE_SELF).ru_maxrss` alone:
Linux carries the forking parent's peak over into the child's ru_maxrss across exec (a fresh child of
a 200 MB parent reports 211 MB before doing anything), so ru_maxrss would measure whoever started
the worker. VmHWM belongs to this process's own address space, which exec made new; it is reset
(`/proc/self/clear_refs`) when the run starts, so the run's own peak can be told from the imports'.
ru_maxrss is reported too, for platforms without /proc.

    python bench/worker.py --server "stdio:python bench/scale_server.py --tools 100" --protocol 2025-11-25
    python bench/worker.py --reference base --transport http
    python bench/worker.py --server target.toml --report report.json   (every transcript kept)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any

IMPORT_STARTED = time.perf_counter()

from conformance.engine.context import RunOptions  # noqa: E402
from conformance.front.api import run_report  # noqa: E402
from conformance.model.targets import Target, reference_targets  # noqa: E402
from conformance.protocol.session import UNANSWERED  # noqa: E402


def _status_kib(field: str) -> int | None:
    """A `VmXXX:  N kB` line of /proc/self/status, or None where there is no /proc."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux 4.0+), so the next reading is the run's own peak."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", action="append", default=[], help="a --server SPEC, as for the CLI")
    parser.add_argument("--reference", metavar="SUITE", help="run SUITE against its own reference server")
    parser.add_argument("--transport", choices=("stdio", "http"), help="with --reference: only this one")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("-k", dest="select", default=None)
    parser.add_argument("--protocol", default="auto")
    parser.add_argument("--call-tools", default="safe", choices=("safe", "all", "none"))
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--verdicts", action="store_true", help="include every case's key and verdict")
    parser.add_argument(
        "--report", metavar="FILE", help="also write the whole report here, every case's transcript kept"
    )
    args = parser.parse_args(argv)

    servers: list[str | Target] | None = list(args.server) or None
    suites = args.suite or ([args.reference] if args.reference else ["base"])
    if args.reference:
        targets = reference_targets(args.reference)
        servers = [t for t in targets if args.transport in (None, t.kind)]
    imported = time.perf_counter() - IMPORT_STARTED
    import_peak = _status_kib("VmHWM")
    rss_before = _status_kib("VmRSS")
    reset = _reset_peak()
    options = RunOptions(
        timeout=args.timeout,
        protocol=args.protocol,
        call_tools=args.call_tools,
        jobs=args.jobs,
        strict=args.strict,
        keep_transcripts=bool(args.report),
    )
    cpu_before = _cpu(resource.RUSAGE_SELF)
    started = time.perf_counter()
    report = run_report(servers, suites, select=args.select, options=options)
    wall = time.perf_counter() - started
    # The reference's fork server reaps the servers it forked: stopped here, after the timing, so their
    # CPU reaches RUSAGE_CHILDREN (a tree from before the fork server has no prefork module).
    try:
        from conformance.infra import prefork
    except ImportError:
        pass
    else:
        prefork.stop_all()
    cases = report["cases"]
    ru_maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    run_peak = _status_kib("VmHWM") if reset else None
    if run_peak is None or import_peak is None or rss_before is None:
        run_peak = import_peak = rss_before = ru_maxrss
    out: dict[str, Any] = {
        "wall": wall,
        "import_s": imported,
        "cpu_s": _cpu(resource.RUSAGE_SELF) - cpu_before,
        "children_cpu_s": _cpu(resource.RUSAGE_CHILDREN),
        "maxrss_mb": max(run_peak, import_peak) / 1024,
        "run_peak_mb": run_peak / 1024,
        "rss_before_mb": rss_before / 1024,
        "ru_maxrss_mb": ru_maxrss / 1024,
        # Time in exchanges that ended without the answer they waited for (negative probes included).
        "unanswered_s": UNANSWERED.seconds,
        "unanswered_exchanges": UNANSWERED.exchanges,
        "totals": report["footer"]["totals"],
        "complete": report["footer"]["complete"],
        "revisions": [t.get("revisions_spoken") for t in report["targets"]],
        "nonpass": [
            [c["key"], c["verdict"], c["message"][:200]] for c in cases if c["verdict"] not in ("PASS",)
        ][:8],
    }
    if args.verdicts:
        out["verdicts"] = [[c["key"], c["verdict"]] for c in cases]
    if args.report:  # after the timing: writing it is no part of the run
        with open(args.report, "w", encoding="utf-8") as file:
            json.dump(report, file)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

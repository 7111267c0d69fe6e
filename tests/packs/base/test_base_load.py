"""Verdicts do not change with load: the base suite against the reference, alone and beside a CPU hog.

Why: negative probes are settled by a sentinel and a grace that scales with the sentinel's round trip,
not by a fixed wait, so a slow machine may stretch a run but must not turn a PASS into a WARN (an
answer taken for silence) or a WARN into an ERROR. The hog is one busy loop, bounded by its own
deadline and killed with its process group when the loaded run ends: beside the other xdist workers
(two more than cores) it keeps every core busy; the whole suite beside a busy loop per core is measured
by hand (the README's test command), not here, where a second loop would only burn a core.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import REQUEST_TIMEOUT, run, stdio

#: Two full runs of the reference, the second beside a CPU hog.
pytestmark = pytest.mark.slow

#: A hog stops by itself after this many seconds even if the test process is killed first.
HOG_DEADLINE_S = 600
HOG = f"import time\nend = time.monotonic() + {HOG_DEADLINE_S}\nwhile time.monotonic() < end:\n    pass\n"


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in procs:
            proc.wait(10)


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {c["key"]: c["verdict"] for c in report["cases"]}


#: Beside the reference: a server that answers a parse error only after the sentinel's answer (in time,
#: thanks to the grace) and one that never answers it (silence, settled by the sentinel).
MUTANTS = [stdio("tests.servers.raw_server", "--defect", d) for d in ("late-parse-error", "no-parse-error")]


def _mutant_run() -> dict[str, Any]:
    # A generous per-request timeout: a loaded machine slows start-up and answers, never the verdicts.
    return run(MUTANTS, select="rpc.", timeout=30.0)


def test_base_verdicts_do_not_change_with_load(embedded_default: dict[str, Any]) -> None:
    # The reference alone is the session's one run of the embedded default (`run(None)`, whose request
    # timeout is the same generous REQUEST_TIMEOUT), made before any hog of this test starts.
    quiet = (embedded_default, _mutant_run())
    with cpu_hogs(1) as hogs:
        busy = (run(None, timeout=REQUEST_TIMEOUT), _mutant_run())
        assert all(p.poll() is None for p in hogs), "the hogs ran for the whole loaded run"
    for alone, loaded in zip(quiet, busy, strict=True):
        changed = {
            c["key"]: (_verdicts(alone).get(c["key"]), c["verdict"], c["message"][:300])
            for c in loaded["cases"]
            if _verdicts(alone).get(c["key"]) != c["verdict"]
        }
        assert changed == {}
        assert _verdicts(loaded).keys() == _verdicts(alone).keys()
    reference, mutants = busy
    assert {c["check"] for c in reference["cases"]} >= {"base.rpc.parse-error", "base.rpc.invalid-request"}
    parse = {c["target"]: c["verdict"] for c in mutants["cases"] if c["check"] == "base.rpc.parse-error"}
    assert parse == {0: "PASS", 1: "WARN"}

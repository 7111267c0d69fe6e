"""`-j N` runs probes and revisions concurrently, over sessions of their own, with the same report."""

from __future__ import annotations

from typing import Any

from tests.conftest import run, stdio


def _shape(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["key"], c["verdict"]) for c in report["cases"]]


def test_parallel_run_gives_the_same_cases_in_the_same_order() -> None:
    servers = [
        stdio("conformance_reference.base_server"),
        stdio("tests.servers.raw_server", "--defect", "wrong-id"),
        stdio("tests.servers.raw_server", "--defect", "stdout-garbage"),
    ]
    serial = run(servers, jobs=1)
    parallel = run(servers, jobs=3)
    assert _shape(parallel) == _shape(serial)
    assert [t["revisions_spoken"] for t in parallel["targets"]] == [
        t["revisions_spoken"] for t in serial["targets"]
    ]
    # The planted defects are still found exactly where they are, whatever ran beside them.
    failed = {(c["target"], c["check"]) for c in parallel["cases"] if c["verdict"] == "FAIL"}
    assert failed == {(1, "base.rpc.id-echo"), (2, "base.stdio.stdout-only-messages")}

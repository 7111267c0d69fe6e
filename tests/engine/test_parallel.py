"""`-j N` runs probes and revisions concurrently, over sessions of their own, with the same report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance import schemas
from tests.conftest import PY, cli, run, stdio


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


def _cases(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each case as a report says it, but for what differs from run to run (time, ports, pids)."""
    return [(c["key"], c["target"], c["verdict"], c["requirement"], c["message"]) for c in report["cases"]]


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if k not in ("url",)} for t in report["targets"]]


def test_j_spreads_the_reference_targets_over_processes_with_the_same_report(tmp_path: Path) -> None:
    """`run` without --server has two targets (the base reference over stdio and over HTTP): with -j 2
    each runs in a worker process of its own, and the joined report is the -j 1 report, case for case."""
    reports = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        done = cli("run", "--suite", "base", "-k", "rpc", "-j", jobs, "--report-dir", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        reports[jobs] = json.loads((out / "report.json").read_text(encoding="utf-8"))
        if jobs == "2":  # live progress came through the workers, in target order
            started = [line for line in done.stderr.splitlines() if line.startswith("» target")]
            assert started == ["» target 0: base reference (stdio)", "» target 1: base reference (http)"]
    serial, spread = reports["1"], reports["2"]
    assert len(serial["targets"]) == 2 and len(serial["cases"]) > 20
    assert _cases(spread) == _cases(serial)
    assert _targets(spread) == _targets(serial)
    assert spread["footer"]["totals"] == serial["footer"]["totals"]
    assert spread["footer"]["complete"] is True and spread["footer"]["exit_code"] == 0
    assert (
        spread["header"]["options"] == serial["header"]["options"] and "merged_from" not in spread["header"]
    )
    assert schemas.errors(schemas.REPORT_ID, None, spread) == []


def test_a_file_of_many_targets_runs_them_all_into_one_report(tmp_path: Path) -> None:
    """A `[[targets]]` file, spread over -j 2: each target keeps its label and its own env, and a planted
    defect is found on the target that has it, under that target's key."""
    raw = [PY, "-m", "tests.servers.raw_server"]
    (tmp_path / "many.toml").write_text(
        f'[[targets]]\ncommand = {json.dumps(raw)}\nlabel = "reference"\n'
        f'[[targets]]\ncommand = {json.dumps([*raw, "--defect", "wrong-id"])}\nlabel = "wrong ids"\n'
        f"[targets.timeouts]\nrequest = 4\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = cli(
        "run", "--server", str(tmp_path / "many.toml"), "-k", "id-echo", "-j", "2", "--report-dir", str(out)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [(t["index"], t["spec"]) for t in report["targets"]] == [(0, "reference"), (1, "wrong ids")]
    assert report["targets"][1]["timeouts"]["request"] == 4
    failed = {c["key"] for c in report["cases"] if c["verdict"] == "FAIL"}
    assert failed == {
        f"base.rpc.id-echo[stdio@{rev}]#1" for rev in ("2026-07-28", "2025-11-25", "2025-06-18")
    }
    assert {c["verdict"] for c in report["cases"] if c["target"] == 0} == {"PASS"}


def test_ctrl_c_stops_every_worker_and_keeps_what_they_judged(tmp_path: Path) -> None:
    """Ctrl-C reaches the parent only (workers run in sessions of their own): it tells each worker to
    stop, each hands in its partial report, and the run exits 130 with the cases judged so far."""
    from tests.front.test_cli_bad_input import interrupt_two_targets

    code, out, err = interrupt_two_targets(tmp_path, "FAIL", "-j", "2")
    assert code == 130, err
    assert "Traceback" not in err, err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["footer"]["complete"] is False and report["footer"]["reason"] == "interrupted"
    assert [t["index"] for t in report["targets"]] == [0, 1]
    assert any(c["verdict"] == "FAIL" and c["target"] == 0 for c in report["cases"])
    assert "INCOMPLETE" in out


def test_without_j_an_http_targets_revisions_run_side_by_side_with_the_same_report(tmp_path: Path) -> None:
    """No `-j`: the HTTP reference's revisions run side by side (its packs allow it), the stdio one's in
    order; the report is `-j 1`'s, case for case. A profile pack that writes a store allows nothing."""
    from conformance.front import api
    from conformance.model import packs

    assert packs.side_by_side(["base", "apps", "tasks"])
    assert not packs.side_by_side(["base", "map-review"]) and not packs.side_by_side(["no-such-pack"])
    assert api.run_options(jobs=None).side_by_side and api.run_options(jobs=None).jobs == 1
    assert not api.run_options(jobs=1).side_by_side
    reports = {}
    for name, extra in (("default", ()), ("j1", ("-j", "1"))):
        out = tmp_path / name
        done = cli("run", "--suite", "base", "-k", "rpc", *extra, "--report-dir", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        reports[name] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert _cases(reports["default"]) == _cases(reports["j1"])
    assert _targets(reports["default"]) == _targets(reports["j1"])

"""The reference MAP review service passes every map-review check, and serves the seed byte for byte.

The full run is the embedded default (`mcp-conformance run --suite map-review` with no `--server`): the
reference over stdio and over HTTP, every revision it speaks, races at full strength (20 rounds, N = 2, 8
and the mixed 6). Its one WARN is explained: MAP-READ-006 is `contract-revision-unverified` by the
catalog's gap rule G-M6 for every server, because the contract bytes behind the pinned digest are not
published.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.checks import load_pack
from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.model import vectors
from conformance.model.targets import reference_targets
from conformance_reference import map_server
from conformance_reference.map_state import P7, compact
from tests.map_helpers import DECISION_RACES, checks, non_pass, target
from tests.profile_helpers import assert_http_binds_loopback_only, assert_reference_passes, python_module

REPO = Path(__file__).resolve().parents[2].parent
REQUIREMENTS = json.loads(
    (REPO / "conformance_packs" / "map_review" / "requirements.json").read_text(encoding="utf-8")
)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def default_report() -> dict[str, Any]:
    return api.run_report(None, ["map-review"], options=RunOptions(timeout=10.0))


@pytest.mark.slow
def test_reference_passes_every_map_check(default_report: dict[str, Any]) -> None:
    assert_reference_passes(
        default_report,
        lambda c: c["requirement"] == "MAP-READ-006" and "contract-revision-unverified" in c["message"],
    )
    assert default_report["footer"]["exit_code"] == 0


@pytest.mark.slow
def test_every_map_row_is_checked_on_both_transports(default_report: dict[str, Any]) -> None:
    rows = {row["id"] for row in REQUIREMENTS["requirements"]}
    # The catalog's 47, plus MAP-PROFILE-001 (a claimed profile not shown) and MAP-DEC-020 (G-M3).
    assert len(rows) == 49 and all(r.startswith("MAP-") for r in rows)
    assert {c.requirement for c in load_pack("map-review")} == rows
    for transport in ("stdio", "http"):
        assert {c["requirement"] for c in default_report["cases"] if c["transport"] == transport} == rows


@pytest.mark.slow
def test_races_run_full_strength_and_overlap(default_report: dict[str, Any]) -> None:
    once = {c.id for c in load_pack("map-review") if c.once}
    for check_id in once:
        runs = [c for c in default_report["cases"] if c["check"] == check_id]
        assert [c["transport"] for c in runs] == ["stdio", "http"], check_id  # once per target
    for check_id, racers in (
        ("map-review.race.approve-2", 2),
        ("map-review.race.approve-8", 8),
        ("map-review.race.mixed", 6),
    ):
        for case in (c for c in default_report["cases"] if c["check"] == check_id):
            assert f"20 rounds of {racers} racers" in case["message"]
            assert "requests overlapped in 20/20 rounds" in case["message"], case["message"]
    for check_id in ("map-review.race.decide-vs-mutate", "map-review.race.decide-vs-revoke"):
        for case in (c for c in default_report["cases"] if c["check"] == check_id):
            assert "20 rounds of 2 racers" in case["message"]


def test_embedded_default_shares_one_state_file_per_target() -> None:
    stdio, http = reference_targets("map-review")
    stdio_db = stdio.argv[stdio.argv.index("--db") + 1]
    http_db = http.launch[http.launch.index("--db") + 1]
    assert stdio_db != http_db and Path(stdio_db).parent == Path(http_db).parent
    assert stdio.settings["controller"]["command"][-2:] == ["--db", stdio_db]
    assert http.settings["controller"]["command"][-2:] == ["--db", http_db]
    # Started as a fork of the reference's fork server (conformance.infra.prefork): `-m FORKSERVER spawn
    # MODULE`.
    assert stdio.settings["controller"]["command"][2:5] == [
        "conformance_reference.forkserver",
        "spawn",
        "conformance_reference.map_controller",
    ]
    base_stdio, base_http = reference_targets("base")
    assert not base_stdio.settings and not base_http.settings and "--db" not in base_stdio.argv


# --------------------------------------------------------------------------- the wire, raw


def reference(*args: str) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    return python_module("conformance_reference.map_server", *args)


def exchange(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> bytes:
    """Send one request with the 2026-07-28 envelope; the raw response line (bounded by the test timeout)."""
    assert proc.stdin and proc.stdout
    sent = json.loads(json.dumps(message))
    sent["params"]["_meta"] = META
    proc.stdin.write(json.dumps(sent).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    assert line, proc.stderr.read().decode() if proc.stderr else "no answer"
    return line


def exchange_vector(vector_id: str) -> dict[str, Any]:
    return next(v for v in vectors.load("map-review", "p7-exchange.json") if v["id"] == vector_id)


def test_p7_read_is_the_seed_byte_for_byte(tmp_path: Path) -> None:
    read, approve = exchange_vector("map.p7.read"), exchange_vector("map.p7.approve")
    seed_text = read["response"]["result"]["content"][0]["text"]
    with reference("--db", str(tmp_path / "s.db")) as proc:
        raw = exchange(proc, read["request"]).decode("utf-8")
        # The structuredContent member on the wire is the seed's compact JSON, byte for byte.
        assert '"structuredContent":' + seed_text in raw
        result = json.loads(raw)["result"]
        assert result["content"] == [{"text": seed_text, "type": "text"}]
        assert result["structuredContent"] == read["response"]["result"]["structuredContent"]
        assert result["isError"] is False
        decided = json.loads(exchange(proc, approve["request"]))["result"]
        assert decided["structuredContent"] == approve["response"]["result"]["structuredContent"]
        assert decided["content"][0]["text"] == approve["response"]["result"]["content"][0]["text"]
        assert decided["isError"] is False


def test_p7_approval_after_expiry_is_410(tmp_path: Path) -> None:
    late = exchange_vector("map.p7.approve-after-expiry")
    with reference("--db", str(tmp_path / "s.db"), "--clock", late["clock"]["now"]) as proc:
        result = json.loads(exchange(proc, late["request"]))["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["status"] == 410 == late["expect_status"]
        assert result["structuredContent"]["code"] == "expired"
        again = json.loads(exchange(proc, exchange_vector("map.p7.read")["request"]))["result"]
        assert again["structuredContent"]["status"] == 410  # still open, still expired: nothing committed


def test_http_binds_loopback_only() -> None:
    assert_http_binds_loopback_only("conformance_reference.map_server")


def test_bad_clock_is_refused() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "conformance_reference.map_server", "--clock", "yesterday"],
        cwd=REPO,
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0 and b"clock" in proc.stderr.lower()


# --------------------------------------------------------------------------- against the seed itself


def test_reference_data_agrees_with_the_seed(shared_dir: Path) -> None:
    seed = json.loads((shared_dir / "seeds" / "000_f0e16eb850d8e7be.txt").read_text(encoding="utf-8"))
    assert map_server.seed_tools() == seed["tools"]
    assert seed["response"]["result"]["structuredContent"] == P7
    assert compact(P7) == seed["response"]["result"]["content"][0]["text"]
    read, approve = exchange_vector("map.p7.read"), exchange_vector("map.p7.approve")
    assert (read["request"], read["response"]) == (seed["read"], seed["response"])
    assert (approve["request"], approve["response"]) == (seed["decision"], seed["result"])


@pytest.mark.slow
def test_revisions_in_parallel_stay_true(tmp_path: Path) -> None:
    """With `-j`, revisions of one target run at once against one service: the checks that move its clock
    or reset it run alone (the suite's per-target lock), so no concurrent decision sees a false 410."""
    selected = checks(without=DECISION_RACES)
    plan = [(target(tmp_path / "s.db"), selected)]
    builder = api.new_builder(plan)
    options = RunOptions(timeout=10.0, protocol="auto", jobs=3)
    asyncio.run(api.run_plan_async(plan, options, builder))
    report = api.finish(builder)
    assert report["targets"][0]["revisions_spoken"][:3] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert non_pass(report) == {("map-review.read.publication-details", "WARN")}

"""The client pack's DPoP rows (CLIENT-DPOP-001 to -006, extension rows): each mutant of the reference
client's DPoP (tests/servers/client_dpop_mutants.py) fails exactly its row, the rest of its run PASS or
SKIP. The reference client passing every DPoP row is test_client_pack.py's (its run plays every
scenario, these included).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.model.requirements import get as requirement
from tests.conftest import cli
from tests.packs.client.test_client_auth import fails_exactly, judge_mutants
from tests.servers.client_dpop_mutants import MUTANTS


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict[str, Any]]]:
    return judge_mutants("tests.servers.client_dpop_mutants", MUTANTS)


def test_every_dpop_row_has_a_mutant_and_is_an_extension_row() -> None:
    from conformance.model.requirements import table

    rows = {r for r in table() if r.startswith("CLIENT-DPOP-")}
    assert rows == {row for _, row, _, _ in MUTANTS.values()}
    assert {requirement(r).track for r in rows} == {"extension"}


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    fails_exactly(runs[defect], MUTANTS[defect][1])


@pytest.mark.parametrize("claim", [(), ("--experimental",)], ids=["unclaimed", "claimed"])
def test_an_extension_rows_fail_fails_the_run_only_when_claimed(
    claim: tuple[str, ...], tmp_path: Path
) -> None:
    """Unclaimed, the DPoP mutant's FAIL is shown and not scored (exit 0); `--experimental` claims the
    extension rows, and the same FAIL fails the run (exit 1)."""
    mutant = shlex.join([sys.executable, "-m", "tests.servers.client_dpop_mutants", "bearer-scheme"])
    args = ("--scenario", "auth/dpop", "--transport", "http", "--revision", "2026-07-28", "--quiet")
    done = cli("client", "--command", mutant, *args, *claim, "--report-dir", str(tmp_path))
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert [c["requirement"] for c in failed] == ["CLIENT-DPOP-002"]
    assert (done.returncode, bool(failed[0].get("unscored"))) == ((1, False) if claim else (0, True))


def test_an_extension_scenario_is_unscored_as_a_whole(tmp_path: Path) -> None:
    """A client that fails the contract in an extension's scenario (it exits 1) gets its ERROR shown and
    not scored: the scenario is the extension's, so no case of it (the contract's, the hygiene rows') fails
    a run that did not claim it."""
    client = shlex.join([sys.executable, "-m", "tests.servers.client_mutants", "exits-one"])
    args = ("--scenario", "auth/dpop", "--transport", "http", "--revision", "2025-11-25", "--quiet")
    done = cli("client", "--command", client, *args, "--report-dir", str(tmp_path))
    cases = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["cases"]
    contract = [c for c in cases if c["requirement"] == "CLIENT-RUN-001"]
    assert [(c["verdict"], c.get("unscored")) for c in contract] == [("ERROR", "extension")]
    assert {c.get("unscored") for c in cases} == {"extension"} and done.returncode == 0

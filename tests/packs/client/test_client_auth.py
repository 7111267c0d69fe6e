"""The client pack's OAuth rows: each mutant of the reference client's OAuth flow
(tests/servers/client_auth_mutants.py, client_grant_mutants.py) fails exactly its CLIENT-AUTH,
CLIENT-EMA or CLIENT-WIF row (WARN for a SHOULD, MAY or implied row),
the rest of its run PASS or SKIP. The reference client passing every OAuth row is
test_client_pack.py's (its run plays every scenario, these included).

Each mutant is played at the one scenario and revision its row is judged at, all in one event loop
shared by the module.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from typing import Any

import pytest

from conformance.clients import run
from conformance.engine.checks import load_pack
from conformance.engine.events import CaseFinished, Event, Fanout
from conformance.model.requirements import get as requirement
from tests.servers.client_auth_mutants import LEGACY, MUTANTS, SOFT, VARIANTS


class Collect:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, CaseFinished):
            self.cases.append(event.result.as_dict())


Mutants = dict[str, tuple[type, str, str, str]]


async def _judge(
    module: str, mutants: Mutants, defect: str, gate: asyncio.Semaphore
) -> tuple[str, list[dict[str, Any]]]:
    _, _, name, revision = mutants[defect]
    command = shlex.join([sys.executable, "-m", module, defect])
    options = run.ClientOptions(command, (name,), ("http",), (revision,), timeout=30)
    sink = Collect()
    async with gate:
        await run.run_jobs(run.plan(["client"], options), options, Fanout([sink]))
    return defect, sink.cases


def judge_mutants(module: str, mutants: Mutants) -> dict[str, list[dict[str, Any]]]:
    """Each mutant of `module` played at its one scenario and revision, three at a time, in one loop."""
    load_pack("client")

    async def every() -> dict[str, list[dict[str, Any]]]:
        gate = asyncio.Semaphore(3)
        return dict(await asyncio.gather(*(_judge(module, mutants, d, gate) for d in mutants)))

    return asyncio.run(every())


def fails_exactly(cases: list[dict[str, Any]], row: str, wanted: str = "") -> None:
    """`row` FAIL (WARN for a row below MUST, or as `wanted`) and every other case PASS or SKIP."""
    wanted = wanted or ("FAIL" if requirement(row).level.startswith("MUST") else "WARN")
    hit = [c for c in cases if c["requirement"] == row and c["verdict"] == wanted]
    assert hit, [(c["key"], c["verdict"], c["message"]) for c in cases]
    others = [c for c in cases if c["requirement"] != row and c["verdict"] not in ("PASS", "SKIP")]
    assert not others, [(c["key"], c["verdict"], c["message"]) for c in others]


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict[str, Any]]]:
    return judge_mutants("tests.servers.client_auth_mutants", MUTANTS | SOFT | VARIANTS | LEGACY)


def test_every_oauth_row_has_a_mutant() -> None:
    from conformance.model.requirements import table

    rows = {r for r in table() if r.startswith(("CLIENT-AUTH-", "CLIENT-EMA-", "CLIENT-WIF-"))}
    assert rows == {row for _, row, _, _ in MUTANTS.values()}


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    fails_exactly(runs[defect], MUTANTS[defect][1])


@pytest.mark.parametrize("defect", sorted(SOFT))
def test_a_soft_mutant_warns_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    fails_exactly(runs[defect], SOFT[defect][1], "WARN")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_variant_without_defect_passes(runs: dict[str, list[dict[str, Any]]], variant: str) -> None:
    cases = runs[variant]
    shown = [(c["key"], c["verdict"], c["message"]) for c in cases if c["verdict"] != "PASS"]
    assert any(c["requirement"] == VARIANTS[variant][1] and c["verdict"] == "PASS" for c in cases), shown
    assert any(c["requirement"] == "CLIENT-RUN-001" and c["verdict"] == "PASS" for c in cases), shown
    assert all(c["verdict"] in ("PASS", "SKIP") for c in cases), [
        (c["key"], c["verdict"], c["message"]) for c in cases if c["verdict"] not in ("PASS", "SKIP")
    ]


@pytest.mark.parametrize("client", sorted(LEGACY))
def test_an_earlier_revisions_client_is_one_error(runs: dict[str, list[dict[str, Any]]], client: str) -> None:
    cases = runs[client]
    errors = {c["key"] for c in cases if c["verdict"] == "ERROR"}
    assert [c["requirement"] for c in cases if c["key"] in errors] == ["CLIENT-RUN-001"]
    row = [c for c in cases if c["requirement"] == LEGACY[client][1]]
    assert row and all(c["verdict"] == "SKIP" and c["blocked_by"] in errors for c in row), row
    assert all(c["verdict"] in ("PASS", "SKIP") for c in cases if c["key"] not in errors), [
        (c["key"], c["verdict"], c["message"]) for c in cases if c["verdict"] not in ("PASS", "SKIP")
    ]

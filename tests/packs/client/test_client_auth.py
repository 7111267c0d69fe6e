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
from tests.servers.client_auth_mutants import MUTANTS


class Collect:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, CaseFinished):
            self.cases.append(event.result.as_dict())


async def _judge(defect: str, gate: asyncio.Semaphore) -> tuple[str, list[dict[str, Any]]]:
    _, _, name, revision = MUTANTS[defect]
    command = shlex.join([sys.executable, "-m", "tests.servers.client_auth_mutants", defect])
    options = run.ClientOptions(command, (name,), ("http",), (revision,), timeout=30)
    sink = Collect()
    async with gate:
        await run.run_jobs(run.plan(["client"], options), options, Fanout([sink]))
    return defect, sink.cases


async def _all() -> dict[str, list[dict[str, Any]]]:
    gate = asyncio.Semaphore(3)
    return dict(await asyncio.gather(*(_judge(defect, gate) for defect in MUTANTS)))


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict[str, Any]]]:
    load_pack("client")
    return asyncio.run(_all())


def test_every_oauth_row_has_a_mutant() -> None:
    from conformance.model.requirements import table

    rows = {r for r in table() if r.startswith(("CLIENT-AUTH-", "CLIENT-EMA-", "CLIENT-WIF-"))}
    assert rows == {row for _, row, _, _ in MUTANTS.values()}


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    row = MUTANTS[defect][1]
    wanted = "FAIL" if requirement(row).level.startswith("MUST") else "WARN"
    cases = runs[defect]
    hit = [c for c in cases if c["requirement"] == row and c["verdict"] == wanted]
    assert hit, [(c["key"], c["verdict"], c["message"]) for c in cases]
    others = [c for c in cases if c["requirement"] != row and c["verdict"] not in ("PASS", "SKIP")]
    assert not others, [(c["key"], c["verdict"], c["message"]) for c in others]

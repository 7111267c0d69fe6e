"""The client rows beyond the official suite (the `x-` scenarios and the hygiene judged on every
recording): each mutant (tests/servers/client_plus_mutants.py) fails exactly its row, at every
transport and revision its run plays where the row applies (WARN where the revision's level is no MUST),
and the rest of its run PASS or SKIP. The reference client passing these rows is test_client_pack.py's
`test_reference_passes_every_row` (it plays every scenario of the pack).

Every run is judged in process, in one event loop shared by the module.
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
from tests.servers.client_plus_mutants import MUTANTS, VARIANTS

OLD, STATEFUL, STATELESS = "2024-11-05", "2025-11-25", "2026-07-28"
ALL = ("http", "sse", "stdio")
BOTH = (OLD, STATEFUL)
#: defect -> (scenario, transports, revisions) its run plays.
PLAYED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "reused-ids": ("tools_call", ALL, BOTH),
    "json-only-accept": ("tools_call", ("http",), (STATEFUL, STATELESS)),
    "stdio-noise": ("tools_call", ("stdio",), (STATEFUL, STATELESS)),
    "cancels-initialize": ("x-ping", ALL, BOTH),
    "undeclared-roots-change": ("x-features", ALL, BOTH),
    "ping-error": ("x-ping", ALL, BOTH),
    "eager-request": ("x-init-order", ALL, BOTH),
    "eager-initialized": ("x-init-order", ALL, BOTH),
    "keeps-session-id": ("x-session-expired", ("http",), (STATEFUL,)),
    "gives-up-on-404": ("x-session-expired", ("http",), ("2025-03-26", STATEFUL)),
    "cancels-unknown": ("x-cancel", ALL, BOTH),
    "fraction-token": ("x-cancel", ALL, BOTH),
    "sampling-no-model": ("x-features", ALL, BOTH),
    # over stdio the same answer is a line that is no JSON-RPC message: CLIENT-HYG-003's (test below)
    "sampling-no-result": ("x-features", ("http",), (STATEFUL,)),
    "https-root": ("x-features", ALL, BOTH),
    "form-action-ok": ("x-features", ("http", "stdio"), (STATEFUL,)),
    "url-no-action": ("x-features", ("http", "stdio"), (STATEFUL,)),
    "ignores-list-changed": ("x-list-changed", ALL, BOTH),
    "task-without-id": ("x-tasks", ("http", "stdio"), (STATEFUL,)),
    "signals-first": ("x-ping", ("stdio",), BOTH),
    "no-resume": ("x-get-resume", ("http",), ("2025-03-26", STATEFUL)),
    "get-no-session-id": ("x-get-resume", ("http",), ("2025-03-26", STATEFUL)),
    "get-no-version": ("x-get-resume", ("http",), (STATEFUL,)),
    # no defect: a sampling request the user declined is refused with an error (SKIP, never PASS)
    "refuses-sampling": ("x-features", ("http", "stdio"), (STATEFUL,)),
}
MUST_LEVELS = {"MUST", "MUST NOT", "MUST (schema)"}


class Collect:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, CaseFinished):
            self.cases.append(event.result.as_dict())


async def _mutant(defect: str) -> list[dict[str, Any]]:
    scenario, transports, revisions = PLAYED[defect]
    command = shlex.join([sys.executable, "-m", "tests.servers.client_plus_mutants", defect])
    options = run.ClientOptions(command, (scenario,), transports, revisions, jobs=2, timeout=15)
    sink = Collect()
    await run.run_jobs(run.plan(["client"], options), options, Fanout([sink]))
    return sink.cases


async def _all() -> dict[str, list[dict[str, Any]]]:
    gate = asyncio.Semaphore(2)

    async def one(defect: str) -> tuple[str, list[dict[str, Any]]]:
        async with gate:
            return defect, await _mutant(defect)

    return dict(await asyncio.gather(*(one(defect) for defect in PLAYED)))


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict[str, Any]]]:
    load_pack("client")
    return asyncio.run(_all())


def test_every_mutant_is_played() -> None:
    assert set(PLAYED) == set(MUTANTS) | set(VARIANTS)


def test_an_answer_without_result_over_stdio_is_one_verdict() -> None:
    """Over stdio, an answer with neither result nor error is no JSON-RPC message, which CLIENT-HYG-003
    judges; CLIENT-FEAT-001 SKIPs saying so rather than failing the same defect twice."""
    load_pack("client")
    command = shlex.join([sys.executable, "-m", "tests.servers.client_plus_mutants", "sampling-no-result"])
    options = run.ClientOptions(command, ("x-features",), ("stdio",), (STATEFUL,), jobs=1, timeout=15)
    sink = Collect()
    asyncio.run(run.run_jobs(run.plan(["client"], options), options, Fanout([sink])))
    amiss = {(c["requirement"], c["verdict"]) for c in sink.cases if c["verdict"] not in ("PASS", "SKIP")}
    sampling = [c for c in sink.cases if c["requirement"] == "CLIENT-FEAT-001"]
    assert amiss == {("CLIENT-HYG-003", "FAIL")}
    assert sampling and all("CLIENT-HYG-003 judges it" in c["message"] for c in sampling)


def test_a_refused_sampling_request_is_skip_not_pass(runs: dict[str, list[dict[str, Any]]]) -> None:
    """A client that declared sampling and refused the request with an error of its own (the user
    declined) had no result judged: CLIENT-FEAT-001 is SKIP saying so, and nothing else is amiss."""
    cases = runs["refuses-sampling"]
    sampling = [c for c in cases if c["requirement"] == "CLIENT-FEAT-001"]
    assert sampling and all(c["verdict"] == "SKIP" and "refused" in c["message"] for c in sampling)
    assert {c["verdict"] for c in cases} <= {"PASS", "SKIP"}


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    row = MUTANTS[defect][1]
    cases = runs[defect]
    mine = [c for c in cases if c["requirement"] == row]
    assert mine, [(c["key"], c["verdict"]) for c in cases]
    for case in mine:
        level = requirement(row).at(case["revision"]).level
        wanted = "FAIL" if level in MUST_LEVELS else "WARN"
        assert case["verdict"] == wanted, (case["key"], case["verdict"], case["message"])
    _, transports, _ = PLAYED[defect]
    assert {c["transport"] for c in mine} == set(transports)
    others = [c for c in cases if c["requirement"] != row and c["verdict"] not in ("PASS", "SKIP")]
    assert not others, [(c["key"], c["verdict"], c["message"]) for c in others]

"""Helpers for the UWMD tests: targets for the reference and its mutants, runs, and verdict summaries.

Every target gets its own state file in a pytest temporary folder, shared by the server's processes and
its fixture controller, exactly as the embedded default arranges it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance import api
from conformance.engine.checks import Check, load_suite
from conformance.engine.context import RunOptions
from conformance.targets import Target

PY = sys.executable
SUITE = "uwmd"
MODERN = "2026-07-28"
REFERENCE = (PY, "-m", "conformance.reference.uwmd_server")
CONTROLLER = (PY, "-m", "conformance.reference.uwmd_controller")
MUTANTS = (PY, "-m", "tests.servers.uwmd_mutants")
#: The checks that cost more than the rest together: racer processes, second-principal sessions, the
#: one-second wait of CONC-007. A mutant run includes them only when its defect is about them.
COSTLY = (
    "uwmd.conc.race-2",
    "uwmd.conc.race-8",
    "uwmd.conc.digest-stable",
    "uwmd.sec.deal-authz",
    "uwmd.sec.representation-authz",
    "uwmd.sec.link-replay",
)


def target(
    db: Path,
    *,
    kind: str = "stdio",
    defect: str | None = None,
    controller: bool = True,
    hooks: Iterable[str] | None = None,
) -> Target:
    """The reference (or a mutant) over stdio or HTTP, with its controller unless `controller` is False."""
    server = (*MUTANTS, "--defect", defect) if defect else REFERENCE
    settings: dict[str, Any] = {}
    if controller:
        if hooks is not None:
            command = [*MUTANTS, "--controller", "--hooks", ",".join(hooks), "--db", str(db)]
        elif defect:
            command = [*MUTANTS, "--defect", defect, "--controller", "--db", str(db)]
        else:
            command = [*CONTROLLER, "--db", str(db)]
        settings["controller"] = {"command": command}
    label = f"uwmd {defect or 'reference'} ({kind})"
    if kind == "stdio":
        return Target(kind="stdio", argv=(*server, "--db", str(db)), settings=settings, label=label)
    return Target(
        kind="http",
        launch=(*server, "--http", "--port", "0", "--db", str(db)),
        settings=settings,
        label=label,
    )


def checks(only: Iterable[str] | None = None, without: Iterable[str] = ()) -> list[Check]:
    chosen = load_suite(SUITE)
    if only is not None:
        wanted = set(only)
        unknown = wanted - {c.id for c in chosen}
        assert not unknown, f"unknown check ids {unknown}"
        chosen = [c for c in chosen if c.id in wanted]
    skipped = set(without)
    return [c for c in chosen if c.id not in skipped]


def run(
    targets: list[Target], selected: list[Check] | None = None, *, protocol: str = MODERN
) -> dict[str, Any]:
    """Run UWMD checks against the targets; the canonical report."""
    selected = checks() if selected is None else selected
    plan = [(t, selected) for t in targets]
    builder = api.new_builder(plan)
    asyncio.run(api.run_plan_async(plan, RunOptions(timeout=10.0, protocol=protocol), builder))
    return api.finish(builder)


def run_many(
    plans: dict[str, tuple[list[Target], list[Check]]], *, parallel: int = 2, protocol: str = MODERN
) -> dict[str, dict[str, Any]]:
    """Run independent plans (each with its own state files) `parallel` at a time; reports by key."""

    async def all_plans() -> dict[str, dict[str, Any]]:
        gate = asyncio.Semaphore(parallel)

        async def one(key: str, targets: list[Target], selected: list[Check]) -> tuple[str, dict[str, Any]]:
            async with gate:
                plan = [(t, selected) for t in targets]
                builder = api.new_builder(plan)
                await api.run_plan_async(plan, RunOptions(timeout=10.0, protocol=protocol), builder)
                return key, api.finish(builder)

        return dict(await asyncio.gather(*(one(k, t, c) for k, (t, c) in plans.items())))

    return asyncio.run(all_plans())


def non_pass(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"}


def cases(report: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return [c for c in report["cases"] if c["check"] == check_id]

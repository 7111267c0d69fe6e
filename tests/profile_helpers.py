"""Helpers shared by the stateful profile tests (MAP review, UW Markdown): targets, runs, summaries.

Both profiles have the same shape: an SDK-built reference server keeping its state in a file, a
fixture controller on the same file, and a mutants module with `--defect NAME` (and `--controller
--hooks ...`). Every target gets its own state file in a pytest temporary folder, shared by the
server's processes and its fixture controller, exactly as the embedded default arranges it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance import api
from conformance.engine.checks import Check, load_suite
from conformance.engine.context import RunOptions
from conformance.targets import Target

PY = sys.executable
MODERN = "2026-07-28"


@dataclass(frozen=True)
class StatefulProfile:
    """One profile's suite and its three programs: reference server, fixture controller, mutants."""

    suite: str
    reference: str
    controller: str
    mutants: str
    label: str

    @property
    def reference_argv(self) -> tuple[str, ...]:
        return (PY, "-m", self.reference)

    @property
    def controller_argv(self) -> tuple[str, ...]:
        return (PY, "-m", self.controller)

    @property
    def mutants_argv(self) -> tuple[str, ...]:
        return (PY, "-m", self.mutants)

    def target(
        self,
        db: Path,
        *,
        kind: str = "stdio",
        defect: str | None = None,
        controller: bool = True,
        hooks: Iterable[str] | None = None,
    ) -> Target:
        """The reference (or a mutant) over stdio or HTTP, with its controller unless told otherwise."""
        mutants = self.mutants_argv
        server = (*mutants, "--defect", defect) if defect else self.reference_argv
        settings: dict[str, Any] = {}
        if controller:
            if hooks is not None:
                command = [*mutants, "--controller", "--hooks", ",".join(hooks), "--db", str(db)]
            elif defect:
                command = [*mutants, "--defect", defect, "--controller", "--db", str(db)]
            else:
                command = [*self.controller_argv, "--db", str(db)]
            settings["controller"] = {"command": command}
        label = f"{self.label} {defect or 'reference'} ({kind})"
        if kind == "stdio":
            return Target(kind="stdio", argv=(*server, "--db", str(db)), settings=settings, label=label)
        return Target(
            kind="http",
            launch=(*server, "--http", "--port", "0", "--db", str(db)),
            settings=settings,
            label=label,
        )

    def checks(self, only: Iterable[str] | None = None, without: Iterable[str] = ()) -> list[Check]:
        """The suite's checks, narrowed to `only` (ids that must exist) and without `without`."""
        chosen = load_suite(self.suite)
        if only is not None:
            wanted = set(only)
            unknown = wanted - {c.id for c in chosen}
            assert not unknown, f"unknown check ids {unknown}"
            chosen = [c for c in chosen if c.id in wanted]
        skipped = set(without)
        return [c for c in chosen if c.id not in skipped]

    def run(
        self,
        targets: list[Target],
        selected: list[Check] | None = None,
        *,
        protocol: str = MODERN,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        """Run the suite's checks (or `selected`) against the targets; the canonical report."""
        plan = [(t, self.checks() if selected is None else selected) for t in targets]
        builder = api.new_builder(plan)
        asyncio.run(api.run_plan_async(plan, RunOptions(timeout=timeout, protocol=protocol), builder))
        return api.finish(builder)

    @staticmethod
    def run_many(
        plans: dict[str, tuple[list[Target], list[Check]]], *, parallel: int = 2, protocol: str = MODERN
    ) -> dict[str, dict[str, Any]]:
        """Run independent plans (each its own targets and state files) `parallel` at a time; reports by key.

        Mutant runs spend most of their time waiting on server processes, so two at a time halve the
        wall time on a 2-core machine without changing any verdict: each plan has its own state file.
        """

        async def all_plans() -> dict[str, dict[str, Any]]:
            gate = asyncio.Semaphore(parallel)

            async def one(
                key: str, targets: list[Target], selected: list[Check]
            ) -> tuple[str, dict[str, Any]]:
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

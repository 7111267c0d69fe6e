"""Helpers shared by the stateful profile tests (MAP review, UW Markdown): targets, runs, summaries.

Both profiles have the same shape: an SDK-built reference server keeping its state in a file, a
fixture controller on the same file, and a mutants module with `--defect NAME` (and `--controller
--hooks ...`). Every target gets its own state file in a pytest temporary folder, shared by the
server's processes and its fixture controller, exactly as the embedded default arranges it.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.checks import Check, load_pack
from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.model.targets import Target
from tests.conftest import server_argv

PY = sys.executable
MODERN = "2026-07-28"
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class StatefulProfile:
    """One profile's suite and its three programs: reference server, fixture controller, mutants."""

    suite: str
    reference: str
    controller: str
    mutants: str
    label: str

    @classmethod
    def of(cls, suite: str, label: str) -> StatefulProfile:
        """The profile whose programs follow the project's naming: `conformance_reference.<label>_server`
        and `_controller`, and `tests.servers.<label>_mutants`."""
        return cls(
            suite,
            f"conformance_reference.{label}_server",
            f"conformance_reference.{label}_controller",
            f"tests.servers.{label}_mutants",
            label,
        )

    @property
    def reference_argv(self) -> tuple[str, ...]:
        return tuple(server_argv(self.reference))

    @property
    def controller_argv(self) -> tuple[str, ...]:
        return tuple(server_argv(self.controller))

    @property
    def mutants_argv(self) -> tuple[str, ...]:
        return tuple(server_argv(self.mutants))

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
        chosen = load_pack(self.suite)
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
        strict: bool = False,
    ) -> dict[str, Any]:
        """Run the suite's checks (or `selected`) against the targets; the canonical report."""
        plan = [(t, self.checks() if selected is None else selected) for t in targets]
        builder = api.new_builder(plan)
        options = RunOptions(timeout=timeout, protocol=protocol, strict=strict)
        asyncio.run(api.run_plan_async(plan, options, builder))
        return api.finish(builder)

    def mutant_reports(
        self,
        request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory,
        test_file: str,
        expected: Iterable[str],
        selection: Callable[[str], list[Check]],
        *,
        parallel: int = 2,
    ) -> dict[str, dict[str, Any]]:
        """The reports of the mutants (`defect` parameters of `test_file`) this session selected among
        `expected`, each over its own state file with the checks `selection` names for it: those of the
        fixture's group (`request.param`, see `mutant_params`) when it has one, else all of them."""
        known = set(expected)
        group = getattr(request, "param", None)
        plans = {
            defect: (
                [self.target(tmp_path_factory.mktemp(defect) / "state.db", defect=defect)],
                selection(defect),
            )
            for defect in selected_params(request, test_file, "defect")
            if defect in known and (group is None or mutant_group(defect) == group)
        }
        return self.run_many(plans, parallel=parallel)

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


#: Groups the mutants of one module are run in. One module fixture running every mutant would hold one
#: xdist worker for minutes while the others idle; a group each, chosen by a stable hash of the defect's
#: name (adding a defect moves no other), spreads them (tests/conftest.py groups a parametrised module
#: fixture's users by parameter) and still runs each mutant once.
MUTANT_GROUPS = 6


def mutant_group(defect: str) -> int:
    """The group of a defect: stable across runs, machines and Python's hash seed."""
    return zlib.crc32(defect.encode("utf-8")) % MUTANT_GROUPS


def mutant_params(defects: Iterable[str], fixture: str = "reports") -> Any:
    """`@pytest.mark.parametrize` over `defect`, each with its group as the indirect parameter of the
    module fixture `fixture` (which calls `mutant_reports`); the test ids stay the defect names."""
    return pytest.mark.parametrize(
        ("defect", fixture),
        [pytest.param(d, mutant_group(d), id=d) for d in sorted(defects)],
        indirect=[fixture],
        scope="module",
    )


def non_pass(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"}


def cases(report: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return [c for c in report["cases"] if c["check"] == check_id]


#: The revisions the profiles judge (they bind structured tool output, 2025-06-18 on), newest first.
PROFILE_REVISIONS = ["2026-07-28", "2025-11-25", "2025-06-18"]


def assert_reference_passes(
    report: dict[str, Any], explained: Callable[[dict[str, Any]], bool] = lambda case: False
) -> None:
    """A profile's reference, over stdio and HTTP, in the revisions the profile judges: every case PASS
    but those `explained` says are expected."""
    assert [t["transport"] for t in report["targets"]] == ["stdio", "http"]
    for info in report["targets"]:
        # The SDK speaks 2025-03-26 and (over stdio) 2024-11-05 too; the profile judges 2025-06-18 on.
        assert info["revisions_spoken"][:3] == PROFILE_REVISIONS
    assert {c["revision"] for c in report["cases"]} <= set(PROFILE_REVISIONS)
    unexplained = [
        (c["check"], c["transport"], c["revision"], c["verdict"], c["message"])
        for c in report["cases"]
        if c["verdict"] != "PASS" and not explained(c)
    ]
    assert unexplained == []


def selected_params(request: pytest.FixtureRequest, test_file: str, name: str) -> list[str]:
    """The values of the parameter `name` that this session selected in `test_file` (after -k and
    friends), sorted: what a module-scoped fixture must run, and no more."""
    return sorted(
        {
            item.callspec.params[name]
            for item in request.session.items
            if item.path == Path(test_file) and hasattr(item, "callspec") and name in item.callspec.params
        }
    )


def plain_target() -> Target:
    """The base reference server: a server that shows no profile at all."""
    return Target(kind="stdio", argv=tuple(server_argv("conformance_reference.base_server")), label="base")


def assert_profile_row_blocks_the_rest(report: dict[str, Any], row: str, verdict: str = "FAIL") -> None:
    """A server that does not show the profile: one `verdict` on its profile row `row` (a check id: FAIL
    where the row is MUST-like, WARN where it is implied), every other case SKIP blocked by that row's
    case; exit 1 on a FAIL, 0 on a WARN."""
    assert (row, verdict) in {(c["check"], c["verdict"]) for c in report["cases"]}
    others = [c for c in report["cases"] if c["check"] != row]
    assert others and all(c["verdict"] == "SKIP" for c in others)
    assert all(f"blocked by {row}[" in c["message"] for c in others)
    assert all(c["blocked_by"] == f"{row}[{c['transport']}@{c['revision']}]" for c in others)
    assert report["footer"]["exit_code"] == (1 if verdict == "FAIL" else 0)


@contextlib.contextmanager
def python_module(*argv: str) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m <argv>` from the repository with piped stdio, for raw wire tests; on exit stdin is
    closed (EOF ends a reference server) and the process is waited for, killed if it lingers."""
    proc = subprocess.Popen(
        [PY, "-m", *argv], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        yield proc
    finally:
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def assert_http_binds_loopback_only(module: str) -> None:
    """A reference server asked to serve HTTP on a non-loopback address refuses to start, saying why."""
    proc = subprocess.run(
        [PY, "-m", module, "--http", "--host", "0.0.0.0"], cwd=REPO, capture_output=True, timeout=30
    )
    assert proc.returncode != 0 and b"loopback" in proc.stderr

"""Shared helpers for the harness's own tests: run suites in-process and summarise verdicts.

The suite runs under pytest-xdist (`python -m pytest -n auto`, with `--dist loadgroup` from pyproject):
each worker has its own temporary folders (`tmp_path`, `tmp_path_factory`), every server listens on an
ephemeral port, and what several workers may share (an npm install, an apt-get install) is made under
`shared_install`'s file lock, once. A test that uses a module-scoped fixture of its own module is sent
to one worker with the rest of that module's users (see `pytest_collection_modifyitems`), so a costly
module fixture (a run of a server shared by several assertions) runs once, not once per worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from conformance.engine.context import RunOptions
from conformance.front import api
from conformance.infra import prefork

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
#: Seconds per request in `run()`: generous, since the verdicts of a server that answers do not depend on
#: it and a loaded machine (xdist workers, CPU hogs, other jobs) can stall an answer for seconds. A test
#: whose point is a timeout firing passes a small one of its own.
REQUEST_TIMEOUT = 30.0
#: Seconds a started server may take to give its first answer in `run()` (a Python import under load).
START_TIMEOUT = 60.0


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers more than there are cores. Most of this suite's wall time is waiting, not
    computing (start budgets and hangs waited out, real servers from npm starting, floods timed out): with
    one worker per core the two cores of a small CI machine stay half idle (load average 1.8 of 2)."""
    return (os.cpu_count() or 1) + 2


def budget(seconds: float) -> float:
    """A wall-clock bound of `seconds` on an idle machine, stretched by the machine's load: the 1-minute
    load average per CPU (at least 1), times `MCP_CONFORMANCE_TIME_SCALE` (default 1). For asserting a
    run is bounded (not waiting out a hang); never a measure of speed."""
    per_cpu = os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, "getloadavg") else 1.0
    scale = float(os.environ.get("MCP_CONFORMANCE_TIME_SCALE") or 1)
    return seconds * max(1.0, per_cpu) * scale


#: One fork server per test process (conformance_reference/forkserver.py, started by
#: conformance.infra.prefork,
#: as the harness starts it for the embedded default): the servers built on the `mcp` SDK start as forks
#: of a process that imported it once, in milliseconds rather than most of a second. The `cli` runs the
#: tests start inherit its socket's name and use it too.
FORKSERVER = "conformance_reference.forkserver"
FORKS = prefork.server(FORKSERVER)
#: The test servers of process handling (strays, floods, bombs, chaos) start directly, never forked.
SDK_SERVERS = (
    "conformance_reference.",
    "tests.servers.base_",
    "tests.servers.text_errors_server",
    "tests.servers.mcpserver_app",
)


def server_argv(module: str, *args: str) -> list[str]:
    """The argv of `python -m module args`: forked when `module` is an SDK server, else direct."""
    if module.startswith(SDK_SERVERS) or module.endswith("_mutants"):
        FORKS.ensure()
        return prefork.spawn_command(FORKSERVER, module, *args)
    return [PY, "-m", module, *args]


def stdio(module: str, *args: str) -> str:
    """A stdio target spec running `python -m module args` from the repo root (see `server_argv`)."""
    return "stdio:" + shlex.join(server_argv(module, *args))


def run(
    servers: list[Any] | None,
    suites: tuple[str, ...] = ("base",),
    *,
    select: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The canonical report of `suites` against `servers`, or against each suite's embedded default
    (its reference servers, forked by the harness) when `servers` is None."""
    options.setdefault("timeout", REQUEST_TIMEOUT)
    options.setdefault("start_timeout", START_TIMEOUT)
    checks = api.select_checks(suites, select)
    plan = api.build_plan(servers, suites, checks)
    builder = api.new_builder(plan)
    asyncio.run(api.run_plan_async(plan, RunOptions(**options), builder))
    return api.finish(builder)


def cli(
    *args: str, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m conformance ARGS` from the repo root, as a user runs it (bounded by `timeout`), with
    `env` added to the environment."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **(env or {}),
    }
    return subprocess.run(
        [PY, "-m", "conformance", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


#: Checks of features the raw and legacy test servers do not offer (prompts, completion, logging): they
#: SKIP there, saying why, and the tests of other areas do not restate those SKIPs.
#: The tasks checks of a server that declares tasks (BASE-TASK-002 to -012): they SKIP, saying why, on a
#: server that takes no task-augmented call; `tests/packs/base/test_base_tasks.py` judges them.
TASK_SERVED = tuple(
    f"base.tasks.{name}"
    for name in (
        "create-result",
        "get-shape",
        "terminal-final",
        "result-underlying",
        "result-related-task",
        "cancel-terminal",
        "cancel-working",
        "unknown-id",
        "list",
        "forbidden-refused",
        "required-plain",
    )
)
UNOFFERED = ("base.prompts.", "base.completion.", "base.logging.", *TASK_SERVED)
#: Checks that SKIP on every server that asks its client for no input (BASE-INPUT-*: nothing of that
#: kind was asked): the tests of other subjects leave those SKIPs out;
#: `tests/packs/base/test_base_input.py` and `tests/packs/base/test_base_reference.py` see them
#: (`non_pass(report, input_skips=True)`).
INPUT_CHECKS = ("base.input.",)


#: Rows that SKIP on a server that declares every feature they probe (the reference servers): nothing
#: is undeclared, so nothing can be judged (their message says so; a SKIP for another reason, blocked
#: by a broken transport say, is kept); `tests/packs/base/test_base_surface.py` judges them on its mutants.
DECLARES_ALL = (
    "base.cap.undeclared-not-served",
    "base.cap.undeclared-answers-32601",
    "base.cap.notifications-declared",
    "base.tasks.undeclared-augmentation",
    "base.tasks.undeclared-methods",
)


def non_pass(
    report: dict[str, Any], *, unoffered: bool = False, input_skips: bool = False
) -> set[tuple[str, str]]:
    """The (check, verdict) pairs of every case that did not PASS, across revisions and targets; the
    SKIPs of UNOFFERED checks only when `unoffered`, those of INPUT_CHECKS only when `input_skips` (the
    tests of those checks ask for them)."""
    return {
        (c["check"], c["verdict"])
        for c in report["cases"]
        if c["verdict"] != "PASS"
        and (unoffered or c["verdict"] != "SKIP" or not c["check"].startswith(UNOFFERED))
        and not (
            c["verdict"] == "SKIP"
            and c["check"].startswith(DECLARES_ALL)
            and "declares every" in c["message"]
        )
        and (input_skips or c["verdict"] != "SKIP" or not c["check"].startswith(INPUT_CHECKS))
    }


#: Checks of the resources area that need a feature a small test server does not offer (a blob, a
#: template, resources.subscribe, a tool that reports progress): there they SKIP saying so, alike for
#: every defect such a server plants. `judged_non_pass` leaves these SKIPs out.
UNOFFERED_RESOURCES = {
    (f"base.{check}", "SKIP")
    for check in (
        "resources.contents-valid",
        "resources.blob-base64",
        "resources.template-syntax",
        "subscribe.answered",
        "subscribe.unsubscribe-answered",
        "subscribe.updated-shape",
        "subscribe.only-subscribed",
        "listen.updated-shape",
        "listen.acknowledged-first",
        "listen.only-requested",
        "listen.tagged",
        "progress.token-match",
        "progress.increases",
        "progress.stops",
        "progress.shape",
        "cancel.no-response",
    )
}


def other_areas_left_out(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """(check, verdict) pairs without the SKIPs of features a small test server does not offer
    (prompts, completion, logging, blobs, subscriptions, progress) or of input it never asks for:
    each area's own tests judge those, the tests of other areas leave them out."""
    return {
        (c, v)
        for c, v in pairs
        if not (v == "SKIP" and (c.startswith(UNOFFERED) or c.startswith(INPUT_CHECKS)))
    } - UNOFFERED_RESOURCES


def judged_non_pass(report: dict[str, Any]) -> set[tuple[str, str]]:
    """`non_pass` without the SKIPs of features a small test server does not offer (`UNOFFERED` and
    `UNOFFERED_RESOURCES`, and the input checks' when nothing asked)."""
    return non_pass(report) - UNOFFERED_RESOURCES


@contextlib.contextmanager
def shared_install(folder: Path, timeout: float = 1800) -> Iterator[Path]:
    """Hold `folder`'s lock (made if missing) while installing into it: xdist workers, and pytest runs
    side by side, that need the same install wait for the first one instead of installing over it."""
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.with_name(folder.name + ".lock")), timeout=timeout):
        yield folder


def shared_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder shared by every xdist worker of this run (the run's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first; tests using a module-scoped fixture of their own module go to one xdist
    worker together (`--dist loadgroup`), so that fixture runs once per session; every other test is
    spread freely.

    A parametrised module fixture is one fixture per parameter: its users are grouped by the parameter
    too (`module:fixture=param`), so a costly fixture split into parameters (the mutant runs of
    `tests/profile_helpers.py`, `mutant_params`) spreads over the workers, each part still run once."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        module = getattr(item, "module", None)
        if info is None or module is None or item.get_closest_marker("xdist_group"):
            continue
        shared = [
            fixturedef.argname
            for fixturedefs in info.name2fixturedefs.values()
            for fixturedef in fixturedefs
            if fixturedef.scope in ("module", "class")
            and getattr(fixturedef.func, "__module__", None) == module.__name__
        ]
        if shared:
            params = getattr(getattr(item, "callspec", None), "params", {})
            parts = [f"{name}={params[name]}" for name in sorted(set(shared)) if name in params]
            # No brackets: xdist takes the text after the last `@` as the group only past the last `]`.
            group = module.__name__ + "".join(f":{part}" for part in parts)
            item.add_marker(pytest.mark.xdist_group(group))
    # The slow tests first (a stable sort: each module keeps its order): the workers start on the long
    # runs and the short tests fill in around them, rather than one long run starting last and the
    # others idle while it ends (every worker collects the same order, as xdist requires).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker, fail at once where `--dist loadgroup` would silently not group: xdist marks a
    grouped test by suffixing its node id (`@group`), which pytest 9.2 no longer lets it do
    (pytest-xdist issue 1386; the test extra pins pytest below 9.2 until a fix). Ungrouped, every worker
    would run every costly module fixture itself: the same tests pass, in twice the time or more."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not session.config.getvalue("loadgroup"):
        return
    ungrouped = [
        i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid
    ]
    if ungrouped:
        raise RuntimeError(
            f"pytest-xdist could not group {len(ungrouped)} tests (e.g. {ungrouped[0]}) with pytest "
            f"{pytest.__version__}: install the test extra's pytest (see pyproject.toml)"
        )


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Targets like `python -m tests.servers...` resolve from the repo root."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


@pytest.fixture
def shared_dir() -> Path:
    """The reference material beside the checkout, used only as an independent oracle."""
    path = REPO.parent / "shared"
    if not path.is_dir():
        pytest.skip("../shared is not present")
    return path


@pytest.fixture(scope="session")
def embedded_default(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`run(None)`: the base suite against the embedded default, run once per session however many
    tests and xdist workers ask for it (test_base_reference judges it, test_base_load compares a loaded
    run with it). The first worker runs it under a file lock and leaves the report as JSON; the others
    wait for that and read it. Each test gets its own copy."""
    with shared_install(shared_tmp(tmp_path_factory) / "embedded-default") as folder:
        path = folder / "report.json"
        if not path.is_file():
            path.write_text(json.dumps(run(None)), encoding="utf-8")
        report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Debian's headless Chromium, installed with apt-get when missing; the test skips, saying why,
    when it can be neither found nor installed."""
    from tests.browser import find_chromium

    # One apt-get at a time: a second xdist worker waits for the first install, then finds the browser.
    with shared_install(shared_tmp(tmp_path_factory) / "chromium-install"):
        path, why = find_chromium()
    if path is None:
        pytest.skip(f"no Chromium for the browser test: {why}")
    return path

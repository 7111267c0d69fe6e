"""Shared helpers for the harness's own tests: run suites in-process and summarise verdicts."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import api
from conformance.engine.context import RunOptions

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable


def stdio(module: str, *args: str) -> str:
    """A stdio target spec running `python -m module args` from the repo root."""
    return "stdio:" + shlex.join([PY, "-m", module, *args])


def run(
    servers: list[Any] | None,
    suites: tuple[str, ...] = ("base",),
    *,
    select: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    options.setdefault("timeout", 5.0)
    options.setdefault("start_timeout", 30.0)
    return api.run_report(servers, suites, select=select, options=RunOptions(**options))


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`python -m conformance ARGS` from the repo root, as a user runs it (bounded by `timeout`)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [PY, "-m", "conformance", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def non_pass(report: dict[str, Any]) -> set[tuple[str, str]]:
    """The (check, verdict) pairs of every case that did not PASS, across revisions and targets."""
    return {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"}


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
def chromium() -> str:
    """Debian's headless Chromium, installed with apt-get when missing; the test skips, saying why,
    when it can be neither found nor installed."""
    from tests.browser import find_chromium

    path, why = find_chromium()
    if path is None:
        pytest.skip(f"no Chromium for the browser test: {why}")
    return path

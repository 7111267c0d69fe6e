"""The pytest plugin against the CLI on the same cases, beside pytest's own cost for as many items.

Why: issue 32 found `pytest --mcp-server` taking 21.6 s where `mcp-conformance run` took 12.7 s for
the same cases. The plugin runs the CLI's own steps once, so what it may add is pytest itself: its
start, and its per-item protocol (setup, call, teardown, reports, captured warnings). That cost is
measured in the same run: pytest on a generated file of as many trivial items, with the same outcomes
(passed, warned, skipped, failed), minus a bare `python -c pass`. The target: plugin <= CLI + that.

Contenders run in rotating order round after round (`benchlib.alternate`), every figure is a median,
and the verdict is a ratio of figures measured side by side, never a fixed number of seconds. The
plugin runs in an empty folder (nothing else to collect), each contender writes its report views.

    python bench/pytest_plugin.py [--server SPEC] [--select WORDS] [--rounds 3]

Without `--server`: the repository's raw test server over stdio (with a looping cursor: WARNs and
SKIPs), judged by the default packs, as `mcp-conformance run --server` does. The issue's figures were
of `--server stdio:mcp-server-time` (PyPI, in the test extras).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchlib import PYTHON, REPO_DIR, Judged, PartResult, alternate, heading, median, run_bounded, yes_no

DEFAULT_SERVER = f"stdio:{PYTHON} -m tests.servers.raw_server --defect cursor-loop"
LIMIT_S = 600.0
#: Shared machines are noisy: a plugin within this factor of the allowance still meets it.
TOLERANCE = 1.05

#: One trivial pytest item per case, with the case's outcome (a WARN passes with a warning).
ITEM = {
    "PASS": "def test_{n}():\n    pass\n",
    "WARN": "def test_{n}():\n    warnings.warn(UserWarning('w{n}'))\n",
    "SKIP": "def test_{n}():\n    pytest.skip('s{n}')\n",
    "FAIL": "def test_{n}():\n    assert False, 'f{n}'\n",
}


def _env() -> dict[str, str]:
    """The repository on the path (the default server is its test module), nothing else changed."""
    path = os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _verdicts(folder: Path) -> list[tuple[str, str]]:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return [(case["key"], case["verdict"]) for case in report["cases"]]


class Contenders:
    """The commands timed, each in folders of its own under one temporary folder."""

    def __init__(self, root: Path, server: str, select: str | None) -> None:
        self.root, self.server, self.select = root, server, select
        self.runs = 0
        self.last: dict[str, list[tuple[str, str]]] = {}

    def _folder(self, name: str) -> Path:
        self.runs += 1
        folder = self.root / f"{name}-{self.runs}"
        folder.mkdir()
        return folder

    def cli(self) -> float:
        out = self._folder("cli")
        argv = [PYTHON, "-m", "conformance", "run", "--server", self.server, "--quiet"]
        argv += ["-k", self.select] if self.select else []
        ran = run_bounded([*argv, "--report-dir", str(out)], LIMIT_S, env=_env(), cwd=REPO_DIR)
        if ran.timed_out or not (out / "report.json").exists():
            raise RuntimeError(f"the CLI run failed (exit {ran.returncode}): {ran.stderr[-500:]}")
        self.last["cli"] = _verdicts(out)
        return ran.wall

    def plugin(self) -> float:
        here = self._folder("plugin")
        argv = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(here)]
        argv += ["--mcp-server", self.server, "--mcp-report-dir", str(here / "report")]
        argv += ["--mcp-select", self.select] if self.select else []
        ran = run_bounded(argv, LIMIT_S, env=_env(), cwd=here)
        if ran.timed_out or not (here / "report" / "report.json").exists():
            raise RuntimeError(f"the plugin run failed (exit {ran.returncode}): {ran.stdout[-500:]}")
        self.last["plugin"] = _verdicts(here / "report")
        return ran.wall

    def pytest_own(self) -> float:
        """pytest on as many trivial items as the CLI judged cases, with their outcomes."""
        here = self._folder("own")
        counts = Counter(verdict for _, verdict in self.last["cli"])
        body = ["import warnings\n\nimport pytest\n\n"]
        for n, (_, verdict) in enumerate(self.last["cli"]):
            body.append(ITEM.get(verdict, ITEM["FAIL"]).format(n=n) + "\n")
        (here / "test_items.py").write_text("".join(body), encoding="utf-8")
        argv = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(here)]
        ran = run_bounded([*argv, str(here / "test_items.py")], LIMIT_S, env=_env(), cwd=here)
        if ran.timed_out or sum(counts.values()) == 0:
            raise RuntimeError(f"pytest on trivial items failed: {ran.stdout[-500:]}")
        return ran.wall

    def python(self) -> float:
        return run_bounded([PYTHON, "-c", "pass"], 60, env=_env()).wall


def run(rounds: int = 3, server: str = DEFAULT_SERVER, select: str | None = None) -> PartResult:
    part = PartResult("pytest plugin")
    heading(f"pytest plugin vs CLI on the same cases, median of {rounds}: {server}")
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-plugin-bench-") as folder:
        contenders = Contenders(Path(folder), server, select)
        contenders.cli()  # warm: the file cache, and the case list pytest's own items mirror
        times = alternate(
            rounds,
            {
                "cli": contenders.cli,
                "plugin": contenders.plugin,
                "pytest-own": contenders.pytest_own,
                "python": contenders.python,
            },
        )
        same = contenders.last["cli"] == contenders.last["plugin"]
        cases = len(contenders.last["cli"])
    cli, plugin = median(times["cli"]), median(times["plugin"])
    own = max(0.0, median(times["pytest-own"]) - median(times["python"]))
    allowed = cli + own
    print(f"  cases                          {cases} (same keys and verdicts in both: {same})")
    print(f"  mcp-conformance run            {cli:7.2f} s")
    print(f"  pytest --mcp-server            {plugin:7.2f} s  ({plugin / cli:.2f}x the CLI)")
    print(f"  pytest's own cost ({cases} items) {own:7.2f} s  (trivial items minus python -c pass)")
    print(f"  plugin / (CLI + pytest's own)  {plugin / allowed:7.2f}")
    part.judged.append(
        Judged(
            "the plugin is no slower than the CLI on the same cases beyond pytest's own cost",
            f"{plugin:.1f} s vs {cli:.1f} s + {own:.1f} s ({plugin / allowed:.2f}); same cases: {same}",
            same and plugin <= allowed * TOLERANCE,
        )
    )
    return part


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=DEFAULT_SERVER, help="a --server spec (default: %(default)s)")
    parser.add_argument("--select", help="the CLI's -k (the plugin's --mcp-select)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    part = run(args.rounds, args.server, args.select)
    for judged in part.judged:
        print(f"  {yes_no(judged.met):12} {judged.target}: {judged.measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

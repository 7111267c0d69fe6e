"""Views derived from the canonical report alone: terminal summary, Markdown and JUnit XML.

Server-provided text is escaped in every view, so a hostile name or message cannot change one.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.engine.results import BLOCKING, VERDICTS
from conformance.reporting import canonical, html_report, sarif
from conformance.text import readable

ICON = {verdict: verdict for verdict in VERDICTS}
#: Characters XML 1.0 cannot carry at all (not even escaped): a server's control bytes become `\xNN`.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def shown_verdicts(report: dict[str, Any]) -> list[str]:
    """The verdicts a view lists: the five of every run, plus XFAIL and XPASS when a baseline was applied
    or they occur, so a report without a baseline reads exactly as before baselines existed."""
    totals = report["footer"].get("totals", {})
    extra = report["footer"].get("baseline") is not None
    return [v for v in VERDICTS if v not in ("XFAIL", "XPASS") or extra or totals.get(v)]


def _t(text: Any) -> str:
    """One terminal line: a server's escape sequences (colours, cursor moves, title changes) and line
    breaks must not rewrite the summary a user reads, so control characters become `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", readable(text))


def summary_text(report: dict[str, Any], *, limit: int = 60) -> str:
    """The terminal summary: one line per target, each non-PASS case, totals and the verdict."""
    lines = []
    for target in report["targets"]:
        spoken = ", ".join(target.get("revisions_spoken") or []) or "none"
        name = (target.get("server_info") or {}).get("name", "?")
        lines.append(_t(f"target {target['index']}: {target['spec']}  server={name}  revisions={spoken}"))
    shown = 0
    for case in report["cases"]:
        if case["verdict"] == "PASS":
            continue
        if shown < limit:
            first = (case["message"] or "").splitlines()[0][:160] if case["message"] else ""
            lines.append(_t(f"  {case['verdict']:5} {case['key']}  {case['requirement']}  {first}"))
        shown += 1
    if shown > limit:
        lines.append(f"  … and {shown - limit} more non-PASS cases (see the report)")
    totals = report["footer"].get("totals", {})
    counts = "  ".join(f"{v} {totals.get(v, 0)}" for v in shown_verdicts(report))
    blocked = sum(1 for case in report["cases"] if case.get("blocked_by"))
    if blocked:
        counts += f"  ({blocked} of the SKIPs blocked by another case)"
    state = "" if report["footer"].get("complete") else "  (INCOMPLETE: " + report["footer"]["reason"] + ")"
    lines.append(f"{totals.get('cases', 0)} cases: {counts}{state}")
    if canonical.nothing_judged(report):
        lines.append(
            f"nothing was judged: all {len(report['cases'])} cases are SKIP (see their reasons above), "
            "so the run fails"
        )
    base = report["footer"].get("baseline")
    if base and base["unmatched"]:
        lines.append(_t(f"baseline entries matching no case: {', '.join(base['unmatched'])}"))
    return "\n".join(lines)


def _evidence_text(value: Any) -> str:
    """An evidence value as a reader sees it: a string as it is, anything else as JSON (never a
    Python repr: no `b'...'`, no `True` or `None`)."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        return readable(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=readable)


def _md(text: Any) -> str:
    """Escape for a Markdown table cell or line: no HTML, no table breaks, no emphasis, code or links.

    The backslash goes first: otherwise a server's `\\|` would become `\\\\|`, an escaped backslash
    followed by a live pipe that splits the table row.
    """
    out = readable(text).replace("\\", "\\\\")
    out = html.escape(out, quote=False).replace("|", "\\|")
    out = re.sub(r"[\r\n\x00-\x1f\x7f]+", " ", out)
    for ch in "*_`[]()#!~{}":
        out = out.replace(ch, "\\" + ch)
    return out


def markdown(report: dict[str, Any]) -> str:
    head = report["header"]
    totals = report["footer"].get("totals", {})
    out = [
        f"# MCP conformance report {_md(head['run_id'])}",
        "",
        f"Harness {_md(head['harness']['version'])}, suites {_md(', '.join(head.get('suites', [])))}, "
        f"started {_md(head['started'])}, "
        + (
            "complete."
            if report["footer"].get("complete")
            else f"INCOMPLETE ({_md(report['footer']['reason'])})."
        ),
        "",
        "| target | transport | server | revisions spoken |",
        "|---|---|---|---|",
    ]
    for t in report["targets"]:
        info = t.get("server_info") or {}
        server = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        out.append(
            f"| {_md(t['spec'])} | {_md(t['transport'])} | {_md(server)} | "
            f"{_md(', '.join(t.get('revisions_spoken') or []) or 'none')} |"
        )
    columns = [*shown_verdicts(report), "cases"]
    out += [
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        "| " + " | ".join(str(totals.get(k, 0)) for k in columns) + " |",
        "",
    ]
    base = report["footer"].get("baseline")
    if base:
        out += [
            f"Baseline {_md(base['path'])}: {base['entries']} entries; matching no case: "
            f"{_md(', '.join(base['unmatched']) or 'none')}.",
            "",
        ]
    problems = [c for c in report["cases"] if c["verdict"] != "PASS"]
    if problems:
        out += ["## Cases that did not pass", ""]
        for case in problems:
            out.append(f"### {case['verdict']} {_md(case['key'])}")
            out.append("")
            out.append(
                f"Requirement {_md(case['requirement'])} ({_md(case['level'])}): {_md(case['title'])}. "
                f"{_md(case['message'])}"
            )
            if case.get("blocked_by"):
                out.append("")
                out.append(
                    f"Blocked by {_md(case['blocked_by'])}: its verdict left this case nothing to judge."
                )
            if case.get("baseline"):
                b = case["baseline"]
                out.append("")
                out.append(
                    f"Baseline entry {_md(b['entry'])} (the check said {b['verdict']}): {_md(b['reason'])}"
                )
            for key, value in (case.get("evidence") or {}).items():
                out.append(f"- {_md(key)}: {_md(_evidence_text(value)[:600])}")
            out.append("")
    out += ["## All cases", "", "| verdict | case | requirement | ms |", "|---|---|---|---|"]
    for case in report["cases"]:
        out.append(
            f"| {case['verdict']} | {_md(case['key'])} | {_md(case['requirement'])} | "
            f"{case['duration'] * 1000:.0f} |"
        )
    return "\n".join(out) + "\n"


def _x(text: Any) -> str:
    """Text XML 1.0 can carry: ElementTree escapes markup but writes control characters raw, which
    would make the whole file unparseable for the CI system reading it."""
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", readable(text))


def junit_xml(report: dict[str, Any]) -> bytes:
    """JUnit XML: FAIL, ERROR and XPASS are failures or errors; SKIP and XFAIL are skipped (as pytest
    reports an xfail); WARN passes with its detail on system-out."""
    root = ET.Element("testsuites", name=_x(f"mcp-conformance {report['header']['run_id']}"))
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for case in report["cases"]:
        groups[(case["suite"], case["target"])].append(case)
    for (suite, target), cases in groups.items():
        element = ET.SubElement(
            root,
            "testsuite",
            name=_x(f"{suite} (target {target})"),
            tests=str(len(cases)),
            failures=str(sum(c["verdict"] in ("FAIL", "XPASS") for c in cases)),
            errors=str(sum(c["verdict"] == "ERROR" for c in cases)),
            skipped=str(sum(c["verdict"] in ("SKIP", "XFAIL") for c in cases)),
            time=f"{sum(c['duration'] for c in cases):.3f}",
        )
        for case in cases:
            tc = ET.SubElement(
                element,
                "testcase",
                classname=_x(f"{suite}.{case['requirement']}"),
                name=_x(case["key"]),
                time=f"{case['duration']:.3f}",
            )
            detail = _x(_junit_detail(case))
            message = _x(case["message"][:500])
            verdict = case["verdict"]
            if verdict in ("FAIL", "XPASS"):
                ET.SubElement(tc, "failure", message=message, type=verdict).text = detail
            elif verdict == "ERROR":
                ET.SubElement(tc, "error", message=message).text = detail
            elif verdict == "SKIP" and case.get("blocked_by"):
                ET.SubElement(tc, "skipped", message=message, type="blocked").text = _x(
                    f"blocked by {case['blocked_by']}"
                )
            elif verdict == "SKIP":
                ET.SubElement(tc, "skipped", message=message)
            elif verdict == "XFAIL":
                b = case.get("baseline") or {}
                why = _x(f"expected failure (baseline entry {b.get('entry')}: {b.get('reason')})")
                ET.SubElement(tc, "skipped", message=why[:500], type="xfail").text = detail
            elif verdict == "WARN":
                ET.SubElement(tc, "system-out").text = "WARN: " + detail
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _junit_detail(case: dict[str, Any]) -> str:
    parts = [f"{case['requirement']} ({case['level']}): {case['title']}", case["message"]]
    parts += [f"{k}: {_evidence_text(v)[:2000]}" for k, v in (case.get("evidence") or {}).items()]
    return "\n".join(parts)


VIEWS: dict[str, tuple[str, Callable[[dict[str, Any]], str | bytes]]] = {
    "markdown": ("report.md", markdown),
    "junit": ("junit.xml", junit_xml),
    "html": ("report.html", html_report.render),
    "sarif": ("report.sarif", sarif.render),
}


def write_views(report: dict[str, Any], directory: Path) -> list[str]:
    """Write every view; return one line per view that failed (the canonical report is already safe)."""
    failures = []
    for name, (filename, render) in VIEWS.items():
        try:
            data = render(report)
            path = directory / filename
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data, encoding="utf-8")
        except Exception as exc:
            failures.append(f"the {name} view failed: {exc!r}")
    return failures


def blocking(report: dict[str, Any]) -> int:
    return sum(case["verdict"] in BLOCKING for case in report["cases"])

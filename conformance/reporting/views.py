"""Views derived from the canonical report alone: terminal summary, Markdown and JUnit XML.

Server-provided text is escaped in every view, so a hostile name or message cannot change one.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.engine.results import BLOCKING

ICON = {"PASS": "PASS", "FAIL": "FAIL", "WARN": "WARN", "SKIP": "SKIP", "ERROR": "ERROR"}


def summary_text(report: dict[str, Any], *, limit: int = 60) -> str:
    """The terminal summary: one line per target, each non-PASS case, totals and the verdict."""
    lines = []
    for target in report["targets"]:
        spoken = ", ".join(target.get("revisions_spoken") or []) or "none"
        name = (target.get("server_info") or {}).get("name", "?")
        lines.append(f"target {target['index']}: {target['spec']}  server={name}  revisions={spoken}")
    shown = 0
    for case in report["cases"]:
        if case["verdict"] == "PASS":
            continue
        if shown < limit:
            first = (case["message"] or "").splitlines()[0][:160] if case["message"] else ""
            lines.append(f"  {case['verdict']:5} {case['key']}  {case['requirement']}  {first}")
        shown += 1
    if shown > limit:
        lines.append(f"  … and {shown - limit} more non-PASS cases (see the report)")
    totals = report["footer"].get("totals", {})
    counts = "  ".join(f"{v} {totals.get(v, 0)}" for v in ("PASS", "FAIL", "WARN", "SKIP", "ERROR"))
    state = "" if report["footer"].get("complete") else "  (INCOMPLETE: " + report["footer"]["reason"] + ")"
    lines.append(f"{totals.get('cases', 0)} cases: {counts}{state}")
    return "\n".join(lines)


def _md(text: Any) -> str:
    """Escape for a Markdown table cell or line: no HTML, no table breaks, no emphasis or links."""
    out = html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")
    for ch in "*_`[]()#!~":
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
    out += [
        "",
        "| PASS | FAIL | WARN | SKIP | ERROR | cases |",
        "|---|---|---|---|---|---|",
        "| "
        + " | ".join(str(totals.get(k, 0)) for k in ("PASS", "FAIL", "WARN", "SKIP", "ERROR", "cases"))
        + " |",
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
            for key, value in (case.get("evidence") or {}).items():
                out.append(f"- {_md(key)}: {_md(str(value)[:600])}")
            out.append("")
    out += ["## All cases", "", "| verdict | case | requirement | ms |", "|---|---|---|---|"]
    for case in report["cases"]:
        out.append(
            f"| {case['verdict']} | {_md(case['key'])} | {_md(case['requirement'])} | "
            f"{case['duration'] * 1000:.0f} |"
        )
    return "\n".join(out) + "\n"


def junit_xml(report: dict[str, Any]) -> bytes:
    root = ET.Element("testsuites", name=f"mcp-conformance {report['header']['run_id']}")
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for case in report["cases"]:
        groups[(case["suite"], case["target"])].append(case)
    for (suite, target), cases in groups.items():
        element = ET.SubElement(
            root,
            "testsuite",
            name=f"{suite} (target {target})",
            tests=str(len(cases)),
            failures=str(sum(c["verdict"] == "FAIL" for c in cases)),
            errors=str(sum(c["verdict"] == "ERROR" for c in cases)),
            skipped=str(sum(c["verdict"] == "SKIP" for c in cases)),
            time=f"{sum(c['duration'] for c in cases):.3f}",
        )
        for case in cases:
            tc = ET.SubElement(
                element,
                "testcase",
                classname=f"{suite}.{case['requirement']}",
                name=case["key"],
                time=f"{case['duration']:.3f}",
            )
            detail = _junit_detail(case)
            if case["verdict"] == "FAIL":
                ET.SubElement(tc, "failure", message=case["message"][:500]).text = detail
            elif case["verdict"] == "ERROR":
                ET.SubElement(tc, "error", message=case["message"][:500]).text = detail
            elif case["verdict"] == "SKIP":
                ET.SubElement(tc, "skipped", message=case["message"][:500])
            elif case["verdict"] == "WARN":
                ET.SubElement(tc, "system-out").text = "WARN: " + detail
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _junit_detail(case: dict[str, Any]) -> str:
    parts = [f"{case['requirement']} ({case['level']}): {case['title']}", case["message"]]
    parts += [f"{k}: {str(v)[:2000]}" for k, v in (case.get("evidence") or {}).items()]
    return "\n".join(parts)


VIEWS: dict[str, tuple[str, Callable[[dict[str, Any]], str | bytes]]] = {
    "markdown": ("report.md", markdown),
    "junit": ("junit.xml", junit_xml),
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

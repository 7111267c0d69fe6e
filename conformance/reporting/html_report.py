"""The HTML view: one self-contained page derived from the canonical report alone.

Why one file with everything inline: a report is mailed, attached to CI runs and opened from disk
years later, so it must not depend on a network, a CDN or a sibling file. Why a Content-Security-Policy
with hashes of the page's own style and script: every server-provided string is escaped, and even if
an escaping bug slipped through, an injected `<script>`, inline handler or remote image would be
refused by the browser (and show as a console error, which the browser test looks for).

The page shows the run's summary, a matrix of requirements by verdict per suite, the cases with
filters by verdict and level, and for every case that did not pass its quoted requirement, evidence
and wire transcript. With scripts off every row is simply shown.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.reporting.model import Case, Report, coerce
from conformance.text import bytes_text, readable
from conformance.verdicts import BASELINE_VERDICTS, BLOCKING, LEVELS, VERDICTS, Verdict

#: Characters shown per transcript entry or evidence value; the canonical report keeps the rest.
TEXT_CAP = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --bg:#fff; --soft:#f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; max-width: 1200px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 15px; }
.meta { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { display: inline-block; min-width: 52px; padding: 1px 6px; border-radius: 4px; font-weight: 600;
           text-align: center; font-size: 12px; }
.v-PASS { background: #dafbe1; color: #116329; } .v-FAIL { background: #ffebe9; color: #a40e26; }
.v-WARN { background: #fff8c5; color: #7d4e00; } .v-SKIP { background: #eaeef2; color: #424a53; }
.v-ERROR { background: #ffd8b5; color: #8a3100; } .v-XFAIL { background: #ddf4ff; color: #0a3069; }
.v-XPASS { background: #fbefff; color: #6e2d94; }
td.zero { color: #afb8c1; }
.tiles { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
.tile { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; min-width: 84px; }
.tile b { display: block; font-size: 20px; }
#filters { display: flex; gap: 16px; flex-wrap: wrap; margin: 8px 0; align-items: flex-start; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
fieldset label { margin-right: 10px; white-space: nowrap; }
#shown { color: var(--muted); align-self: center; }
pre { background: var(--soft); border: 1px solid var(--line); padding: 6px 8px; overflow-x: auto;
      white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-size: 12px; }
blockquote { margin: 6px 0; padding: 4px 12px; border-left: 4px solid var(--line); color: var(--muted); }
details summary { cursor: pointer; color: #0969da; }
dl { margin: 4px 0; } dt { font-weight: 600; margin-top: 4px; } dd { margin: 0 0 0 12px; }
.state-ok { color: #116329; font-weight: 600; } .state-bad { color: #a40e26; font-weight: 600; }
[hidden] { display: none !important; }
"""

JS = """
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input.filter"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("#case-table tbody tr.case"));
  var matrixRows = Array.prototype.slice.call(document.querySelectorAll("table.matrix tbody tr"));
  var shown = document.getElementById("shown");
  function apply() {
    var on = {verdict: {}, level: {}};
    boxes.forEach(function (box) { if (box.checked) { on[box.dataset.kind][box.value] = true; } });
    var count = 0;
    rows.forEach(function (row) {
      var visible = !!(on.verdict[row.dataset.verdict] && on.level[row.dataset.level]);
      row.hidden = !visible;
      var detail = row.dataset.detail ? document.getElementById(row.dataset.detail) : null;
      if (detail) { detail.hidden = !visible; }
      if (visible) { count += 1; }
    });
    matrixRows.forEach(function (row) { row.hidden = !on.level[row.dataset.level]; });
    shown.textContent = count + " of " + rows.length + " cases shown";
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
  apply();
})();
"""


def _csp() -> str:
    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"

    return (
        f"default-src 'none'; style-src {digest(CSS)}; script-src {digest(JS)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def _e(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute; control characters made visible."""
    text = value if isinstance(value, str) else readable(value)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return html.escape(text, quote=True)


def _capped(text: str) -> str:
    if len(text) <= TEXT_CAP:
        return _e(text)
    return _e(text[:TEXT_CAP]) + _e(f"\n… {len(text) - TEXT_CAP} more characters in report.json")


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=readable)


def _verdict(verdict: str) -> str:
    return f'<span class="verdict v-{_e(verdict)}">{_e(verdict)}</span>'


def _requirement(req_id: str) -> tuple[str, str]:
    """The quoted source sentence and its source, from this harness's requirement table."""
    try:
        from conformance.requirements import get

        row = get(req_id)
    except Exception:  # a report from another harness version may name a row this one lacks
        return "", ""
    return row.quote, row.source


def _transcript(entries: Sequence[Mapping[str, Any]]) -> str:
    if not entries:
        return '<p class="meta">No wire traffic was recorded for this case.</p>'
    out = []
    for entry in entries:
        head = [f"[{entry.get('t', 0):.3f}s]", str(entry.get("dir", "?"))]
        for key in ("channel", "status", "note"):
            if entry.get(key) not in (None, ""):
                head.append(f"{key}={entry[key]}")
        if "truncated_from" in entry:
            head.append(f"(truncated from {entry['truncated_from']} bytes)")
        body = ""
        if entry.get("headers"):
            body += "\n".join(f"{k}: {v}" for k, v in entry["headers"].items()) + "\n"
        if "text" in entry:
            text = entry["text"]
            with contextlib.suppress(ValueError):
                text = json.dumps(json.loads(text), ensure_ascii=False, indent=1)
            body += text
        elif "base64" in entry:
            # Not UTF-8: the bytes as text with escapes (the report keeps them exactly, in base64).
            body += "(not UTF-8) " + bytes_text(base64.b64decode(entry["base64"]))
        out.append(f"<pre>{_e(' '.join(head))}\n{_capped(body)}</pre>")
    return "".join(out)


def _detail(case: Case) -> str:
    quote, source = _requirement(case.requirement)
    parts = [
        f"<p><b>{_e(case.requirement)}</b> ({_e(case.level)}): {_e(case.title)}</p>",
    ]
    if quote:
        parts.append(f'<blockquote>{_e(quote)}</blockquote><p class="meta">Source: {_e(source)}</p>')
    if case.baseline:
        b = case.baseline
        parts.append(
            f"<p>Baseline entry <code>{_e(b.entry)}</code> (the check said {_e(b.verdict)}): "
            f"{_e(b.reason)}</p>"
        )
    if case.blocked_by:
        parts.append(
            f"<p>Blocked by <code>{_e(case.blocked_by)}</code>: that case's verdict (the defect it "
            "reports) left this one nothing to judge.</p>"
        )
    parts.append(f"<p>{_e(case.message) or '<i>no message</i>'}</p>")
    if case.evidence:
        parts.append("<h4>Evidence</h4><dl>")
        for key, value in case.evidence.items():
            parts.append(f"<dt>{_e(key)}</dt><dd><pre>{_capped(_pretty(value))}</pre></dd>")
        parts.append("</dl>")
    parts.append(f"<h4>Wire transcript</h4>{_transcript(case.transcript)}")
    return "".join(parts)


def _matrix(cases: Sequence[Case], verdicts: Sequence[str]) -> str:
    by_suite: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    info: dict[str, tuple[str, str]] = {}
    for case in cases:
        by_suite[case.suite][case.requirement][case.verdict] += 1
        info.setdefault(case.requirement, (case.level, case.title))
    out = []
    for suite in sorted(by_suite):
        out.append(f'<h3>Suite {_e(suite)}</h3><table class="matrix"><thead><tr><th>requirement</th>')
        heads = "".join(f"<th>{_verdict(v)}</th>" for v in verdicts)
        out.append(f"<th>level</th><th>title</th>{heads}</tr></thead><tbody>")
        for req in sorted(by_suite[suite]):
            level, _ = info[req]
            counts = by_suite[suite][req]
            cells = "".join(f'<td class="n{"" if counts[v] else " zero"}">{counts[v]}</td>' for v in verdicts)
            out.append(
                f'<tr data-level="{_e(level)}"><td>{_e(req)}</td><td>{_e(level)}</td>'
                f"<td>{_e(info[req][1])}</td>{cells}</tr>"
            )
        out.append("</tbody></table>")
    return "".join(out)


def render(report: Report | Mapping[str, Any]) -> str:
    """The page; `report` is the model, or the canonical JSON it is read (and validated) from."""
    model = coerce(report)
    head, footer, cases = model.header, model.footer, model.cases
    totals = footer.totals
    counts = Counter(c.verdict for c in cases)
    # The two baseline verdicts show only when a baseline was applied or they occur.
    verdicts = [v for v in VERDICTS if v not in BASELINE_VERDICTS or counts[v] or footer.baseline]
    levels = [lv for lv in LEVELS if any(c.level == lv for c in cases)]
    levels += sorted({c.level for c in cases} - set(levels))
    code = footer.exit_code
    state = (
        '<span class="state-ok">complete</span>'
        if footer.complete
        else f'<span class="state-bad">INCOMPLETE ({_e(footer.reason)})</span>'
    )
    out = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>MCP conformance report {_e(head.run_id)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>MCP conformance report</h1><p class="meta">Run {_e(head.run_id)} · harness '
        f"{_e(head.harness.version)} · suites {_e(', '.join(head.suites))} · started "
        f"{_e(head.started)} · {state}"
        + (f" · exit code {_e(code)}" if code is not None else "")
        + "</p></header>",
        '<section id="summary"><h2>Summary</h2><div class="tiles">',
    ]
    for verdict in verdicts:
        count = totals.get(verdict, counts[verdict])
        out.append(f'<div class="tile v-{_e(verdict)}">{_e(verdict)}<b>{_e(count)}</b></div>')
    out.append(f'<div class="tile">cases<b>{len(cases)}</b></div></div>')
    out.append(
        "<table><thead><tr><th>target</th><th>transport</th><th>server</th><th>revisions spoken</th>"
        "</tr></thead><tbody>"
    )
    for target in model.targets:
        unreachable = " (unreachable)" if target.unreachable else ""
        out.append(
            f"<tr><td>{_e(target.index)}: {_e(target.spec)}{_e(unreachable)}</td>"
            f"<td>{_e(target.transport)}</td><td>{_e(target.server_label)}</td>"
            f"<td>{_e(', '.join(target.revisions_spoken) or 'none')}</td></tr>"
        )
    out.append("</tbody></table>")
    if footer.baseline:
        b = footer.baseline
        unmatched = ", ".join(b.unmatched) or "none"
        out.append(
            f"<p>Baseline {_e(b.path)} ({_e(b.entries)} entries; matching no case: {_e(unmatched)})</p>"
        )
    out.append("</section>")
    out.append(f'<section id="matrix"><h2>Requirements by verdict</h2>{_matrix(cases, verdicts)}</section>')
    out.append('<section id="cases"><h2>Cases</h2><div id="filters"><fieldset><legend>Verdict</legend>')
    for verdict in verdicts:
        out.append(
            f'<label><input type="checkbox" class="filter" data-kind="verdict" value="{_e(verdict)}" '
            f"checked> {_verdict(verdict)} {counts[verdict]}</label>"
        )
    out.append("</fieldset><fieldset><legend>Level</legend>")
    for level in levels:
        n = sum(c.level == level for c in cases)
        out.append(
            f'<label><input type="checkbox" class="filter" data-kind="level" value="{_e(level)}" checked> '
            f"{_e(level)} {n}</label>"
        )
    out.append(f'</fieldset><span id="shown">{len(cases)} cases</span></div>')
    out.append(
        '<table id="case-table"><thead><tr><th>verdict</th><th>case</th><th>requirement</th><th>level</th>'
        "<th>message</th><th>ms</th></tr></thead><tbody>"
    )
    for number, case in enumerate(cases):
        has_detail = case.verdict != Verdict.PASS
        detail_id = f"detail-{number}"
        attrs = f'data-verdict="{_e(case.verdict)}" data-level="{_e(case.level)}"'
        link = f' data-detail="{detail_id}"' if has_detail else ""
        out.append(
            f'<tr class="case" id="case-{number}" {attrs}{link}><td>{_verdict(case.verdict)}</td>'
            f"<td>{_e(case.key)}</td><td>{_e(case.requirement)}</td><td>{_e(case.level)}</td>"
            f'<td>{_e(case.first_line(240))}</td><td class="n">{case.duration * 1000:.0f}</td></tr>'
        )
        if has_detail:
            out.append(
                f'<tr class="detail" id="{detail_id}" {attrs}><td colspan="6">'
                f"<details{' open' if case.verdict in BLOCKING else ''}><summary>"
                f"Requirement, evidence and wire transcript</summary>{_detail(case)}</details></td></tr>"
            )
    out.append(f"</tbody></table></section><script>{JS}</script></body></html>\n")
    return "".join(out)

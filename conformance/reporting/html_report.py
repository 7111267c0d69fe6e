"""The HTML view: one self-contained page derived from the canonical report alone.

Why one file with everything inline: a report is mailed, attached to CI runs and opened from disk
years later, so it must not depend on a network, a CDN or a sibling file. Why a Content-Security-Policy
with hashes of the page's own style and script: every server-provided string is escaped, and even if
an escaping bug slipped through, an injected `<script>`, inline handler or remote image would be
refused by the browser (and show as a console error, which the browser test looks for).

The page opens on the outcome and reads like it: a banner with the result in words and colour and
what its exit code means, the verdict tiles counting the scored cases exactly as the banner and every
other view do (`Report.apart`: the not-scored ones apart), then the findings (`findings.findings`: the
cases that did not pass grouped by defect, FAILs first, then WARNs, each a folded card naming the
revisions and transports where it was seen and linking to its cases), then a matrix of requirements
(problems first) by transport and revision of each target whose cells link to their cases, and last
the case list: each case that did not pass with its message, quoted requirement and the evidence that
shows the fault (transcript and large evidence folded), and the SKIP and PASS cases folded away in a
table each. The filters by verdict and level work on every case. With scripts off every case is in the
page, SKIP and PASS still folded, and the links still lead to their cases (the browser opens a fold).
One stdio server's page stays within 10 screens of 2,000 px (the browser test measures it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.model.verdicts import (
    BASELINE_VERDICTS,
    BLOCKING,
    EXIT_INTERRUPTED,
    EXIT_MEANING,
    EXIT_TERMINATED,
    LEVEL_MEANING,
    LEVELS,
    SKIP_KINDS,
    VERDICTS,
    WORST_FIRST,
    Result,
    Verdict,
    result,
)
from conformance.reporting.findings import Finding, findings
from conformance.reporting.model import Case, Report, case_anchor, coerce
from conformance.text import bytes_text, readable, visible

#: Characters shown per transcript entry or evidence value; the canonical report keeps the rest.
TEXT_CAP = 20_000
#: An evidence value longer than this (characters or lines, as shown) is folded, with its size.
LARGE_CHARS, LARGE_LINES = 800, 16
#: Evidence keys that show the fault, the first one present shown first: what the check named as
#: wrong, then what the server answered (`call.excerpt()`: response, HTTP status and headers).
FAULT_KEYS = (
    "why",
    "violations",
    "errors",
    "differing",
    "ghosts",
    "unblocked",
    "diagnostics",
    "traceback",
    "response",
    "http_status",
    "headers",
)
#: How cases are listed, problems first: a blocked SKIP (another case's defect) comes before the
#: expected failures and the SKIPs that are simply not applicable.
BLOCKED_SKIP = "SKIP-blocked"
CASE_ORDER: tuple[str, ...] = (
    Verdict.FAIL,
    Verdict.ERROR,
    Verdict.XPASS,
    Verdict.WARN,
    BLOCKED_SKIP,
    Verdict.XFAIL,
    Verdict.SKIP,
    Verdict.PASS,
)
#: The verdicts a reader must act on: the views' "problems".
PROBLEMS = frozenset({*BLOCKING, Verdict.WARN})

CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --bg:#fff; --soft:#f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; max-width: 1200px; padding: 12px 20px 48px; }
h1 { font-size: 20px; margin: 4px 0; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 0 0 6px; overflow-wrap: anywhere; } h4 { margin: 10px 0 2px; font-size: 13px; }
.meta { color: var(--muted); margin: 2px 0; overflow-wrap: anywhere; }
a { color: #0969da; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
.verdict { display: inline-block; min-width: 52px; padding: 1px 6px; border-radius: 4px; font-weight: 600;
           text-align: center; font-size: 12px; }
.v-PASS { background: #dafbe1; color: #116329; } .v-FAIL { background: #ffebe9; color: #a40e26; }
.v-WARN { background: #fff8c5; color: #7d4e00; } .v-SKIP { background: #eaeef2; color: #424a53; }
.v-ERROR { background: #ffebe9; color: #8a3100; } .v-XFAIL { background: #ddf4ff; color: #0a3069; }
.v-XPASS { background: #fbefff; color: #6e2d94; }
.banner { border: 2px solid; border-radius: 8px; padding: 12px 16px; margin: 12px 0; }
.banner .result { font-size: 26px; font-weight: 700; margin: 0; letter-spacing: .02em; }
.banner p { margin: 4px 0; } .banner .exit { font-size: 13px; }
.r-passed { background: #dafbe1; border-color: #1a7f37; color: #0f4d1f; }
.r-failed, .r-unreachable { background: #ffebe9; border-color: #cf222e; color: #82071e; }
.r-not-judged, .r-incomplete, .r-interrupted { background: #fff8c5; border-color: #bf8700; color: #5c3c00; }
.banner nav a { color: inherit; font-weight: 600; margin-right: 14px; white-space: nowrap; }
.tiles { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
.tile { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; min-width: 84px;
        background: var(--soft); color: #424a53; }
.tile b { display: block; font-size: 20px; }
.tile.zero { background: #fff; color: #8c959f; border-color: #eaeef2; }
.tile.t-bad { background: #ffebe9; color: #a40e26; border-color: #ff8182; }
.tile.t-warn { background: #fff8c5; color: #7d4e00; border-color: #d4a72c; }
.tile.t-good { background: #dafbe1; color: #116329; border-color: #4ac26b; }
.tile.t-note { background: #ddf4ff; color: #0a3069; border-color: #54aeff; }
#filters { display: flex; gap: 12px; flex-wrap: wrap; margin: 8px 0; align-items: flex-start; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
fieldset label { margin-right: 10px; white-space: nowrap; display: inline-block; }
#shown { color: var(--muted); align-self: center; }
article.case { border: 1px solid var(--line); border-left: 6px solid #8c959f; border-radius: 6px;
               padding: 10px 14px; margin: 10px 0; scroll-margin-top: 8px; }
article.c-FAIL, article.c-ERROR, article.c-XPASS { border-left-color: #cf222e; }
article.c-WARN { border-left-color: #bf8700; } article.c-XFAIL { border-left-color: #54aeff; }
.case:target { outline: 3px solid #0969da; outline-offset: 2px; }
.finding { font-size: 15px; font-weight: 600; margin: 6px 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.req { margin: 4px 0; }
pre { background: var(--soft); border: 1px solid var(--line); padding: 6px 8px; overflow-x: auto;
      white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-size: 12px; }
pre.lead { max-height: 22em; overflow-y: auto; border-color: #ff8182; }
blockquote { margin: 6px 0; padding: 4px 12px; border-left: 4px solid var(--line); color: var(--muted); }
details { margin: 6px 0; } details > summary { cursor: pointer; color: #0969da; }
details.fold { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
details.fold[open] > summary { margin-bottom: 4px; }
details.cases-fold > summary { font-size: 16px; font-weight: 600; padding: 4px 0; }
details.finding-card { border-left: 6px solid #8c959f; margin: 6px 0; }
details.f-FAIL, details.f-ERROR, details.f-XPASS { border-left-color: #cf222e; }
details.f-WARN { border-left-color: #bf8700; } details.f-XFAIL { border-left-color: #54aeff; }
details.finding-card > summary { color: var(--fg); }
.fline { color: var(--muted); font-size: 13px; margin-left: 18px; overflow: hidden; text-overflow: ellipsis;
         white-space: nowrap; }
ul.finding-cases { margin: 4px 0; padding-left: 20px; }
details.case-body { margin: 0; } details.case-body > summary { color: var(--fg); }
details.case-body > summary h3 { display: inline; } details[open] > summary .fline { display: none; }
dl { margin: 4px 0; } dt { font-weight: 600; margin-top: 4px; } dd { margin: 0 0 0 12px; }
code { overflow-wrap: anywhere; }
table.matrix td.cell { text-align: center; white-space: nowrap; padding: 2px 4px; }
table.matrix td.cell a { display: block; text-decoration: none; font-weight: 600; font-size: 12px;
                         padding: 2px 4px; border-radius: 4px; }
table.matrix td.none { color: #afb8c1; text-align: center; }
table.matrix tbody th { font-weight: normal; } table.matrix tbody th b { font-weight: 600; }
table.matrix tbody th { white-space: nowrap; }
table.matrix .title { color: var(--muted); font-size: 12px; display: inline-block; max-width: 340px;
                      overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; }
table.matrix thead th { text-align: center; font-size: 12px; white-space: nowrap; }
table.matrix thead th:first-child { text-align: left; }
.level { color: var(--muted); font-size: 12px; white-space: nowrap; }
[hidden] { display: none !important; }
@media (max-width: 600px) {
  body { padding: 8px 10px 32px; } .banner .result { font-size: 22px; }
  .tiles { gap: 6px; } .tile { flex: 1 1 0; min-width: 52px; padding: 3px 6px; } .tile b { font-size: 17px; }
  .hide-narrow { display: none; }
  table.targets thead { display: none; } table.targets tr, table.targets td { display: block; border: 0; }
  table.targets tr { border: 1px solid var(--line); padding: 4px 0; }
  table.targets td { padding: 1px 8px; overflow-wrap: anywhere; }
  table.targets td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
}
"""

JS = """
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input.filter"));
  var cases = Array.prototype.slice.call(document.querySelectorAll(".case[data-verdict]"));
  var matrixRows = Array.prototype.slice.call(document.querySelectorAll("table.matrix tbody tr"));
  var shown = document.getElementById("shown");
  function apply() {
    var on = {verdict: {}, level: {}};
    boxes.forEach(function (box) { if (box.checked) { on[box.dataset.kind][box.value] = true; } });
    var count = 0;
    cases.forEach(function (el) {
      var visible = !!(on.verdict[el.dataset.verdict] && on.level[el.dataset.level]);
      el.hidden = !visible;
      if (visible) { count += 1; }
    });
    matrixRows.forEach(function (row) { row.hidden = !on.level[row.dataset.level]; });
    shown.textContent = count + " of " + cases.length + " cases shown";
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (!el) { return; }
    if (el.tagName === "DETAILS") { el.open = true; }
    var body = el.querySelector("details.case-body");
    if (body) { body.open = true; }
    if (el.classList.contains("case") && el.hidden) {
      boxes.forEach(function (box) {
        if (box.value === el.dataset[box.dataset.kind]) { box.checked = true; }
      });
      apply();
    }
    for (var up = el.parentElement; up; up = up.parentElement) {
      if (up.tagName === "DETAILS") { up.open = true; }
    }
    el.scrollIntoView();
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
  window.addEventListener("hashchange", reveal);
  apply();
  reveal();
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
    """Escape any value for HTML text or a quoted attribute; control, bidi and other invisible
    characters shown as their escapes (`text.visible`), line breaks and tabs kept."""
    text = value if isinstance(value, str) else readable(value)
    return html.escape(visible(text, lines=True), quote=True)


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


def _requirement(req_id: str, revision: str | None = None) -> tuple[str, str]:
    """The quoted source sentence and its source as `revision` reads them (a revision whose text
    differs quotes its own), from this harness's requirement table."""
    try:
        from conformance.model.requirements import get

        row = get(req_id).at(revision)
    except Exception:  # a report from another harness version may name a row this one lacks
        return "", ""
    return row.quote, row.source


def _size(text: str) -> str:
    """How big a folded value is, as shown: bytes and lines."""
    size, lines = len(text.encode("utf-8")), text.count("\n") + 1
    amount = f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} kB"
    return f"{amount}, {lines} line{'' if lines == 1 else 's'}"


def _large(text: str) -> bool:
    return len(text) > LARGE_CHARS or text.count("\n") >= LARGE_LINES


# --- what every view says first: the outcome ------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The run's result in a word, its exit code and what that code means, and one sentence of why
    (plain text: each view escapes it). The HTML banner, the Markdown's first lines and the terminal
    summary's last line all say this."""

    result: Result
    code: int
    meaning: str
    why: str

    @property
    def line(self) -> str:
        """`FAILED: <why> Exit code 1: <meaning>.`: the terminal summary's last line."""
        return f"{self.result.upper()}: {self.why} Exit code {self.code}: {self.meaning}."

    @property
    def quotes_the_report(self) -> bool:
        """Whether `why` quotes text from the report (a target's spec or reason, the footer's reason),
        which a view must escape; otherwise it is the harness's own words and counts."""
        return self.result in ("unreachable", "incomplete", "interrupted")


def _tally(counts: Mapping[Verdict, int], verdicts: Iterable[Verdict]) -> str:
    return ", ".join(f"{verdict} {counts[verdict]}" for verdict in verdicts if counts.get(verdict))


def unscored_line(unscored: Mapping[str, int], model: Report) -> str:
    """The count of the unscored cases, apart from the run's totals: what they are and how to claim them."""
    counts = "  ".join(f"{v} {n}" for v, n in unscored.items() if v != "cases" and n)
    return (
        f"{unscored.get('cases', 0)} more cases not scored (experimental features or extensions; they "
        f"fail no run unless claimed with {_claim(model)}): {counts}"
    )


def _claim(model: Report) -> str:
    """How the run's unscored cases are claimed: a client run's with `client --experimental` alone (its
    one pack runs by default, so naming it claims nothing); a server run's by naming their pack too."""
    if model.targets and all(t.side == "client" for t in model.targets):
        return "--experimental"
    return "--experimental, or --suite naming their pack"


def _stopped(reason: str, cases: Sequence[Case]) -> str:
    """Why a run that stopped early did not pass: the scored cases it holds, as the totals line and
    every view count them, and the not-scored ones apart."""
    scored = sum(1 for case in cases if not case.unscored)
    more = len(cases) - scored
    return (
        f"The run stopped before it finished ({reason}): the report holds the {scored} "
        f"case{'' if scored == 1 else 's'} judged until then"
        + (f" (and {more} more not scored)" if more else "")
        + ", and the rest were never run."
    )


def headline(report: Report | Mapping[str, Any]) -> Headline:
    """The run's outcome (`verdicts.result`), read from the report alone: interrupted when the run
    stamped 130 (143: terminated) or its footer says so, else the exit code recomputed from the cases."""
    model = coerce(report)
    footer, cases = model.footer, model.cases
    interrupted = footer.exit_code == EXIT_INTERRUPTED or (
        not footer.complete and footer.reason == "interrupted"
    )
    terminated = footer.exit_code == EXIT_TERMINATED or (
        not footer.complete and footer.reason == "terminated"
    )
    word, code = result(
        unreachable=model.unreachable,
        complete=footer.complete,
        interrupted=interrupted,
        verdicts=(case.gating for case in cases),
        terminated=terminated,
    )
    counts = Counter(case.verdict for case in cases if not case.unscored)
    blocking = sum(counts[v] for v in BLOCKING)
    plural = "" if len(cases) == 1 else "s"
    if word == "unreachable":
        lost = [t for t in model.targets if t.unreachable]
        why = "; ".join(
            f"target {t.index} ({t.spec}) could not be reached"
            + (f": {t.unreachable}" if isinstance(t.unreachable, str) else "")
            for t in lost
        )
        why += "."
    elif word in ("interrupted", "incomplete"):
        why = _stopped(footer.reason, cases)
    elif word == "not judged":
        why = (
            f"All {len(cases)} case{plural} are SKIP: the run judged nothing, so it cannot vouch "
            "for the server."
        )
    elif word == "failed":
        why = (
            f"{blocking} case{'' if blocking == 1 else 's'} block{'s' if blocking == 1 else ''} the run "
            f"({_tally(counts, (Verdict.FAIL, Verdict.ERROR, Verdict.XPASS))})."
        )
    else:
        scored = sum(1 for case in cases if not case.unscored)
        why = f"{scored} case{'' if scored == 1 else 's'}, none blocking"
        rest = _tally(counts, (Verdict.WARN, Verdict.XFAIL, Verdict.SKIP))
        why += f" ({rest} do not fail a run)." if rest else "."
    apart = Counter(case.verdict for case in cases if case.unscored)
    if apart and word in ("passed", "failed"):
        why += (
            f" {sum(apart.values())} more not scored (experimental or extension; claimed with"
            f" {_claim(model)}):"
            f" {_tally(apart, VERDICTS)}."
        )
    return Headline(word, code, EXIT_MEANING.get(code, "an exit code this harness does not give"), why)


# --- ordering: problems first ----------------------------------------------------------------------


def case_group(case: Case) -> str:
    """The case's place in `CASE_ORDER`: its verdict, or `SKIP-blocked` for a SKIP another case caused."""
    return BLOCKED_SKIP if case.verdict == Verdict.SKIP and case.blocked_by else str(case.verdict)


def problems_first(cases: Iterable[Case]) -> list[Case]:
    """The cases in `CASE_ORDER`, report order within each group (a bucket pass: linear)."""
    buckets: dict[str, list[Case]] = {group: [] for group in CASE_ORDER}
    for case in cases:
        buckets[case_group(case)].append(case)
    return [case for group in CASE_ORDER for case in buckets[group]]


def evidence_items(case: Case) -> list[tuple[str, Any]]:
    """The case's evidence, the item that shows the fault first (the first of `FAULT_KEYS` present),
    then the rest in report order."""
    items = list(case.evidence.items())
    lead = next((key for key in FAULT_KEYS if key in case.evidence), None)
    if lead is None:
        return items
    return [(lead, case.evidence[lead])] + [(k, v) for k, v in items if k != lead]


def _anchors(cases: Sequence[Case]) -> dict[str, str]:
    """Each case key's element id, `case-<model.case_anchor(key)>`: from the key alone, so a link into a
    report (from a PR comment, or a `compare` page) keeps working across runs of the same checks."""
    return {case.key: "case-" + case_anchor(case.key) for case in cases}


# --- the parts of the page ------------------------------------------------------------------------


def _transcript(entries: Sequence[Mapping[str, Any]]) -> str:
    if not entries:
        return '<p class="meta">No wire traffic was recorded for this case.</p>'
    out = []
    total = 0
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
        total += len(body.encode("utf-8"))
        out.append(f"<pre>{_e(' '.join(head))}\n{_capped(body)}</pre>")
    amount = f"{total} bytes" if total < 1024 else f"{total / 1024:.1f} kB"
    n = len(entries)
    return (
        f'<details class="fold transcript"><summary>Wire transcript: {n} entr{"y" if n == 1 else "ies"}, '
        f"{amount}</summary>{''.join(out)}</details>"
    )


def _evidence(case: Case) -> str:
    """The evidence: the item that shows the fault first, shown even when long (in a box of its own
    height), the other small items after it, and every other large value folded, with its size."""
    items = evidence_items(case)
    if not items:
        return ""
    lead = items[0][0] if items[0][0] in FAULT_KEYS else None
    shown, folded = [], []
    for key, value in items:
        text = _pretty(value)
        if key == lead:
            shown.append(f'<dt>{_e(key)}</dt><dd><pre class="lead">{_capped(text)}</pre></dd>')
        elif _large(text):
            folded.append(
                f'<details class="fold evidence"><summary>Evidence <code>{_e(key)}</code>: '
                f"{_e(_size(text))}</summary><pre>{_capped(text)}</pre></details>"
            )
        else:
            shown.append(f"<dt>{_e(key)}</dt><dd><pre>{_capped(text)}</pre></dd>")
    listed = f"<h4>Evidence</h4><dl>{''.join(shown)}</dl>" if shown else ""
    return listed + "".join(folded)


def _case(case: Case, anchors: Mapping[str, str]) -> str:
    """A case that judged a problem: the finding first (message, requirement and its quote, the evidence
    that shows the fault), the transcript and large evidence folded below. A case that fails the run
    shows open; a WARN or XFAIL is folded to its key and message's first line, since its finding card
    above already says what it found and where (a link to it opens it)."""
    quote, source = _requirement(case.requirement, case.revision)
    attrs = f'data-verdict="{_e(case.verdict)}" data-level="{_e(case.level)}"'
    opened = " open" if case.verdict in BLOCKING else ""
    parts = [
        f'<article class="case c-{_e(case.verdict)}" id="{_e(anchors[case.key])}" {attrs}>',
        f'<details class="case-body"{opened}><summary><h3>{_verdict(case.verdict)} '
        f'<code>{_e(case.key)}</code></h3><div class="fline">{_e(case.first_line(240))}</div></summary>',
        *_said(case.message, case.requirement, case.level_shown, case.title, quote, source),
    ]
    if case.baseline:
        b = case.baseline
        parts.append(
            f"<p>Baseline entry <code>{_e(b.entry)}</code> (the check said {_e(b.verdict)}): "
            f"{_e(b.reason)}</p>"
        )
    if case.official:
        parts.append(
            '<p class="official">Official checks: '
            + ", ".join(f"<code>{_e(check)}</code>" for check in case.official)
            + "</p>"
        )
    if case.unscored:
        parts.append(
            f"<p>Not scored: its row judges an {_e(case.unscored)} feature that the run did not claim "
            "(<code>--experimental</code>), so this verdict fails no run.</p>"
        )
    if case.blocked_by:
        target = anchors.get(case.blocked_by)
        link = f' (<a href="#{_e(target)}">that case</a>)' if target else ""
        parts.append(
            f"<p>Blocked by <code>{_e(case.blocked_by)}</code>{link}: its verdict (the defect it "
            "reports) left this one nothing to judge.</p>"
        )
    parts.append(_evidence(case))
    parts.append(_transcript(case.transcript))
    parts.append(
        f'<p class="meta">target {_e(case.target)} · {_e(case.transport)}@{_e(case.revision)} · '
        f"check {_e(case.check)} · {case.duration * 1000:.0f} ms</p></details></article>"
    )
    return "".join(parts)


def _official(cases: Sequence[Case]) -> str:
    """The official suite's figure per revision (`conformance.model.official.summary`), beside ours: of the
    official checks judged here at that revision, how many passed, the not-scored ones apart."""
    from conformance.model import official

    label = official.load().label
    lines = [entry.line(label) for entry in official.summary(cases)]
    if not lines:
        return ""
    return '<ul class="official">' + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>"


def _official_ids(case: Case) -> str:
    """The official check IDs of a PASS case's row, under its requirement ID (empty when none)."""
    if not case.official:
        return ""
    return f'<div class="meta">official: {_e(", ".join(case.official))}</div>'


def _fold_row(case: Case, anchors: Mapping[str, str], why: str) -> str:
    """One case of a folded table: verdict, key, requirement (and its official IDs), level, `why`."""
    attrs = f'data-verdict="{_e(case.verdict)}" data-level="{_e(case.level)}"'
    return (
        f'<tr class="case" id="{_e(anchors[case.key])}" {attrs}><td>{_verdict(case.verdict)}</td>'
        f"<td><code>{_e(case.key)}</code></td><td>{_e(case.requirement)}{_official_ids(case)}</td>"
        f'<td class="hide-narrow">{_e(case.level_shown)}</td>'
        f'<td class="hide-narrow">{why}</td>'
        f'<td class="n hide-narrow">{case.duration * 1000:.0f}</td></tr>'
    )


def _fold_table(fold_id: str, summary: str, rows: Sequence[str], last: str) -> str:
    """A closed `<details>` holding a table of cases: what PASS and SKIP cases are listed in."""
    return (
        f'<details id="{fold_id}" class="cases-fold"><summary>{summary}</summary>'
        f'<div class="scroll"><table id="{fold_id}-table"><thead><tr><th>verdict</th><th>case</th>'
        f'<th>requirement</th><th class="hide-narrow">level</th><th class="hide-narrow">{last}</th>'
        f'<th class="n hide-narrow">ms</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
        "</details>"
    )


def _scored_summary(cases: Sequence[Case], verdict: str) -> str:
    """`189 PASS cases, 3 more not scored`: a fold's count, the scored ones as the tiles count them."""
    scored = sum(1 for case in cases if not case.unscored)
    text = f"{scored} {verdict} case{'' if scored == 1 else 's'}"
    return text + (f", {len(cases) - scored} more not scored" if scored < len(cases) else "")


def _passed(cases: Sequence[Case], anchors: Mapping[str, str]) -> str:
    """The PASS cases, folded away (a closed `<details>` with the count): a table row each."""
    if not cases:
        return ""
    rows = [_fold_row(case, anchors, _e(case.first_line(240))) for case in cases]
    return _fold_table("passed", _scored_summary(cases, "PASS") + " (folded)", rows, "message")


def _skip_why(case: Case, anchors: Mapping[str, str]) -> str:
    """A SKIP's reason in its row: the case blocking it (linked), its kind in words, its message."""
    words = SKIP_KINDS.get(case.skip_kind, case.skip_kind)
    why = f"<b>{_e(words)}</b>: {_e(case.first_line(240))}"
    if case.blocked_by:
        target = anchors.get(case.blocked_by)
        link = f' (<a href="#{_e(target)}">that case</a>)' if target else ""
        why = f"Blocked by <code>{_e(case.blocked_by)}</code>{link}: {_e(case.first_line(240))}"
    if case.unscored:
        why += f" <i>(not scored: {_e(case.unscored)})</i>"
    return why


def _skipped(cases: Sequence[Case], anchors: Mapping[str, str]) -> str:
    """The SKIP cases, folded like PASS (they judged nothing): blocked ones first, each row saying why;
    the summary counts them as the tiles do, by reason kind, the not-scored ones apart."""
    if not cases:
        return ""
    kinds = Counter(case.skip_kind for case in cases if not case.unscored)
    by_kind = ", ".join(f"{kinds[kind]} {words}" for kind, words in SKIP_KINDS.items() if kinds[kind])
    summary = _scored_summary(cases, "SKIP") + (f" (scored: {_e(by_kind)})" if by_kind else "")
    rows = [_fold_row(case, anchors, _skip_why(case, anchors)) for case in cases]
    return _fold_table("skipped", summary + " (folded)", rows, "why")


def _finding_card(found: Finding, anchors: Mapping[str, str], by_key: Mapping[str, Case], fid: str) -> str:
    """One finding, folded: its verdict, requirement, level, where it was seen and its message's first
    line in the summary; the whole message, the quoted requirement and a link to each case inside."""
    first = by_key[found.keys[0]]
    quote, source = _requirement(found.requirement, first.revision)
    n = len(found.keys)
    line = found.message.splitlines()[0][:240] if found.message else ""
    parts = [
        f'<details class="fold finding-card f-{_e(found.verdict)}" id="{_e(fid)}"><summary>',
        f"{_verdict(found.verdict)} <b>{_e(found.requirement)}</b> "
        f'<span class="level">({_e(found.level_shown)})</span> in {_e(found.where)} · '
        f'{n} case{"" if n == 1 else "s"}<div class="fline">{_e(line)}</div></summary>',
        *_said(found.message, found.requirement, found.level_shown, found.title, quote, source),
    ]
    if found.unscored:
        parts.append(f"<p>Not scored ({_e(found.unscored)}): it fails no run.</p>")
    links = "".join(
        f'<li><a href="#{_e(anchors[key])}"><code>{_e(key)}</code></a></li>' for key in found.keys
    )
    parts.append(f'<ul class="finding-cases">{links}</ul>')
    if found.blocks:
        count = len(found.blocks)
        parts.append(f'<p class="meta">It blocks {count} SKIP case{"" if count == 1 else "s"}.</p>')
    parts.append("</details>")
    return "".join(parts)


def _findings(found: Sequence[Finding], model: Report, anchors: Mapping[str, str]) -> str:
    """The findings section: the non-PASS, non-SKIP cases grouped by defect, worst first."""
    by_key = {case.key: case for case in model.cases}
    out = ['<section id="findings"><h2>Findings</h2>']
    if not found:
        out.append('<p class="meta">No findings: no case failed, erred or warned.</p>')
    else:
        n = sum(len(f.keys) for f in found)
        out.append(
            f'<p class="meta">{len(found)} finding{"" if len(found) == 1 else "s"} from {n} case'
            f"{'' if n == 1 else 's'}: one requirement broken the same way, with the revisions and "
            "transports where it was seen. Open one for its message, requirement and cases.</p>"
        )
    seen: set[str] = set()
    for number, finding in enumerate(found, start=1):
        fid = f"finding-{finding.fingerprint}"
        fid = fid if fid not in seen else f"{fid}-{number}"
        seen.add(fid)
        out.append(_finding_card(finding, anchors, by_key, fid))
    out.append("</section>")
    return "".join(out)


def _matrix(model: Report, anchors: Mapping[str, str]) -> str:
    """Requirements (problems first, then by ID) by transport@revision of each target; a cell is the
    verdict of that requirement's case there, linking to it; several cases show the worst and a count."""
    rank = {verdict: number for number, verdict in enumerate(WORST_FIRST)}
    several_targets = len({case.target for case in model.cases}) > 1
    columns: dict[tuple[int, str, str], None] = {}
    cells: dict[tuple[str, tuple[int, str, str]], list[Case]] = {}
    info: dict[str, tuple[str, str]] = {}
    worst: dict[str, int] = {}
    for case in model.cases:
        column = (case.target, case.transport, case.revision)
        columns.setdefault(column, None)
        cells.setdefault((case.requirement, column), []).append(case)
        info.setdefault(case.requirement, (case.level, case.title))
        worst[case.requirement] = min(
            worst.get(case.requirement, len(rank)), rank.get(case.verdict, len(rank))
        )
    ordered = sorted(columns, key=lambda column: column[0])  # by target, then as the cases list them
    if not info:
        return '<p class="meta">No cases.</p>'
    out = ['<div class="scroll"><table class="matrix"><thead><tr><th>requirement</th>']
    for target, transport, revision in ordered:
        prefix = f"#{target} " if several_targets else ""
        out.append(f"<th>{_e(prefix + transport)}@<br>{_e(revision)}</th>")
    out.append("</tr></thead><tbody>")
    for req in sorted(info, key=lambda r: (worst[r], r)):
        level, title = info[req]
        out.append(
            f'<tr data-level="{_e(level)}"><th scope="row"><b>{_e(req)}</b> '
            f'<span class="level">{_e(level)}</span> <span class="title hide-narrow" title="{_e(title)}">'
            f"{_e(title)}</span></th>"
        )
        for column in ordered:
            here = cells.get((req, column))
            if not here:
                out.append('<td class="none">&ndash;</td>')
                continue
            first = min(here, key=lambda c: rank.get(c.verdict, len(rank)))
            count = f" &times;{len(here)}" if len(here) > 1 else ""
            tally = ", ".join(f"{v} {n}" for v, n in Counter(c.verdict for c in here).items())
            out.append(
                f'<td class="cell"><a class="verdict v-{_e(first.verdict)}" href="#{_e(anchors[first.key])}" '
                f'title="{_e(first.key)}: {_e(tally)}">{_e(first.verdict)}{count}</a></td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


_TILE_TONE = {
    Verdict.FAIL: "t-bad",
    Verdict.ERROR: "t-bad",
    Verdict.XPASS: "t-bad",
    Verdict.WARN: "t-warn",
    Verdict.PASS: "t-good",
    Verdict.XFAIL: "t-note",
    Verdict.SKIP: "t-skip",
}


def _said(message: str, requirement: str, level: str, title: str, quote: str, source: str) -> list[str]:
    """What a case or a finding card says: its message, its requirement with the level it was judged
    at, and the quoted sentence with its source when the requirement table has the row."""
    out = [
        f'<p class="finding">{_e(message) or "<i>no message</i>"}</p>',
        f'<p class="req"><b>{_e(requirement)}</b> ({_e(level)}): {_e(title)}</p>',
    ]
    if quote:
        out.append(f'<blockquote>{_e(quote)}</blockquote><p class="meta">Source: {_e(source)}</p>')
    return out


def _banner(model: Report, findings_count: int) -> str:
    """The outcome: the result in words and colour, why, what the exit code means, and where to go."""
    end = headline(model)
    return "".join(
        [
            f'<section id="outcome" class="banner r-{end.result.replace(" ", "-")}">',
            f'<p class="result">{_e(end.result.capitalize())}</p><p class="why">{_e(end.why)}</p>',
            f'<p class="exit">Exit code {end.code}: {_e(end.meaning)}.</p><nav>',
            f'<a href="#findings">{findings_count} finding{"" if findings_count == 1 else "s"}</a>',
            '<a href="#matrix">Requirement matrix</a>',
            '<a href="#cases">All cases</a>',
            "</nav></section>",
        ]
    )


def _tiles(model: Report, verdicts: Sequence[Verdict]) -> str:
    """The verdict tiles: the scored cases, counted as the banner, the terminal and every other view
    count them (`Report.apart`), and the not-scored ones apart in one line."""
    scored, unscored = model.apart()
    out = ['<div class="tiles">']
    for verdict in verdicts:
        count = scored.get(verdict, 0)
        tone = _TILE_TONE.get(verdict, "") if count else "zero"
        out.append(f'<div class="tile {tone} v-{_e(verdict)}">{_e(verdict)}<b>{_e(count)}</b></div>')
    out.append(f'<div class="tile t-cases">cases<b>{_e(scored.get("cases", 0))}</b></div></div>')
    if unscored.get("cases"):
        out.append(f'<p class="meta unscored">{_e(unscored_line(unscored, model))}</p>')
    return "".join(out)


def _targets(model: Report) -> str:
    """Each target: its spec, transport, the server it announced and the revisions it spoke."""
    out = [
        '<div class="scroll"><table class="targets"><thead><tr><th>target</th><th>transport</th>'
        "<th>server</th><th>revisions spoken</th></tr></thead><tbody>"
    ]
    for target in model.targets:
        unreachable = " (unreachable)" if target.unreachable else ""
        out.append(
            f"<tr><td>{_e(target.index)}: {_e(target.spec)}{_e(unreachable)}</td>"
            f'<td data-label="transport">{_e(target.transport)}</td>'
            f'<td data-label="server">{_e(target.server_label)}</td>'
            f'<td data-label="revisions spoken">{_e(", ".join(target.revisions_spoken) or "none")}'
            + "".join(f'<div class="meta">not spoken: {_e(line)}</div>' for line in target.not_spoken())
            + "</td></tr>"
        )
    out.append("</tbody></table></div>")
    if model.footer.baseline:
        b = model.footer.baseline
        unmatched = ", ".join(b.unmatched) or "none"
        out.append(
            f"<p>Baseline {_e(b.path)} ({_e(b.entries)} entries; matching no case: {_e(unmatched)})</p>"
        )
    return "".join(out)


def _filters(cases: Sequence[Case], verdicts: Sequence[Verdict]) -> str:
    """The verdict and level checkboxes the script applies to every case of the list and matrix."""
    out = ['<div id="filters"><fieldset><legend>Verdict</legend>']
    for verdict in verdicts:
        out.append(
            f'<label><input type="checkbox" class="filter" data-kind="verdict" value="{_e(verdict)}" '
            f"checked> {_verdict(verdict)}</label>"
        )
    out.append("</fieldset><fieldset><legend>Level</legend>")
    levels = [lv for lv in LEVELS if any(c.level == lv for c in cases)]
    levels += sorted({c.level for c in cases} - set(levels))
    for level in levels:
        out.append(
            f'<label title="{_e(LEVEL_MEANING.get(level, level))}"><input type="checkbox" class="filter" '
            f'data-kind="level" value="{_e(level)}" checked> {_e(level)}</label>'
        )
    out.append(f'</fieldset><span id="shown">{len(cases)} cases</span></div>')
    return "".join(out)


def _case_list(model: Report, anchors: Mapping[str, str], verdicts: Sequence[Verdict]) -> str:
    """Every case: those that judged a problem worst first, each in full; SKIP and PASS folded."""
    ordered = problems_first(model.cases)
    shown = [c for c in ordered if c.verdict not in (Verdict.PASS, Verdict.SKIP)]
    scored, unscored = model.apart()
    apart = f", {unscored['cases']} more not scored" if unscored.get("cases") else ""
    out = [
        f'<section id="cases"><h2>All cases: {scored.get("cases", 0)} scored{apart}</h2>',
        _filters(model.cases, verdicts),
    ]
    if not shown:
        skipped = any(c.verdict == Verdict.SKIP for c in ordered)
        out.append(f'<p class="meta">Every case passed{" or was SKIP" if skipped else ""}.</p>')
    out.extend(_case(case, anchors) for case in shown)
    out.append(_skipped([c for c in ordered if c.verdict == Verdict.SKIP], anchors))
    out.append(_passed([c for c in ordered if c.verdict == Verdict.PASS], anchors))
    out.append("</section>")
    return "".join(out)


def render(report: Report | Mapping[str, Any]) -> str:
    """The page; `report` is the model, or the canonical JSON it is read (and validated) from."""
    model = coerce(report)
    head, footer = model.header, model.footer
    counts = Counter(c.verdict for c in model.cases)
    # The two baseline verdicts show only when a baseline was applied or they occur.
    verdicts = [v for v in VERDICTS if v not in BASELINE_VERDICTS or counts[v] or footer.baseline]
    anchors = _anchors(model.cases)
    state = "complete" if footer.complete else f"INCOMPLETE ({footer.reason})"
    found = findings(model.cases)
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>MCP conformance report {_e(head.run_id)}</title><style>{CSS}</style></head><body>",
            f'<header><h1>MCP conformance report</h1><p class="meta">Run {_e(head.run_id)} · harness '
            f"{_e(head.harness.version)} · suites {_e(', '.join(head.suites))} · started "
            f"{_e(head.started)} · {_e(state)}</p></header>",
            _banner(model, len(found)),
            f'<section id="summary">{_tiles(model, verdicts)}{_targets(model)}{_official(model.cases)}',
            "</section>",
            _findings(found, model, anchors),
            '<section id="matrix"><h2>Requirements by transport and revision</h2><p class="meta">Problems '
            "first; each cell is the verdict of that requirement's case (the worst, with a count, where "
            f"there are several) and links to it.</p>{_matrix(model, anchors)}</section>",
            _case_list(model, anchors, verdicts),
            f"<script>{JS}</script></body></html>\n",
        ]
    )

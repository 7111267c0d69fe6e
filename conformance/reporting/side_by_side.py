"""Many servers or clients side by side (`mcp-conformance compare`): requirements against them, one page.

Why: a report judges the servers (or the client) of one run; to choose between implementations, or to
watch several implementations of one protocol (what Bowtie and wpt.fyi show), a reader wants one table
of every requirement against every one of them. The table is derived from canonical reports alone: a
column per target of each report (a server's named by the `serverInfo` it announced and the target's
label; a client run's by the client's command line and the transport it was played over, a client run
having a target per transport), a row per requirement with its level, and in each cell the worst
verdict of that requirement's cases there with how many of them have it (`FAIL 2/3`), linking to that
case in the report's own report.html (`case_anchor`), so the evidence is one click away.

Two renderings of one table: a self-contained HTML page (inline CSS, a Content-Security-Policy that
allows only its own style, no script, no network) and Markdown. Every server-provided string is
escaped in both, as in every view.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from conformance.model.verdicts import LEVELS, WORST_FIRST, Verdict
from conformance.reporting.model import Case, Report, case_anchor
from conformance.reporting.views import _md
from conformance.text import visible


@dataclass(frozen=True)
class Column:
    """One server, or one client over one transport: a target of one report."""

    report: int
    target: int
    #: What the server announced (`name version`, `?` when it never said) and the target's label or
    #: spec; for a client, its command line and the transport.
    server: str
    label: str
    #: The folder of the report's report.html, relative to the page (`/`-separated, URL-quoted).
    href: str
    side: str = "server"


@dataclass(frozen=True)
class Cell:
    verdict: Verdict
    count: int
    total: int
    #: The worst case's link: `REPORTDIR/report.html#case-<anchor>`.
    link: str

    @property
    def text(self) -> str:
        return f"{self.verdict} {self.count}/{self.total}"


@dataclass(frozen=True)
class Row:
    requirement: str
    level: str
    title: str
    cells: tuple[Cell | None, ...]


@dataclass(frozen=True)
class Table:
    sources: tuple[tuple[str, Report], ...]
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]


def table(reports: Sequence[tuple[Path, Report]], out: Path) -> Table:
    """The table of `reports` (each with the folder it was read from) for a page written into `out`."""
    columns: list[Column] = []
    for number, (folder, report) in enumerate(reports):
        href = _href(folder, out)
        for target in report.targets:
            if target.side == "client":
                name = target.command or target.spec
                columns.append(Column(number, target.index, name, target.transport, href, "client"))
            else:
                columns.append(Column(number, target.index, target.server_label, target.spec, href))
    grouped: dict[str, dict[int, list[Case]]] = {}
    info: dict[str, tuple[str, str, str]] = {}
    for position, column in enumerate(columns):
        for case in reports[column.report][1].cases:
            if case.target == column.target:
                grouped.setdefault(case.requirement, {}).setdefault(position, []).append(case)
                info.setdefault(case.requirement, (case.suite, case.level, case.title))
    rows = []
    for requirement in sorted(grouped, key=lambda r: (info[r][0], _level_order(info[r][1]), r)):
        _, level, title = info[requirement]
        cells = tuple(
            _cell(grouped[requirement].get(position, []), column) for position, column in enumerate(columns)
        )
        rows.append(Row(requirement, level, title, cells))
    sources = tuple((str(folder), report) for folder, report in reports)
    return Table(sources, tuple(columns), tuple(rows))


def _level_order(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def _href(folder: Path, out: Path) -> str:
    relative = os.path.relpath(folder.resolve(), out.resolve())
    return quote(Path(relative).as_posix(), safe="/")


def _cell(cases: list[Case], column: Column) -> Cell | None:
    if not cases:
        return None
    rank = {verdict: number for number, verdict in enumerate(WORST_FIRST)}
    worst = min(cases, key=lambda c: rank.get(c.verdict, -1))  # an unknown verdict first: never hidden
    count = sum(c.verdict == worst.verdict for c in cases)
    link = f"{column.href}/report.html#case-{case_anchor(worst.key)}"
    return Cell(worst.verdict, count, len(cases), link)


def _heading(column: Column) -> str:
    return f"{column.server} · {column.label}" if column.label else column.server


def markdown(data: Table) -> str:
    """The table in Markdown, with the reports it was made from listed above it."""
    out = ["# MCP conformance, side by side", ""]
    for number, (folder, report) in enumerate(data.sources, 1):
        head = report.header
        state = "complete" if report.footer.complete else f"INCOMPLETE ({report.footer.reason})"
        out.append(
            f"{number}. {_md(folder)}: run {_md(head.run_id)}, harness {_md(head.harness.version)}, "
            f"suites {_md(', '.join(head.suites))}, {_md(state)}"
        )
    out += [
        "",
        "Each cell is the worst verdict of the requirement's cases for that server or client, with how many "
        "of them have it; it links to that case in the report. `-` : no case of it ran there.",
        "",
        "| requirement | level | "
        + " | ".join(f"{_md(_heading(c))} ({c.report + 1})" for c in data.columns)
        + " |",
        "|---|---|" + "---|" * len(data.columns),
    ]
    for row in data.rows:
        cells = [f"[{cell.text}]({cell.link})" if cell else "-" for cell in row.cells]
        out.append(f"| {_md(row.requirement)} | {_md(row.level)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --soft:#f6f8fa; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0; } .meta { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); position: sticky; top: 0; }
th.server { min-width: 120px; font-weight: 600; } th.server small { display: block; color: var(--muted);
       font-weight: normal; }
td.cell a { display: inline-block; min-width: 72px; padding: 1px 6px; border-radius: 4px; font-weight: 600;
       text-align: center; font-size: 12px; text-decoration: none; color: inherit; }
td.none { color: #afb8c1; text-align: center; }
.v-PASS { background: #dafbe1; color: #116329; } .v-FAIL { background: #ffebe9; color: #a40e26; }
.v-WARN { background: #fff8c5; color: #7d4e00; } .v-SKIP { background: #eaeef2; color: #424a53; }
.v-ERROR { background: #ffd8b5; color: #8a3100; } .v-XFAIL { background: #ddf4ff; color: #0a3069; }
.v-XPASS { background: #fbefff; color: #6e2d94; }
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(CSS.encode("utf-8")).digest()).decode()
    return (
        f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )


def _e(text: object) -> str:
    """Escape for HTML text or a quoted attribute, control, bidi and other invisible characters shown
    as their escapes (`text.visible`)."""
    return html.escape(visible(text if isinstance(text, str) else str(text)), quote=True)


def page(data: Table) -> str:
    """The table as one self-contained HTML page."""
    out = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>MCP conformance, side by side</title><style>{CSS}</style></head><body>",
        '<header><h1>MCP conformance, side by side</h1><ol class="meta">',
    ]
    for folder, report in data.sources:
        head = report.header
        state = "complete" if report.footer.complete else f"INCOMPLETE ({report.footer.reason})"
        out.append(
            f"<li>{_e(folder)}: run {_e(head.run_id)} · harness {_e(head.harness.version)} · suites "
            f"{_e(', '.join(head.suites))} · {_e(state)}</li>"
        )
    out.append(
        '</ol><p class="meta">Each cell is the worst verdict of the requirement\'s cases for that server '
        "or client, "
        "with how many of them have it; it links to that case in the report. A dash: no case of it ran "
        "there.</p></header>"
    )
    out.append('<table id="compare"><thead><tr><th>requirement</th><th>level</th>')
    for column in data.columns:
        out.append(
            f'<th class="server">{_e(column.server)}<small>{_e(column.label)}</small>'
            f"<small>report {column.report + 1}, target {column.target}</small></th>"
        )
    out.append("</tr></thead><tbody>")
    for row in data.rows:
        out.append(f'<tr><th title="{_e(row.title)}">{_e(row.requirement)}</th><td>{_e(row.level)}</td>')
        for cell in row.cells:
            if cell is None:
                out.append('<td class="none">-</td>')
            else:
                out.append(
                    f'<td class="cell"><a class="v-{_e(cell.verdict)}" href="{_e(cell.link)}">'
                    f"{_e(cell.text)}</a></td>"
                )
        out.append("</tr>")
    out.append("</tbody></table></body></html>\n")
    return "".join(out)


def columns_said(data: Table) -> str:
    """How many columns of each side: `3 servers`, `4 clients`, `2 servers, 2 clients`."""
    counts = {side: sum(c.side == side for c in data.columns) for side in ("server", "client")}
    said = [f"{n} {side}{'' if n == 1 else 's'}" for side, n in counts.items() if n]
    return ", ".join(said) or "0 servers"

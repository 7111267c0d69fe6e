"""`compare` puts many servers (or clients) side by side: a requirement per row, a server (each target of
each report; a client over one transport) per column, each cell the worst verdict of that requirement's
cases there, linking to the case in that report's report.html. Built from real runs of the raw reference
server and two mutants, and of the reference client and two client mutants."""

from __future__ import annotations

import copy
import json
import re
import shlex
from pathlib import Path

import pytest

from conformance.reporting import side_by_side
from conformance.reporting.model import Report, case_anchor, load
from tests.conftest import PY, cli

RAW = [PY, "-m", "tests.servers.raw_server"]
SELECT = "CALL-001,id-echo"
REVISIONS = ("2026-07-28", "2025-11-25", "2025-06-18")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two reports: a `[[targets]]` file of the reference and the wrong-id mutant (one report, two
    targets, spread over -j 2), and the schema-violation mutant alone."""
    root = tmp_path_factory.mktemp("compare")
    (root / "two.toml").write_text(
        f'[[targets]]\ncommand = {json.dumps(RAW)}\nlabel = "reference"\n'
        f'[[targets]]\ncommand = {json.dumps([*RAW, "--defect", "wrong-id"])}\nlabel = "wrong ids"\n',
        encoding="utf-8",
    )
    (root / "one.toml").write_text(
        f'[target]\ncommand = {json.dumps([*RAW, "--defect", "schema-violation"])}\nlabel = "bad schema"\n',
        encoding="utf-8",
    )
    for name, jobs in (("two", "2"), ("one", "1")):
        done = cli(
            "run", "--server", str(root / f"{name}.toml"), "-k", SELECT, "-j", jobs, "--quiet",
            "--timeout", "5", "--report-dir", str(root / "runs" / name),
        )  # fmt: skip
        assert done.returncode == 1, done.stdout + done.stderr
    return root


def _cells(markdown: str) -> dict[str, list[str]]:
    rows = [line for line in markdown.splitlines() if line.startswith("| BASE-")]
    return {row.split(" | ")[0].removeprefix("| "): row.strip(" |").split(" | ")[2:] for row in rows}


def test_compare_shows_every_server_against_every_requirement(reports: Path) -> None:
    out = reports / "page"
    done = cli(
        "compare",
        str(reports / "runs" / "two"),
        str(reports / "runs" / "one" / "report.json"),
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    markdown = (out / "compare.md").read_text(encoding="utf-8")
    assert markdown in done.stdout
    header = next(line for line in markdown.splitlines() if line.startswith("| requirement"))
    assert header == (
        "| requirement | level | raw-reference 1.0.0 · reference (1) | raw-reference 1.0.0 · wrong ids (1) "
        "| raw-reference 1.0.0 · bad schema (2) |"
    )
    two, one = "../runs/two/report.html", "../runs/one/report.html"
    key = "base.call.structured-matches-schema[stdio@2026-07-28]"
    echo = "base.rpc.id-echo[stdio@2026-07-28]"
    assert _cells(markdown) == {
        "BASE-CALL-001": [
            f"[PASS 3/3]({two}#case-{case_anchor(key)})",
            f"[PASS 3/3]({two}#case-{case_anchor(key + '#1')})",
            f"[FAIL 3/3]({one}#case-{case_anchor(key)})",
        ],
        "BASE-RPC-002": [
            f"[PASS 3/3]({two}#case-{case_anchor(echo)})",
            f"[FAIL 3/3]({two}#case-{case_anchor(echo + '#1')})",
            f"[PASS 3/3]({one}#case-{case_anchor(echo)})",
        ],
    }
    for link, anchor in re.findall(r"\]\(([^)#]+)#([^)]+)\)", markdown):
        # Each link lands on the case's own element in that report's page.
        assert f'id="{anchor}"' in (out / link).read_text(encoding="utf-8"), (link, anchor)

    page = (out / "compare.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert f'<a class="v-FAIL" href="{two}#case-{case_anchor(echo + "#1")}">FAIL 3/3</a>' in page
    assert page.count('class="server"') == 3


def test_a_worst_verdict_wins_the_cell_and_a_missing_case_is_a_dash(reports: Path, tmp_path: Path) -> None:
    report = load(reports / "runs" / "one")
    data = json.loads(json.dumps(dict(report.data)))
    rows = [c for c in data["cases"] if c["requirement"] == "BASE-RPC-002"]
    rows[1]["verdict"], rows[2]["verdict"] = "SKIP", "WARN"
    data["cases"] = [c for c in data["cases"] if c["requirement"] != "BASE-CALL-001"]
    table = side_by_side.table([(reports / "runs" / "one", Report.from_json(data))], tmp_path)
    (row,) = table.rows
    assert row.requirement == "BASE-RPC-002" and row.level == "MUST"
    assert row.cells[0] is not None and row.cells[0].text == "WARN 1/3"
    assert row.cells[0].link.endswith(f"#case-{case_anchor(rows[2]['key'])}")
    other = copy.deepcopy(data)
    other["cases"] = [{**c, "verdict": "SKIP"} for c in rows]
    both = side_by_side.table(
        [(tmp_path / "a", Report.from_json(data)), (tmp_path / "b", Report.from_json(other))], tmp_path
    )
    assert [c.text if c else "-" for c in both.rows[0].cells] == ["WARN 1/3", "SKIP 3/3"]


def test_server_text_is_escaped_in_both_renderings(reports: Path, tmp_path: Path) -> None:
    data = json.loads(json.dumps(dict(load(reports / "runs" / "one").data)))
    data["targets"][0]["server_info"] = {
        "name": "<script>alert(1)</script> | [x](http://e.example)",
        "version": "\x1b[31m",
    }
    data["targets"][0]["spec"] = "</th><img src=x onerror=alert(1)>"
    table = side_by_side.table([(tmp_path, Report.from_json(data))], tmp_path)
    page, markdown = side_by_side.page(table), side_by_side.markdown(table)
    assert "<script>" not in page and "<img" not in page and "\x1b" not in page
    assert "&lt;script&gt;" in page and "\\x1b[31m" in page
    header = next(line for line in markdown.splitlines() if line.startswith("| requirement"))
    assert header.count(" | ") == 2, "a server's pipe cannot add a column"
    assert "<script>" not in markdown and "](http" not in markdown and "\x1b" not in markdown


def test_case_anchors_are_safe_and_tell_alike_keys_apart() -> None:
    keys = [
        "base.rpc.id-echo[stdio@2025-11-25]",
        "base.rpc.id-echo[stdio@2025-11-25]#1",
        "a.b",
        "a-b",
        "é",
        "",
    ]
    anchors = [case_anchor(key) for key in keys]
    assert len(set(anchors)) == len(anchors)
    assert all(re.fullmatch(r"[A-Za-z0-9-]+", anchor) for anchor in anchors)
    assert anchors[0].startswith("base-rpc-id-echo-stdio-2025-11-25-")
    assert case_anchor(keys[0]) == anchors[0], "the same key, the same anchor, in any report"


def test_the_page_loads_cleanly_in_chromium_with_its_style(
    chromium: str, reports: Path, tmp_path: Path
) -> None:
    """The page's own style is allowed by its Content-Security-Policy (a refused style would leave the
    cells uncoloured and log an error), and nothing else is loaded."""
    from tests.browser import Browser

    out = reports / "browser"
    done = cli("compare", str(reports / "runs" / "two"), str(reports / "runs" / "one"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open((out / "compare.html").as_uri())
        assert browser.evaluate("document.title") == "MCP conformance, side by side"
        assert browser.evaluate("document.querySelectorAll('#compare tbody td.cell a').length") == 6
        colour = browser.evaluate("getComputedStyle(document.querySelector('a.v-FAIL')).backgroundColor")
        assert colour == "rgb(255, 235, 233)"
        assert browser.errors() == []


def test_compare_puts_clients_side_by_side_with_a_server(reports: Path) -> None:
    """Client reports (`mcp-conformance client`): the reference client, a mutant that FAILs
    CLIENT-TOOLS-001 and one that acts the scenario out, then exits 1 (the contract's ERROR), a column
    per client and transport, beside a server report whose cells of client rows are dashes."""
    runs = reports / "client-runs"
    clients = {
        "reference": [PY, "-m", "conformance_reference.client"],
        "arguments-list": [PY, "-m", "tests.servers.client_mutants", "arguments-list"],
        "exits-one": [PY, "-m", "tests.servers.client_mutants", "exits-one"],
    }
    for name, argv in clients.items():
        done = cli(
            "client", "--command", shlex.join(argv), "--scenario", "tools_call", "--transport", "http",
            "--transport", "stdio", "--revision", "2025-11-25", "--quiet", "--report-dir", str(runs / name),
        )  # fmt: skip
        assert done.returncode == (0 if name == "reference" else 1), done.stdout + done.stderr
    out = reports / "client-page"
    done = cli(
        "compare", *(str(runs / name) for name in clients), str(reports / "runs" / "one"), "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "(1 server, 6 clients, " in done.stdout
    markdown = (out / "compare.md").read_text(encoding="utf-8")
    header = next(line for line in markdown.splitlines() if line.startswith("| requirement"))
    headings = [
        f"{_md_text(shlex.join(argv))} · {transport} ({number})"
        for number, argv in enumerate(clients.values(), 1)
        for transport in ("http", "stdio")
    ]
    assert (
        header
        == "| requirement | level | " + " | ".join(headings) + " | raw-reference 1.0.0 · bad schema (4) |"
    )
    rows = {
        line.split(" | ")[0].removeprefix("| "): [
            cell.split("]")[0].lstrip("[") for cell in line.strip(" |").split(" | ")[2:]
        ]
        for line in markdown.splitlines()
        if line.startswith("| CLIENT-")
    }
    assert rows["CLIENT-TOOLS-001"] == ["PASS 1/1"] * 2 + ["FAIL 1/1"] * 2 + ["PASS 1/1"] * 2 + ["-"]
    assert rows["CLIENT-RUN-001"] == ["PASS 1/1"] * 4 + ["ERROR 1/1"] * 2 + ["-"]
    for link, anchor in re.findall(r"\]\(([^)#]+)#([^)]+)\)", markdown):
        assert f'id="{anchor}"' in (out / link).read_text(encoding="utf-8"), (link, anchor)
    page = (out / "compare.html").read_text(encoding="utf-8")
    assert page.count('class="server"') == 7


def _md_text(text: str) -> str:
    from conformance.reporting.views import _md

    return _md(text)

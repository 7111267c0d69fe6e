"""The HTML report: one self-contained file from a real run, checked by parsing and in a real Chromium.

The report comes from `mcp-conformance run` against two raw-server mutants, so it holds FAIL, WARN,
SKIP and PASS cases with evidence and transcripts. The page must read like the outcome: a banner with
the result and what the exit code means, tiles counting the scored cases as the banner does, the
findings (cases grouped by defect, folded cards linking to their cases), a requirement matrix whose
cells link to their cases, then the cases that did not pass worst first with their finding before the
folded transcript, the SKIP and PASS cases folded. In the browser: the page loads with no console
error (a wrong CSP hash or a script error would show), the first visible case is a FAIL, a matrix link
leads to its case (a folded PASS one too), the filters hide and show cases on real mouse clicks,
screenshots at 1280 and 420 px wide are written into the test's tmp dir, and one stdio server's whole
default run is at most 10 screens of 2,000 px tall.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformance.model.requirements import get
from conformance.model.verdicts import EXIT_MEANING, WORST_FIRST
from conformance.reporting import findings, html_report, model
from tests.browser import Browser
from tests.conftest import cli, stdio

RAW = "tests.servers.raw_server"


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html-report")
    # schema-violation FAILs BASE-CALL-001; cursor-loop WARNs BASE-TOOLS-006 and SKIPs what needs a
    # complete listing.
    servers = [stdio(RAW, "--defect", "schema-violation"), stdio(RAW, "--defect", "cursor-loop")]
    done = cli(
        "run",
        *(arg for server in servers for arg in ("--server", server)),
        *("--suite", "base", "-k", "tools,call", "--protocol", "2025-11-25", "--timeout", "5", "--quiet"),
        *("--report-dir", str(out)),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def report(report_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert {"PASS", "FAIL", "WARN", "SKIP"} <= {c["verdict"] for c in data["cases"]}
    return data


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open = tag if tag in self.inline else None

    def handle_data(self, data: str) -> None:
        if self._open:
            self.inline[self._open].append(data)

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def test_the_html_view_is_written_beside_the_others(report_dir: Path) -> None:
    assert {p.name for p in report_dir.iterdir()} >= {"report.json", "report.md", "junit.xml", "report.html"}


def _page(report_dir: Path) -> tuple[str, Elements]:
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    parser = Elements()
    parser.feed(page)
    return page, parser


def test_one_self_contained_file(report_dir: Path) -> None:
    _, parser = _page(report_dir)
    tags = [tag for tag, _ in parser.tags]
    assert tags.count("script") == 1 and tags.count("style") == 1 and "link" not in tags
    fetching = [
        (tag, attrs)
        for tag, attrs in parser.tags
        if {"src", "srcset", "action"} & set(attrs) or not (attrs.get("href") or "#").startswith("#")
    ]
    assert fetching == [], "nothing in the page may load another resource"
    ids = [attrs["id"] for _, attrs in parser.tags if attrs.get("id")]
    assert len(ids) == len(set(ids)), "every id is unique"
    hrefs = {attrs["href"] for tag, attrs in parser.tags if tag == "a"}
    assert hrefs and all(str(href)[1:] in ids for href in hrefs), "every link leads to an element here"
    csp = next(
        a["content"]
        for t, a in parser.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None and "default-src 'none'" in csp
    for kind in ("script", "style"):
        body = "".join(parser.inline[kind])
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp, f"the CSP allows exactly the inline {kind}"


def test_the_page_is_derived_from_the_report_alone_and_deterministic(
    report_dir: Path, report: dict[str, Any]
) -> None:
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    assert html_report.render(report) == html_report.render(model.Report.from_json(report)) == page


def test_the_banner_says_the_result_and_what_the_exit_code_means(report_dir: Path) -> None:
    page, _ = _page(report_dir)
    banner = page[page.index('<section id="outcome"') : page.index("</section>")]
    assert 'class="banner r-failed"' in banner and '<p class="result">Failed</p>' in banner
    assert f"Exit code 1: {html.escape(EXIT_MEANING[1], quote=True)}." in banner
    order = ['id="outcome"', 'id="summary"', 'id="findings"', 'id="matrix"', 'id="cases"']
    assert [page.index(part) for part in order] == sorted(page.index(part) for part in order)


def _outcome(report: dict[str, Any], edit: Any) -> html_report.Headline:
    data = copy.deepcopy(report)
    edit(data)
    return html_report.headline(data)


def test_every_way_a_run_ends_has_its_words_and_exit_code(report: dict[str, Any]) -> None:
    def passed(data: dict[str, Any]) -> None:
        data["cases"] = [c for c in data["cases"] if c["verdict"] != "FAIL"]

    def skipped(data: dict[str, Any]) -> None:
        data["cases"] = [c | {"verdict": "SKIP"} for c in data["cases"]]

    def unreachable(data: dict[str, Any]) -> None:
        data["targets"][1]["unreachable"] = "connection refused"

    def incomplete(data: dict[str, Any]) -> None:
        data["footer"] |= {"complete": False, "reason": "a target stopped answering"}

    def interrupted(data: dict[str, Any]) -> None:
        data["footer"] |= {"complete": False, "reason": "interrupted", "exit_code": 130}

    found = {
        name: _outcome(report, edit)
        for name, edit in [
            ("passed", passed),
            ("failed", lambda data: None),
            ("not judged", skipped),
            ("unreachable", unreachable),
            ("incomplete", incomplete),
            ("interrupted", interrupted),
        ]
    }
    assert {name: (o.result, o.code) for name, o in found.items()} == {
        "passed": ("passed", 0),
        "failed": ("failed", 1),
        "not judged": ("not judged", 1),
        "unreachable": ("unreachable", 3),
        "incomplete": ("incomplete", 1),
        "interrupted": ("interrupted", 130),
    }
    assert all(o.meaning == EXIT_MEANING[o.code] for o in found.values())
    assert "connection refused" in found["unreachable"].why
    assert "WARN" in found["passed"].why and "do not fail a run" in found["passed"].why
    page = html_report.render(copy.deepcopy(report) | {"cases": []})
    assert 'class="banner r-passed"' in page and "Every case passed." in page


def test_zero_tiles_are_neutral_and_a_fail_tile_is_red(report_dir: Path, report: dict[str, Any]) -> None:
    _, parser = _page(report_dir)
    tiles = {
        str(attrs["class"]).split()[-1]: str(attrs["class"]).split()[1]
        for tag, attrs in parser.tags
        if tag == "div" and str(attrs.get("class", "")).startswith("tile ")
    }
    counts = Counter(c["verdict"] for c in report["cases"])
    tone = {"v-FAIL": "t-bad", "v-ERROR": "t-bad", "v-WARN": "t-warn", "v-PASS": "t-good"}
    for kind, shown in tiles.items():
        if kind.startswith("v-") and not counts[kind[2:]]:
            assert shown == "zero", kind
        elif kind in tone:
            assert shown == tone[kind], kind
    assert tiles["v-ERROR"] == "zero" and tiles["v-FAIL"] == "t-bad"


def _tile_counts(page: str) -> dict[str, int]:
    found = re.findall(r'<div class="tile [^"]*">([A-Za-z]+)<b>(\d+)</b></div>', page)
    return {name: int(count) for name, count in found}


def test_the_tiles_count_the_scored_cases_as_the_banner_and_the_report_do(report: dict[str, Any]) -> None:
    """The tiles show the scored totals (`Report.apart`), the banner's count; not-scored ones apart."""
    data = copy.deepcopy(report)
    data["cases"] = [c for c in data["cases"] if c["verdict"] != "FAIL"]  # passed: the banner counts
    for case in data["cases"][:3]:  # three cases of an unclaimed extension: counted apart
        case["unscored"] = "extension"
    unscored = Counter(c["verdict"] for c in data["cases"] if c.get("unscored"))
    data["footer"]["unscored"] = dict(unscored) | {"cases": 3}
    data["footer"]["totals"] = model.Report.from_json(data).counts()
    scored, apart = model.Report.from_json(data).apart()
    page = html_report.render(data)
    tiles = _tile_counts(page)
    assert tiles == {v: scored[v] for v in tiles if v != "cases"} | {"cases": scored["cases"]}
    assert scored["cases"] == len(data["cases"]) - 3 and apart["cases"] == 3
    banner = page[page.index('<section id="outcome"') : page.index("</section>")]
    assert f"{scored['cases']} cases, none blocking" in banner and "3 more not scored" in banner
    assert "3 more cases not scored" in page[page.index('id="summary"') : page.index('id="findings"')]


def test_cases_that_did_not_pass_come_first_worst_first_and_skip_and_pass_are_folded(
    report_dir: Path, report: dict[str, Any]
) -> None:
    page, parser = _page(report_dir)
    cases = report["cases"]
    shown = [attrs for tag, attrs in parser.tags if "case" in str(attrs.get("class", "")).split()]
    order = ["FAIL", "ERROR", "XPASS", "WARN", "XFAIL", "SKIP-blocked", "SKIP", "PASS"]

    def group(case: dict[str, Any]) -> str:
        return "SKIP-blocked" if case["verdict"] == "SKIP" and case.get("blocked_by") else case["verdict"]

    expected = sorted(cases, key=lambda c: order.index(group(c)))  # stable: report order within a group
    assert [a["data-verdict"] for a in shown] == [c["verdict"] for c in expected]
    assert len({a["id"] for a in shown}) == len(cases) and all(
        str(a["id"]).startswith("case-") for a in shown
    )
    skipped = page[
        page.index('<details id="skipped" class="cases-fold">') : page.index('<details id="passed"')
    ]
    skips = [c for c in cases if c["verdict"] == "SKIP"]
    assert f"<summary>{len(skips)} SKIP cases (scored: " in skipped
    assert skipped.count('<tr class="case"') == len(skips) and "<article" not in skipped
    folded = page[page.index('<details id="passed" class="cases-fold">') :]
    passes = [c for c in cases if c["verdict"] == "PASS"]
    assert f"<summary>{len(passes)} PASS cases (folded)</summary>" in folded
    assert folded.count('<tr class="case"') == len(passes) and "<article" not in folded


def test_the_findings_group_the_cases_by_defect_and_link_to_each(
    report_dir: Path, report: dict[str, Any]
) -> None:
    page, parser = _page(report_dir)
    section = page[page.index('<section id="findings">') : page.index('<section id="matrix">')]
    cards = re.findall(
        r'<details class="fold finding-card f-(\w+)" id="(finding-[^"]+)">(.*?)</details>', section
    )
    found = findings.findings(model.Report.from_json(report).cases)
    assert [(verdict, fid) for verdict, fid, _ in cards] == [
        (str(f.verdict), f"finding-{f.fingerprint}") for f in found
    ]
    assert [c[0] for c in cards][:1] == ["FAIL"], "FAILs first"
    problems = [c for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")]
    linked = [
        html.unescape(k) for _, _, body in cards for k in re.findall(r"<li><a [^>]*><code>(.*?)</code>", body)
    ]
    assert sorted(linked) == sorted(c["key"] for c in problems), "each case under exactly one finding"
    ids = {attrs["id"] for _, attrs in parser.tags if attrs.get("id")}
    assert set(re.findall(r'href="#(case-[^"]+)"', section)) <= ids
    assert f'<a href="#findings">{len(found)} finding' in page


def test_a_case_that_did_not_pass_shows_its_finding_first_and_folds_the_transcript(
    report_dir: Path, report: dict[str, Any]
) -> None:
    page, _ = _page(report_dir)
    articles = re.findall(r'<article class="case .*?</article>', page, re.S)
    problems = [c for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")]
    assert len(articles) == len(problems)
    by_key = {c["key"]: c for c in problems}
    for article in articles:
        key = html.unescape(re.search(r"<h3>.*?<code>(.*?)</code>", article).group(1))  # type: ignore[union-attr]
        case = by_key[key]
        # A case that fails the run shows open; a WARN is folded to its summary (its finding says it).
        opened = '<details class="case-body" open>' in article
        assert opened == (case["verdict"] in ("FAIL", "ERROR", "XPASS")), key
        message = article.index('<p class="finding">')
        quote = article.index(html.escape(get(case["requirement"]).quote, quote=True))
        assert message < quote
        if case["evidence"]:
            assert quote < article.index("<h4>Evidence</h4>") or "fold evidence" in article
            for key in case["evidence"]:
                assert (
                    f"<dt>{html.escape(key)}</dt>" in article
                    or f"<code>{html.escape(key)}</code>:" in article
                )
        if case["transcript"]:
            transcript = article.index('<details class="fold transcript"><summary>Wire transcript: ')
            assert message < transcript and article.count("<pre>") >= len(case["transcript"])
            assert " open" not in article[transcript : transcript + 40]


def test_a_large_evidence_value_is_folded_with_its_size_below_the_fault(report: dict[str, Any]) -> None:
    data = copy.deepcopy(report)
    failed = next(c for c in data["cases"] if c["verdict"] == "FAIL")
    listing = {"tools": [{"name": f"tool{i}", "inputSchema": {"type": "object"}} for i in range(60)]}
    failed["evidence"] = {"tools/list": listing, "response": '{"result": 42}'}
    page = html_report.render(data)
    article = re.search(r'<article class="case c-FAIL".*?</article>', page, re.S)
    assert article is not None
    text = article.group()
    lead = text.index('<dt>response</dt><dd><pre class="lead">')
    folded = text.index('<details class="fold evidence"><summary>Evidence <code>tools/list</code>: ')
    assert lead < folded and re.search(r"<code>tools/list</code>: [0-9.]+ kB, \d+ lines</summary>", text)


def test_the_matrix_rows_are_problems_first_and_every_cell_links_to_its_case(
    report_dir: Path, report: dict[str, Any]
) -> None:
    page, parser = _page(report_dir)
    matrix = re.findall(r'<table class="matrix">.*?</table>', page, re.S)
    assert len(matrix) == 1 and all(c["requirement"] in matrix[0] for c in report["cases"])
    columns = {(c["target"], c["transport"], c["revision"]) for c in report["cases"]}
    assert matrix[0].split("</thead>")[0].count("<th>") == 1 + len(columns)
    rows = re.findall(r'<tr data-level="[^"]*"><th scope="row"><b>(.*?)</b>(.*?)</tr>', matrix[0], re.S)
    worst = [str(v) for v in WORST_FIRST]
    rank = {
        req: min(worst.index(c["verdict"]) for c in report["cases"] if c["requirement"] == req)
        for req in {c["requirement"] for c in report["cases"]}
    }
    assert [req for req, _ in rows] == sorted(rank, key=lambda r: (rank[r], r))
    ids = {attrs["id"] for _, attrs in parser.tags if attrs.get("id")}
    links = re.findall(r'href="#(case-[^"]+)"', matrix[0])
    assert links and set(links) <= ids
    assert all(row.count("<td") == len(columns) for _, row in rows)


def _visible(browser: Browser) -> int:
    """Cases a reader sees: not filtered out, not in a closed fold (whose content Chromium lays out
    but does not show, so `checkVisibility`, not client rects)."""
    count: int = browser.evaluate(
        "Array.from(document.querySelectorAll('.case')).filter(el => el.checkVisibility()).length"
    )
    return count


def _in_view(browser: Browser, element_id: str) -> bool:
    return bool(
        browser.evaluate(
            f"(() => {{ const r = document.getElementById({json.dumps(element_id)}).getBoundingClientRect();"
            " return r.height > 0 && r.top >= -1 && r.top < window.innerHeight; })()"
            f" && document.getElementById({json.dumps(element_id)}).checkVisibility()"
        )
    )


def _follow(browser: Any, selector: str) -> None:
    """Click the link `selector` and wait for the page to have handled the hashchange it causes: a
    listener added after the report's own runs after it, so once it has fired the case is revealed."""
    browser.evaluate(
        "window.__followed = new Promise(done =>"
        " window.addEventListener('hashchange', () => done(location.hash), {once: true}))"
    )
    browser.click(selector)
    browser.evaluate("window.__followed", awaiting=True)


def test_in_chromium_opens_on_the_outcome_links_and_filters_work_and_screenshots_are_taken(
    chromium: str, report_dir: Path, report: dict[str, Any], tmp_path: Path
) -> None:
    cases = report["cases"]
    judged = [c for c in cases if c["verdict"] not in ("PASS", "SKIP")]  # listed open or as a summary
    passes = [c for c in cases if c["verdict"] == "PASS"]
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.viewport(1280, 900)
        browser.open((report_dir / "report.html").as_uri())
        assert browser.evaluate("document.title").startswith("MCP conformance report")
        assert browser.evaluate("document.querySelector('#outcome .result').textContent") == "Failed"
        first = browser.evaluate(
            "Array.from(document.querySelectorAll('.case')).find(el => el.checkVisibility()).dataset.verdict"
        )
        assert first == "FAIL"
        # SKIP and PASS cases are folded: in the page, counted as shown by the filters, not laid out.
        assert browser.evaluate("document.getElementById('passed').open") is False
        assert browser.evaluate("document.getElementById('skipped').open") is False
        assert browser.evaluate("document.querySelectorAll('details.finding-card[open]').length") == 0
        assert _visible(browser) == len(judged)
        assert browser.evaluate("document.getElementById('shown').textContent") == (
            f"{len(cases)} of {len(cases)} cases shown"
        )
        shots = [browser.screenshot(tmp_path / "report-1280.png")]

        # A finding opens on a click and its case link leads to the case, whose fold opens.
        browser.click("details.finding-card.f-WARN > summary")
        assert browser.evaluate("document.querySelector('details.finding-card.f-WARN').open") is True
        target = browser.evaluate(
            "document.querySelector('details.finding-card.f-WARN li a').getAttribute('href')"
        )
        _follow(browser, "details.finding-card.f-WARN li a")
        assert browser.evaluate("location.hash") == target and _in_view(browser, target[1:])
        assert browser.evaluate(
            f"document.getElementById({json.dumps(target[1:])}).querySelector('details.case-body').open"
        ), "the WARN case's folded body opens"

        # A matrix cell leads to its case: a FAIL, then a PASS folded away (its fold opens).
        for verdict in ("FAIL", "PASS"):
            selector = f"table.matrix a.v-{verdict}"
            target = browser.evaluate(f"document.querySelector({json.dumps(selector)}).getAttribute('href')")
            _follow(browser, selector)
            assert browser.evaluate("location.hash") == target
            assert (
                browser.evaluate("document.querySelector(':target') && document.querySelector(':target').id")
                == (target[1:])
            )
            assert (
                browser.evaluate(f"document.getElementById({json.dumps(target[1:])}).dataset.verdict")
                == verdict
            )
            assert _in_view(browser, target[1:]), f"the {verdict} case is scrolled into view"
        assert browser.evaluate("document.getElementById('passed').open") is True
        assert _visible(browser) == len(judged) + len(passes)

        browser.click('input.filter[data-kind="verdict"][value="PASS"]')
        assert browser.evaluate("document.querySelector('input[value=\"PASS\"]').checked") is False
        assert _visible(browser) == len(judged)
        assert browser.evaluate("document.getElementById('shown').textContent") == (
            f"{len(cases) - len(passes)} of {len(cases)} cases shown"
        )
        browser.click('input.filter[data-kind="level"][value="MUST"]')
        assert _visible(browser) == sum(c["level"] != "MUST" for c in judged)
        browser.click('input.filter[data-kind="verdict"][value="PASS"]')
        browser.click('input.filter[data-kind="level"][value="MUST"]')
        assert _visible(browser) == len(judged) + len(passes)

        browser.evaluate("document.getElementById('passed').open = false; window.scrollTo(0, 0)")
        browser.viewport(420, 900)
        assert browser.evaluate("document.documentElement.scrollWidth") <= 420, "nothing overflows a phone"
        shots.append(browser.screenshot(tmp_path / "report-420.png"))
        assert browser.errors() == []
    for shot in shots:
        data = shot.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_in_chromium_with_scripts_off_every_case_is_there_and_a_link_opens_its_fold(
    chromium: str, report_dir: Path, report: dict[str, Any], tmp_path: Path
) -> None:
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.send("Emulation.setScriptExecutionDisabled", {"value": True})
        browser.viewport(1280, 900)
        browser.open((report_dir / "report.html").as_uri())
        assert (
            browser.evaluate("document.getElementById('shown').textContent")
            == f"{len(report['cases'])} cases"
        )
        assert browser.evaluate("document.querySelectorAll('.case[hidden]').length") == 0
        assert browser.evaluate("document.getElementById('passed').open") is False
        target = browser.evaluate("document.querySelector('table.matrix a.v-PASS').getAttribute('href')")
        browser.click("table.matrix a.v-PASS")
        assert browser.evaluate("location.hash") == target
        assert browser.evaluate("document.getElementById('passed').open") is True, (
            "the browser opens the fold"
        )
        assert _in_view(browser, target[1:])
        assert browser.errors() == []


def test_a_cell_with_several_cases_shows_the_worst_with_a_count(report: dict[str, Any]) -> None:
    data = copy.deepcopy(report)
    passed = next(c for c in data["cases"] if c["verdict"] == "PASS")
    twin = copy.deepcopy(passed) | {"key": passed["key"] + "-again", "verdict": "WARN", "message": "weak"}
    data["cases"].append(twin)
    page = html_report.render(data)
    anchor = "case-" + model.case_anchor(twin["key"])
    assert f'id="{anchor}"' in page
    cell = re.search(
        rf'<a class="verdict v-WARN" href="#{re.escape(anchor)}" title="[^"]*">WARN &times;2</a>', page
    )
    assert cell is not None and "PASS 1" in cell.group() and "WARN 1" in cell.group()


#: The page of one stdio server's default run (every default pack, every revision) is read on a
#: screen: at most this many screens of this height, laid out 1280 px wide, with nothing unfolded.
SCREENS, SCREEN_PX = 10, 2000


@pytest.fixture(scope="module")
def one_server_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A default run of one stdio server with a defect: FAILs (shown open), WARNs, SKIPs and PASSes in
    each revision it speaks, as a user's first `mcp-conformance run --server stdio:...` writes."""
    out = tmp_path_factory.mktemp("one-server")
    server = stdio(RAW, "--defect", "schema-violation")
    done = cli("run", "--server", server, "--timeout", "5", "--quiet", "--report-dir", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    return out


def _png_height(path: Path) -> int:
    """A PNG's height in pixels, from its IHDR chunk (bytes 20 to 24, big-endian)."""
    return int.from_bytes(path.read_bytes()[20:24], "big")


def test_in_chromium_one_stdio_servers_page_is_at_most_ten_screens(
    chromium: str, one_server_dir: Path, tmp_path: Path
) -> None:
    data = json.loads((one_server_dir / "report.json").read_text(encoding="utf-8"))
    assert len({c["revision"] for c in data["cases"]}) >= 3 and {"FAIL", "SKIP", "PASS"} <= {
        c["verdict"] for c in data["cases"]
    }
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.viewport(1280, 900)
        browser.open((one_server_dir / "report.html").as_uri())
        height = browser.evaluate("document.documentElement.scrollHeight")
        shot = browser.screenshot(tmp_path / "one-server-1280.png")
        assert browser.errors() == []
    assert _png_height(shot) == height
    assert height <= SCREENS * SCREEN_PX, f"{height} px is {height / SCREEN_PX:.1f} screens"

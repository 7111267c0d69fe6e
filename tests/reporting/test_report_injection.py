"""A hostile server cannot change any view: HTML, Markdown, JUnit and the terminal summary.

The base suite runs against tests/servers/hostile_server.py, whose names, descriptions, identity and
error messages carry `<script>`, `<img onerror>`, HTML and Markdown links and images, table pipes
(one behind a backslash), emphasis, a heading, `]]>` and control characters. Each view of that real
report must have exactly the structure of the same report with every server string made harmless
(same elements and attributes, same rendered Markdown, same XML), while still showing the text.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from conformance.reporting import html_report, views
from tests.browser import Browser
from tests.conftest import run, stdio
from tests.servers.hostile_server import PAYLOAD


@pytest.fixture(scope="module")
def hostile() -> dict[str, Any]:
    # --strict: the leaked trace misses BASE-HYG-001, a SHOULD, so the payload lands in a FAIL's evidence.
    report = run([stdio("tests.servers.hostile_server")], strict=True)
    problems = [c for c in report["cases"] if c["verdict"] != "PASS"]
    # The payload reached the parts of the report every view prints: identity, messages, evidence, wire.
    assert "<script>" in report["targets"][0]["server_info"]["name"]
    assert any("<img" in c["message"] for c in problems)
    assert any(c["verdict"] == "FAIL" and "<script>" in str(c["evidence"]) for c in problems)
    assert any("\\u0000" in e.get("text", "") for c in problems for e in c["transcript"])
    # Checks quote server text through repr() or JSON, so raw control characters rarely reach a message;
    # a check that quoted it as is would put them there: plant the raw payload where such a check would.
    failed = next(c for c in problems if c["verdict"] == "FAIL")
    failed["message"] += " " + PAYLOAD
    failed["evidence"]["server said"] = PAYLOAD
    return report


def _harmless(value: Any) -> Any:
    """The same report with every server-controllable character replaced, string lengths kept."""
    if isinstance(value, dict):
        return {k: _harmless(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_harmless(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"[^A-Za-z0-9 -]", "x", value)
    return value


@pytest.fixture(scope="module")
def harmless(hostile: dict[str, Any]) -> dict[str, Any]:
    twin = _harmless(copy.deepcopy(hostile))
    for mine, theirs in zip(twin["cases"], hostile["cases"], strict=True):
        mine["verdict"], mine["level"] = theirs["verdict"], theirs["level"]
    # The harness's own timestamps, not server text: kept, so the twin is still a valid report.
    twin["header"]["started"], twin["footer"]["finished"] = (
        hostile["header"]["started"],
        hostile["footer"]["finished"],
    )
    return twin


class Structure(HTMLParser):
    """Every element and attribute name, in document order: what a page is made of, not what it says."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shape: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.shape.append(f"<{tag} {' '.join(sorted(name for name, _ in attrs))}>")

    def handle_endtag(self, tag: str) -> None:
        self.shape.append(f"</{tag}>")


def _shape(page: str) -> list[str]:
    parser = Structure()
    parser.feed(page)
    parser.close()
    return parser.shape


def test_html_structure_is_independent_of_server_text(
    hostile: dict[str, Any], harmless: dict[str, Any]
) -> None:
    page = html_report.render(hostile)
    assert _shape(page) == _shape(html_report.render(harmless))
    assert "&lt;script&gt;window.__pwned" in page and "&lt;img src=x onerror=" in page
    assert "\x00" not in page and "\x1b" not in page


def test_markdown_renders_to_the_same_structure(hostile: dict[str, Any], harmless: dict[str, Any]) -> None:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    rendered = md.render(views.markdown(hostile))
    assert _shape(rendered) == _shape(md.render(views.markdown(harmless)))
    for tag in ("<script", "<img", "<a ", "<strong>", "<em>", "<code>"):
        assert tag not in rendered, tag
    assert "**bold**" in rendered and "&lt;script&gt;" in rendered  # shown as text, not obeyed


def test_junit_parses_with_the_same_structure_and_keeps_the_text(
    hostile: dict[str, Any], harmless: dict[str, Any]
) -> None:
    root = ET.fromstring(views.junit_xml(hostile))  # control characters would make this unparseable
    twin = ET.fromstring(views.junit_xml(harmless))
    assert [(e.tag, sorted(e.attrib)) for e in root.iter()] == [
        (e.tag, sorted(e.attrib)) for e in twin.iter()
    ]
    failures = root.findall(".//failure")
    assert failures and any("<script>" in (f.text or "") for f in failures)
    assert any("\\x1b[31m" in (f.get("message") or "") for f in failures)  # shown, not raw


def test_terminal_summary_carries_no_escape_sequences(
    hostile: dict[str, Any], harmless: dict[str, Any]
) -> None:
    text = views.summary_text(hostile)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)
    assert len(text.splitlines()) == len(views.summary_text(harmless).splitlines())
    assert "\\x1b[31m" in text  # shown, not obeyed


def test_hostile_page_runs_nothing_in_chromium(
    chromium: str, hostile: dict[str, Any], tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    page.write_text(html_report.render(hostile), encoding="utf-8")
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open(page.as_uri())
        assert browser.evaluate("typeof window.__pwned") == "undefined"
        assert browser.evaluate("document.scripts.length") == 1
        assert browser.evaluate("document.images.length") == 0
        # The page's own links (matrix cells, the banner) lead to its own elements; server text adds none.
        assert browser.evaluate(
            "Array.from(document.links).every(a => a.getAttribute('href').startsWith('#')"
            " && document.getElementById(a.getAttribute('href').slice(1)) !== null)"
        )
        assert browser.evaluate("document.body.textContent.includes('window.__pwned')") is True
        browser.screenshot(tmp_path / "hostile.png")
        assert browser.errors() == []

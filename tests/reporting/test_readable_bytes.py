"""Bytes in any view are text with escapes, never a Python `b'...'` repr (issue 12, item 8).

A run whose evidence holds bytes a server sent (stdout that is not UTF-8, with a terminal escape) and
bytes the harness sent (the malformed line of the parse-error probe) is rendered in every view: the
terminal, report.json, report.md, junit.xml and report.html. None may show a bytes repr.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import pytest

from conformance.reporting import canonical, html_report, views
from conformance.text import bytes_text, readable
from tests.conftest import cli, stdio

#: A bytes repr as any view may write it: plain, JSON-escaped, or HTML/XML-escaped quotes.
BYTES_REPR = re.compile(r"""(?<![\w\\])b(?:'|"|\\"|&#x27;|&#39;|&apos;|&quot;)""")


def test_bytes_text_escapes_only_what_cannot_be_shown() -> None:
    assert bytes_text(b'{"id": 1, "method": "tools/list", ') == '{"id": 1, "method": "tools/list", '
    assert bytes_text("café ✓".encode()) == "café ✓"
    # Not UTF-8, controls, a terminal escape, a bidi override; the backslash is doubled, so an escape
    # cannot be mistaken for text that happens to read `\xff`.
    raw = b"\xff\xfe\x00\t\r\n\x1b[31m\\xff \xe2\x80\xae"
    assert bytes_text(raw) == "\\xff\\xfe\\x00\\t\\r\\n\\x1b[31m\\\\xff \\u202e"
    assert bytes_text(b"abcdef", 3) == "abc... (6 bytes)"
    assert readable(b"\xff") == "\\xff" and readable(3) == "3"


def _no_bytes_repr(name: str, text: str) -> None:
    match = BYTES_REPR.search(text)
    assert match is None, (
        f"{name} shows a bytes repr: …{text[max(match.start() - 80, 0) : match.end() + 80]}…"
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    binary = stdio("tests.servers.raw_server", "--defect", "stdout-binary")
    silent = stdio("tests.servers.raw_server", "--defect", "no-parse-error")
    out = tmp_path_factory.mktemp("reports")
    done = cli(
        "run", "--server", binary, "--server", silent, "--suite", "base", "--protocol", "2025-11-25",
        "-k", "parse-error,stdout-only", "--report-dir", str(out),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    return done, out


def test_no_view_of_a_run_shows_a_bytes_repr(ran: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, out = ran
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    cases = {(c["check"], c["target"]): c for c in report["cases"]}
    stdout_case = cases[("base.stdio.stdout-only-messages", 0)]
    # The server's bytes, readable: the invalid bytes and the escape sequence escaped, the rest as text.
    assert stdout_case["verdict"] == "FAIL"
    assert stdout_case["evidence"]["why"] == "\\xff\\xfe boot \\x1b[31mred\\x1b[0m café"
    probe = cases[("base.rpc.parse-error", 1)]
    assert probe["verdict"] != "PASS"
    assert '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", ' in probe["message"]
    views_seen = {"terminal": done.stdout + done.stderr}
    for name in ("report.json", "report.md", "junit.xml", "report.html"):
        views_seen[name] = (out / name).read_text(encoding="utf-8")
    for name, text in views_seen.items():
        _no_bytes_repr(name, text)


def test_bytes_left_in_evidence_or_a_transcript_are_text_in_every_view(
    ran: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    """Defence in depth: a check that puts bytes in its evidence, and a transcript entry that is not
    UTF-8, still reach every view (and the written report) as text with escapes."""
    report = json.loads((ran[1] / "report.json").read_text(encoding="utf-8"))
    case = next(c for c in report["cases"] if c["verdict"] == "FAIL")
    case["evidence"] = {"why": b"\xff\x00ok", "nested": {"raw": b"\x1bz"}}
    case["transcript"] = [
        {"t": 0.0, "dir": "recv", "channel": "stdout", "base64": base64.b64encode(b"\xfe!").decode()}
    ]
    rendered = {
        "terminal": views.summary_text(report),
        "report.md": views.markdown(report),
        "junit.xml": views.junit_xml(report).decode("utf-8"),
        "report.html": html_report.render(report),
    }
    path = tmp_path / "report.json"
    canonical.write_json_atomic(path, report)
    rendered["report.json"] = path.read_text(encoding="utf-8")
    for name, text in rendered.items():
        _no_bytes_repr(name, text)
    written = json.loads(rendered["report.json"])
    assert next(c for c in written["cases"] if c["key"] == case["key"])["evidence"]["why"] == "\\xff\\x00ok"
    assert "\\xff\\x00ok" in rendered["junit.xml"] and '"raw": "\\\\x1bz"' in rendered["junit.xml"]
    assert "(not UTF-8) \\xfe!" in rendered["report.html"]

"""The apps suite (MCP Apps, ext-apps 2026-01-26) against its reference and against mutants.

Why: a check is only proven when the reference passes it and a mutant that breaks its row fails it (or
WARNs, by the row's level), and nothing else; a row that depends on a broken one SKIPs naming it. Each
mutant runs over stdio and Streamable HTTP in every revision the pack judges. A server with no UI costs
the listings and nothing more, every row SKIP with one reason.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.checks import load_pack
from conformance.engine.context import RunOptions
from conformance.front.api import run_report
from conformance.model.targets import Target
from tests.conftest import server_argv
from tests.servers.apps_mutants import DEFECTS

REPO_ROOT = Path(__file__).resolve().parents[3]
SUITE = "apps"
CLAIMED = RunOptions(claimed_suites=frozenset({SUITE}))
P = "apps."
BOTH = ("stdio", "http")

#: Each mutant's non-PASS (check, verdict), on both transports; `unreadable` and `no-contents` show
#: the rows blocked by a broken one.
MUTANTS: dict[str, set[tuple[str, str]]] = {
    "no-extension": {(P + "extension.declared", "WARN")},
    "ui-to-everyone": {(P + "extension.client-checked", "WARN")},
    "empty-without-apps": {(P + "fallback.content", "FAIL")},
    "empty-with-apps": {(P + "result.content", "FAIL")},
    "dangling-uri": {(P + "link.exists", "FAIL")},
    "not-ui-scheme": {(P + "uri.scheme", "FAIL")},
    "read-plain-html": {(P + "mime.read", "FAIL")},
    "listed-plain-html": {(P + "mime.listed", "WARN")},
    "blob-not-base64": {(P + "content.text-or-blob", "FAIL")},
    "no-doctype": {(P + "content.html5", "FAIL")},
    "csp-string": {(P + "meta.shape", "FAIL")},
    "csp-path": {(P + "csp.origins", "WARN")},
    "csp-on-tool": {(P + "meta.location", "WARN")},
    "bad-visibility": {(P + "tool.meta-shape", "FAIL")},
    "flat-key-only": {(P + "tool.legacy-key", "WARN")},
    "unreadable": {
        (P + "link.exists", "FAIL"),
        (P + "mime.read", "SKIP"),
        (P + "content.text-or-blob", "SKIP"),
        (P + "content.html5", "SKIP"),
    },
    "no-contents": {
        (P + "content.text-or-blob", "FAIL"),
        (P + "mime.read", "SKIP"),
        (P + "content.html5", "SKIP"),
    },
}
#: The case a mutant's SKIPs name as their blocker.
BLOCKERS = {"unreadable": P + "link.exists", "no-contents": P + "content.text-or-blob"}


def _targets(module: str, *args: str) -> list[Target]:
    argv = tuple(server_argv(module, *args))
    return [
        Target(kind="stdio", argv=argv, cwd=str(REPO_ROOT)),
        Target(kind="http", launch=(*argv, "--http", "--port", "0"), cwd=str(REPO_ROOT)),
    ]


def _non_pass(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["check"], c["verdict"], c["transport"]) for c in report["cases"] if c["verdict"] != "PASS"}


def _rows() -> dict[str, dict[str, Any]]:
    table = json.loads((REPO_ROOT / "conformance_packs/apps/requirements.json").read_text())
    return {r["id"]: r for r in table["requirements"]}


def test_every_row_has_one_check_and_is_an_extension_row() -> None:
    checks = load_pack(SUITE)
    rows = _rows()
    assert sorted(c.requirement for c in checks) == sorted(rows)
    assert {r.get("track") for r in rows.values()} == {"extension"}


def test_the_embedded_reference_passes_every_row_over_stdio_and_http() -> None:
    report = run_report(suites=[SUITE], options=CLAIMED)
    cases = report["cases"]
    assert {c["transport"] for c in cases} == set(BOTH)
    # 14 rows in 2025-06-18 and 2025-11-25, the 15 (with the extension's declaration) in 2026-07-28.
    assert len(cases) == 2 * (14 * 2 + 15)
    assert _non_pass(report) == set(), [c["message"] for c in cases if c["verdict"] != "PASS"]
    assert report["footer"]["exit_code"] == 0
    assert not any(c.get("unscored") for c in cases)  # named with --suite: claimed, scored


def test_unclaimed_the_rows_show_their_verdict_unscored() -> None:
    report = run_report(
        servers=_targets("tests.servers.apps_mutants", "--defect", "dangling-uri")[:1], suites=[SUITE]
    )
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert {c["check"] for c in failed} == {P + "link.exists"}
    assert all(c["unscored"] for c in report["cases"])
    assert report["footer"]["exit_code"] == 0  # an extension nobody claimed fails no run


@pytest.fixture(scope="module")
def mutant_reports() -> dict[str, dict[str, Any]]:
    """Every mutant's report over stdio and HTTP, two runs side by side (each its own event loop)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            defect: pool.submit(
                run_report,
                servers=_targets("tests.servers.apps_mutants", "--defect", defect),
                suites=[SUITE],
                options=CLAIMED,
            )
            for defect in MUTANTS
        }
        return {defect: future.result(timeout=900) for defect, future in futures.items()}


def test_every_defect_is_proven() -> None:
    assert set(MUTANTS) == set(DEFECTS)


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(defect: str, mutant_reports: dict[str, dict[str, Any]]) -> None:
    report = mutant_reports[defect]
    expected = {(check, verdict, t) for check, verdict in MUTANTS[defect] for t in BOTH}
    assert _non_pass(report) == expected, [
        (c["check"], c["transport"], c["revision"], c["message"][:200])
        for c in report["cases"]
        if c["verdict"] != "PASS"
    ]
    for case in report["cases"]:
        if case["verdict"] == "SKIP":
            assert case["blocked_by"].startswith(BLOCKERS[defect] + "["), case["message"]


def test_a_server_without_ui_skips_every_row_for_one_reason_and_sends_only_the_listings() -> None:
    options = RunOptions(protocol="2025-11-25", keep_transcripts=True)
    report = run_report(
        servers=_targets("conformance_reference.base_server")[:1], suites=[SUITE], options=options
    )
    cases = report["cases"]
    assert len(cases) == 14 and {c["verdict"] for c in cases} == {"SKIP"}
    assert len({c["message"] for c in cases}) == 1 and cases[0]["message"].startswith("no UI offered")
    sent = {
        json.loads(e["text"]).get("method")
        for c in cases
        for e in c.get("transcript", [])
        if e.get("dir") == "send" and e.get("text", "").startswith("{")
    }
    assert sent == {"tools/list", "resources/list"}, sent

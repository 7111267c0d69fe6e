"""The dw-discovery suite against its reference and against mutants with one planted defect each.

Why: a check is only proven when the reference passes it and a mutant that breaks its row fails it,
and nothing else. Each mutant's report must hold exactly the listed non-PASS (check, verdict) pairs.
Mutants run over stdio on one revision (every dw-discovery check runs once per target anyway); the
embedded default runs the reference over stdio and HTTP with every revision probed.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.checks import load_pack
from conformance.engine.context import RunOptions
from conformance.front.api import run_report
from conformance.front.cli import build_parser
from conformance.model.targets import Target, load_target_file
from conformance_reference.dw_server import DwReference
from tests.conftest import judged_non_pass, server_argv

REPO_ROOT = Path(__file__).resolve().parents[3]
SUITE = "dw-discovery"
ONE_REVISION = RunOptions(protocol="2026-07-28", timeout=10.0)
CONFIGURED = {"dw-discovery": {"resource": "dw://mcp/discovery"}}
P = "dw-discovery."


def _non_pass(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"}


def _stdio(*args: str, module: str = "conformance_reference.dw_server", settings: Any = None) -> Target:
    argv = tuple(server_argv(module, *args))
    return Target(kind="stdio", argv=argv, cwd=str(REPO_ROOT), settings=settings or {})


def _mutant(defect: str, *args: str, settings: Any = None) -> Target:
    return _stdio("--defect", defect, *args, module="tests.servers.dw_mutants", settings=settings)


def _run(target: Target, options: RunOptions = ONE_REVISION) -> dict[str, Any]:
    return run_report(servers=[target], suites=[SUITE], options=options)


def test_every_check_runs_once_and_names_a_catalog_row() -> None:
    checks = load_pack(SUITE)
    assert len(checks) == 26 and all(c.once for c in checks)
    rows = {
        r["id"]
        for r in json.loads((REPO_ROOT / "conformance_packs/dw_discovery/requirements.json").read_text())[
            "requirements"
        ]
    }
    assert len(rows) == 26 and {c.requirement for c in checks} <= rows
    # Rows no live check can judge are the offline ones the schema tests cover.
    assert rows - {c.requirement for c in checks} == {"DWD-SCHEMA-001", "DWD-DOC-014", "DWD-TOOL-005"}


def test_the_embedded_reference_passes_over_stdio_and_http() -> None:
    report = run_report(suites=[SUITE])
    cases = report["cases"]
    assert {c["transport"] for c in cases} == {"stdio", "http"}
    assert len(cases) == 2 * 26  # once per target, on the newest revision spoken
    assert _non_pass(report) == set(), [c["message"] for c in cases if c["verdict"] != "PASS"]
    assert report["footer"]["exit_code"] == 0


def test_the_reference_is_also_a_clean_base_protocol_server() -> None:
    """It is an MCP server first: the base suite passes on every revision it speaks (stdio)."""
    report = run_report(servers=[_stdio()], suites=["base"])
    # Prompts, completion, logging and input are not part of it: those SKIPs say so (judged_non_pass).
    assert judged_non_pass(report) == set(), [
        (c["check"], c["message"][:120]) for c in report["cases"] if c["verdict"] != "PASS"
    ]


@pytest.mark.parametrize("limit", ["0", "9"])
def test_the_reference_passes_with_other_preview_limits(limit: str) -> None:
    assert _non_pass(_run(_stdio("--preview-limit", limit))) == set()


MUTANTS: dict[str, tuple[tuple[str, ...], dict[str, Any], set[tuple[str, str]]]] = {
    # No marker to find it by: its resource's well-known name (mcp-discovery) is how it is found, and
    # it is judged: the missing member fails the required row, whose absence the marker row defers to.
    "no-schema": ((), {}, {(P + "doc.required", "FAIL"), (P + "doc.schema-id", "SKIP")}),
    # A near-miss marker is judged, not overlooked: it fails the marker row, and only that row.
    "wrong-schema": ((), {}, {(P + "doc.schema-id", "FAIL")}),
    # Only a describe_mcp_surface tool serves it, without the marker: found by the tool's name.
    "surface-tool-only": ((), {}, {(P + "doc.required", "FAIL"), (P + "doc.schema-id", "SKIP")}),
    "bad-tool-name": ((), {}, {(P + "doc.tool-names", "FAIL")}),
    "ghost-tool": ((), {}, {(P + "live.tools-live", "WARN")}),
    # DWD-TOOL-001: a live tool the document leaves out is WARN incomplete-discovery.
    "undocumented-tool": ((), {}, {(P + "live.tools-documented", "WARN")}),
    "schema-drift": ((), {}, {(P + "live.input-schemas", "WARN")}),
    "preview-over-limit": ((), {}, {(P + "preview.within-limit", "WARN")}),
    # U+FFFD for 1 or 2 bytes of a character grows the preview past the limit; for 3 bytes it fits,
    # and only the UTF-8 check sees it (asserted below).
    "preview-mid-char": ((), {}, {(P + "preview.within-limit", "WARN"), (P + "preview.utf8-cut", "WARN")}),
    "truncated-false": ((), {}, {(P + "preview.truncated-flag", "WARN")}),
    "byte-miscount": ((), {}, {(P + "preview.byte-count", "WARN")}),
    "no-full-payload": ((), {}, {(P + "preview.full-payload", "WARN")}),
    # Nothing is cut when 0 means "no limit", so the full-payload rule has nothing to judge.
    "zero-unlimited": (
        ("--preview-limit", "0"),
        {},
        {
            (P + "preview.within-limit", "WARN"),
            (P + "preview.truncated-flag", "WARN"),
            (P + "preview.full-payload", "SKIP"),
        },
    ),
    "limit-mismatch": ((), {}, {(P + "preview.limit-matches", "WARN")}),
    "v14-surface": ((), {}, {(P + "doc.version-skew", "WARN")}),
    "bad-envelope": ((), {}, {(P + "live.output-envelopes", "WARN")}),
    "unstable": ((), {}, {(P + "doc.stable", "WARN")}),
}


@pytest.fixture(scope="module")
def mutant_reports() -> dict[str, dict[str, Any]]:
    """Every mutant's report, run side by side (each run is its own event loop and process)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            defect: pool.submit(_run, _mutant(defect, *args, settings=settings))
            for defect, (args, settings, _) in MUTANTS.items()
        }
        return {defect: future.result(timeout=900) for defect, future in futures.items()}


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_rows(defect: str, mutant_reports: dict[str, dict[str, Any]]) -> None:
    expected = MUTANTS[defect][2]
    report = mutant_reports[defect]
    assert _non_pass(report) == expected, [
        (c["check"], c["message"][:200]) for c in report["cases"] if c["verdict"] != "PASS"
    ]
    if defect == "preview-mid-char":
        utf8 = next(c for c in report["cases"] if c["check"] == P + "preview.utf8-cut")
        within = next(c for c in report["cases"] if c["check"] == P + "preview.within-limit")
        # The 4-byte character split after 3 bytes fits the limit: only the UTF-8 check catches it.
        assert "/events/9/" in utf8["message"] and "/events/9/" not in within["message"]


def test_strict_mode_turns_version_skew_into_a_failure() -> None:
    report = _run(_mutant("v14-surface"), RunOptions(protocol="2026-07-28", strict=True))
    assert _non_pass(report) == {(P + "doc.version-skew", "FAIL")}
    assert build_parser().parse_args(["run", "--strict"]).strict is True
    assert build_parser().parse_args(["run"]).strict is False


@pytest.mark.parametrize("module", ["conformance_reference.base_server", "no-document"])
def test_without_a_document_the_serve_row_warns_and_says_what_was_looked_for(module: str) -> None:
    """A server run for the profile that shows no document claims a profile it does not show: the
    SERVE row WARNs (level implied: the schema is normative for the document, not for serving one; the
    run exits 0, 1 under --strict) and every other row SKIPs, naming what was looked for."""
    target = _mutant(module) if module == "no-document" else _stdio(module=module)
    report = _run(target)
    # The rows about the document SKIP; the preview rows judge the live tools, which may still pass.
    assert {(c, v) for c, v in _non_pass(report) if v != "SKIP"} == {(P + "serve.located", "WARN")}
    assert (P + "doc.schema-id", "SKIP") in _non_pass(report)
    assert len(report["cases"]) == 26 and report["footer"]["exit_code"] == 0
    served = next(c for c in report["cases"] if c["check"] == P + "serve.located")
    assert "shows no discovery document" in served["message"]
    assert "MCP resources with a JSON mimeType" in served["message"] and "readOnlyHint" in served["message"]
    assert "describe_mcp_surface" in served["message"]
    assert all(c["message"] for c in report["cases"]), "every SKIP says why"
    # The document rows name the case whose FAIL left them nothing to judge.
    serve_key = served["key"]
    doc_rows = [c for c in report["cases"] if c["check"].startswith(P + "doc.")]
    assert doc_rows and all(c["blocked_by"] == serve_key for c in doc_rows)


def test_a_missing_marker_blocks_the_marker_row_on_the_required_row() -> None:
    report = _run(_mutant("surface-tool-only"))
    required = next(c for c in report["cases"] if c["check"] == P + "doc.required")
    marker = next(c for c in report["cases"] if c["check"] == P + "doc.schema-id")
    assert required["verdict"] == "FAIL" and marker["blocked_by"] == required["key"]
    served = next(c for c in report["cases"] if c["check"] == P + "serve.located")
    assert "found by its well-known name tool 'describe_mcp_surface'" in served["message"]


def test_a_document_found_by_its_well_known_name_says_so() -> None:
    report = _run(_mutant("wrong-schema"))
    served = next(c for c in report["cases"] if c["check"] == P + "serve.located")
    assert served["verdict"] == "PASS" and "found by its well-known name resource" in served["message"]
    marker = next(c for c in report["cases"] if c["check"] == P + "doc.schema-id")
    assert "mcp-discoveries" in json.dumps(marker["evidence"]) or "mcp-discoveries" in marker["message"]


def test_a_configured_tool_is_the_source() -> None:
    report = _run(_stdio(settings={"dw-discovery": {"tool": "get_mcp_discovery"}}))
    assert _non_pass(report) == set()
    served = next(c for c in report["cases"] if c["check"] == P + "serve.located")
    assert served["message"] == "configured tool 'get_mcp_discovery'"


def test_configured_preview_calls_are_made_as_given() -> None:
    calls = [{"workflow_id": "wf-fixture-1", "include_payloads": True, "limit": n} for n in (3, 100)]
    report = _run(
        _stdio(
            settings={"dw-discovery": {"preview_tool": "get_workflow_history", "preview_arguments": calls}}
        )
    )
    assert _non_pass(report) == set()
    within = next(c for c in report["cases"] if c["check"] == P + "preview.within-limit")
    assert within["message"] == "13 previews within their limit"  # 3 + 10
    broken = _run(
        _stdio(settings={"dw-discovery": {"preview_tool": "no_such_tool", "preview_arguments": {}}})
    )
    assert {(c, v) for c, v in _non_pass(broken)} == {
        (P + name, "ERROR")
        for name in (
            "preview.within-limit",
            "preview.byte-count",
            "preview.truncated-flag",
            "preview.utf8-cut",
            "preview.limit-matches",
            "preview.full-payload",
        )
    }


def test_a_configured_resource_that_does_not_exist_misses_the_serve_row() -> None:
    report = _run(_stdio(settings={"dw-discovery": {"resource": "dw://nowhere"}}))
    assert (P + "serve.located", "WARN") in _non_pass(report)
    assert {v for c, v in _non_pass(report) if c.startswith(P + "doc.")} == {"SKIP"}


def test_a_refused_url_is_one_error_and_skips_elsewhere() -> None:
    report = _run(_stdio(settings={"dw-discovery": {"url": "http://192.0.2.1/discovery.json"}}))
    errors = {c for c, v in _non_pass(report) if v == "ERROR"}
    assert errors == {P + "serve.located"}
    assert {v for c, v in _non_pass(report) if c.startswith(P + "doc.")} == {"SKIP"}


@contextlib.contextmanager
def _serving(body: bytes) -> Iterator[str]:
    """A loopback HTTP server answering every GET with `body` (bounded: stopped on exit)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/discovery.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_configured_url_on_loopback_is_fetched() -> None:
    with _serving(json.dumps(DwReference().document()).encode()) as url:
        report = _run(_stdio(settings={"dw-discovery": {"url": url}}))
    assert _non_pass(report) == set()


def test_a_target_file_can_name_a_file_and_a_baseline(tmp_path: Path) -> None:
    document = DwReference().document()
    (tmp_path / "discovery.json").write_text(json.dumps(document))
    baseline = json.loads(json.dumps(document))
    baseline["tools"][0]["description"] = "older words: descriptions never break the contract"
    baseline["tools"].append({"name": "cancel_workflow", "input_schema": {"type": "object"}})
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    (tmp_path / "target.toml").write_text(
        f"[target]\ncommand = {json.dumps([sys.executable, '-m', 'conformance_reference.dw_server'])}\n"
        'cwd = "."\n\n[dw-discovery]\nfile = "discovery.json"\nbaseline = "baseline.json"\n'
    )
    report = _run(load_target_file(tmp_path / "target.toml"))
    # A file is not the server serving it; the baseline lists a tool the document no longer has.
    assert _non_pass(report) == {(P + "serve.located", "SKIP"), (P + "doc.stable", "WARN")}
    stable = next(c for c in report["cases"] if c["check"] == P + "doc.stable")
    assert "'cancel_workflow' was removed or renamed" in stable["message"]

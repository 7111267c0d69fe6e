"""The reference server passes the base suite over stdio and HTTP, in every revision it speaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import non_pass, run, server_argv, stdio

ALL = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
#: 2024-11-05 has no Streamable HTTP (its HTTP transport is HTTP+SSE), so an HTTP target is not probed in it.
SPOKEN = {"stdio": ALL, "http": ALL[:-1]}
#: Explained SKIPs of the input checks: the reference sends no tool-enabled sampling (the default run
#: does not declare sampling.tools) and needs no URL elicitation (nor does the run declare it).
TOOL_RESULTS_SKIP = ("base.input.sampling-tool-results", "SKIP")
INPUT_SKIPS = {TOOL_RESULTS_SKIP, ("base.input.url-elicitation-error", "SKIP")}
REFERENCE_GET_SKIPS = {("base.http.get-stream-messages", "SKIP"), ("base.http.resume-own-stream", "SKIP")}


def test_embedded_default_passes_on_both_transports_and_all_revisions(
    embedded_default: dict[str, Any],
) -> None:
    report = embedded_default  # run(None), shared with tests/test_base_load.py
    assert [t["transport"] for t in report["targets"]] == ["stdio", "http"]
    for target in report["targets"]:
        assert target["revisions_spoken"] == SPOKEN[target["transport"]]
        assert target["server_info"]["name"] == "mcp-conformance-reference"
    # The SKIPs are explained: a dual-era server keeps its legacy GET stream, so the rule for
    # 2026-07-28-only servers does not apply (it is proven on the modern-only reference below); that
    # GET stream carries no message, and before 2025-11-25 no event ID precedes an answer to resume
    # from (tests/test_base_get_stream.py proves both rows on mutants).
    assert non_pass(report, input_skips=True) == (
        {("base.http.modern-get-405", "SKIP")} | REFERENCE_GET_SKIPS | INPUT_SKIPS
    )
    revisions = {(c["transport"], c["revision"]) for c in report["cases"]}
    assert revisions == {(t, r) for t in ("stdio", "http") for r in SPOKEN[t]}
    assert report["footer"]["exit_code"] == 0


def _launch(tmp_path: Path, *args: str) -> str:
    path = tmp_path / "target.toml"
    command = server_argv("conformance_reference.base_server", "--http", "--port", "0", *args)
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


def test_modern_only_reference_over_http(tmp_path: Path) -> None:
    report = run([_launch(tmp_path, "--era", "modern")])
    assert report["targets"][0]["revisions_spoken"] == ["2026-07-28"]
    assert non_pass(report, input_skips=True) == {TOOL_RESULTS_SKIP}
    assert ("base.http.modern-get-405", "PASS") in {(c["check"], c["verdict"]) for c in report["cases"]}


def test_legacy_only_reference_over_stdio() -> None:
    report = run([stdio("conformance_reference.base_server", "--era", "legacy")])
    assert report["targets"][0]["revisions_spoken"] == [
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]
    assert non_pass(report, input_skips=True) == INPUT_SKIPS


def test_pinned_revision_is_tested_as_pinned() -> None:
    report = run([stdio("conformance_reference.base_server")], protocol="2025-06-18")
    assert {c["revision"] for c in report["cases"]} == {"2025-06-18"}
    assert non_pass(report, input_skips=True) == set()


def test_pinned_revision_the_server_does_not_speak_is_a_skip() -> None:
    """A legacy-only server refuses server/discover with -32601: it does not speak 2026-07-28, and
    breaks nothing by saying so. Nothing was judged, so SKIP with the reason, never FAIL."""
    report = run([stdio("conformance_reference.base_server", "--era", "legacy")], protocol="2026-07-28")
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "SKIP")]
    assert "2026-07-28: server/discover refused with an error" in report["cases"][0]["message"]
    # Nothing was judged at all, so the run does not pass either: exit 1, saying so.
    assert report["footer"]["exit_code"] == 1

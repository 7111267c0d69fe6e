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
#: BASE-CANCEL-002 over Streamable HTTP, SKIP saying why (2026-07-28: closing the stream is the
#: cancellation, nothing to observe after it; legacy: the call's own stream is not held open).
CANCEL_HTTP_SKIP = ("base.cancel.no-response", "SKIP")


def test_embedded_default_passes_on_both_transports_and_all_revisions(
    embedded_default: dict[str, Any],
) -> None:
    report = embedded_default  # run(None), shared with tests/packs/base/test_base_load.py
    assert [t["transport"] for t in report["targets"]] == ["stdio", "http"]
    for target in report["targets"]:
        assert target["revisions_spoken"] == SPOKEN[target["transport"]]
        assert target["server_info"]["name"] == "mcp-conformance-reference"
    # The SKIPs are explained: a dual-era server keeps its legacy GET stream, so the rule for
    # 2026-07-28-only servers does not apply (it is proven on the modern-only reference below); that
    # GET stream carries no message, and before 2025-11-25 no event ID precedes an answer to resume
    # from (tests/packs/base/test_base_get_stream.py proves both rows on mutants).
    assert non_pass(report, input_skips=True) == (
        {("base.http.modern-get-405", "SKIP"), CANCEL_HTTP_SKIP} | REFERENCE_GET_SKIPS | INPUT_SKIPS
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
    assert non_pass(report, input_skips=True) == {TOOL_RESULTS_SKIP, CANCEL_HTTP_SKIP}
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


#: Rows bound to a transport by their own text, each with the transports it names; every other row is
#: judged (or SKIP with its reason) over every transport that carries the revision.
STREAMABLE_HTTP = ("http",)
TRANSPORT_BOUND: dict[str, tuple[str, ...]] = {
    # Streamable HTTP's own rules (POST, GET, headers, event IDs), its session management, its 403.
    **{f"BASE-HTTP-{n:03d}": STREAMABLE_HTTP for n in (1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17, 18)},
    **{f"BASE-HTTP-{n:03d}": STREAMABLE_HTTP for n in (19, 20, 21, 22, 23, 24, 25)},
    **{f"BASE-SESS-{n:03d}": STREAMABLE_HTTP for n in (1, 2, 3, 4)},
    "BASE-ORIGIN-001": STREAMABLE_HTTP,
    # The server's own origin, served: the Streamable HTTP text's validation, read from its 403 sentence.
    "BASE-ORIGIN-003": STREAMABLE_HTTP,
    # "Servers MUST validate the Origin header": every HTTP transport, none over stdio.
    "BASE-ORIGIN-002": ("http", "sse"),
    # The stdio transport's rules, and the early ping that only stdio lets a client send unordered.
    **{f"BASE-STDIO-{n:03d}": ("stdio",) for n in (1, 10, 11, 12)},
    "BASE-LIFE-010": ("stdio",),
}


def test_every_row_appears_on_every_transport_its_text_applies_to(embedded_default: dict[str, Any]) -> None:
    """A row that applies to a transport and revision is judged there or SKIP with a reason, never
    missing: in each revision both transports of the embedded default speak, a row judged over one is
    judged over the other unless its own text binds it to one transport (`TRANSPORT_BOUND`); every row of
    the base pack appears; and each (row, transport, revision) present carries a verdict and a message
    where it is not a PASS."""
    from conformance.model.requirements import table

    rows = {row.id for row in table().values() if row.suite == "base"}
    seen: dict[str, set[tuple[str, str]]] = {}
    for case in embedded_default["cases"]:
        if case["suite"] == "base":
            seen.setdefault(case["requirement"], set()).add((case["transport"], case["revision"]))
            assert case["verdict"] == "PASS" or case["message"].strip(), case["key"]
    assert rows <= set(seen), f"rows never in the report: {sorted(rows - set(seen))}"
    both = set(SPOKEN["stdio"]) & set(SPOKEN["http"])
    gaps = []
    for row, pairs in sorted(seen.items()):
        for revision in sorted(both):
            present = {t for t, r in pairs if r == revision}
            expected = {"stdio", "http"} & set(TRANSPORT_BOUND.get(row, ("stdio", "http")))
            if present and present != expected:
                gaps.append(f"{row}@{revision}: over {sorted(present)}, not {sorted(expected)}")
    assert not gaps, "\n".join(gaps)

"""Each planted defect must FAIL (or WARN, for a SHOULD) exactly the checks it breaks, and nothing else.

The mutants are `tests/servers/raw_server.py --defect NAME`: a conformant raw JSON-lines server with one
fault each, including faults the SDK would refuse to produce (wrong id, missing jsonrpc, stdout junk).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import non_pass, run, stdio
from tests.servers.raw_server import DEFECTS

EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "wrong-id": {("base.rpc.id-echo", "FAIL")},
    "no-jsonrpc": {("base.rpc.version-field", "FAIL")},
    "result-and-error": {("base.rpc.result-xor-error", "FAIL")},
    "schema-violation": {("base.call.structured-matches-schema", "FAIL")},
    # The only JSON text block differs: it is both not equal (MUST-like) and no faithful mirror (SHOULD).
    "text-differs": {("base.call.text-mirror-equal", "FAIL"), ("base.call.text-mirror-present", "WARN")},
    # A success for an unknown tool is also not the protocol error the schema asks for (SHOULD).
    "unknown-tool-success": {
        ("base.call.unknown-tool-not-success", "FAIL"),
        ("base.call.unknown-tool-protocol-error", "WARN"),
    },
    "stack-trace": {("base.hygiene.no-stack-traces", "FAIL")},
    "bad-input-schema": {("base.tools.input-schema-valid", "FAIL")},
    # A pattern must be an ECMA-262 regex only as a SHOULD (JSON Schema validation 6.3.3): WARN, not FAIL.
    "bad-pattern": {("base.tools.input-schema-valid", "WARN")},
    # Valid ECMA-262 that Python's re rejects: judging it in Python's dialect would be a false FAIL.
    "ecma-pattern": set(),
    # Uniqueness and order cannot be judged on a listing that never ends: SKIP, not a false WARN.
    "cursor-loop": {
        ("base.tools.pagination-ends", "FAIL"),
        ("base.tools.unique-names", "SKIP"),
        ("base.tools.deterministic-order", "SKIP"),
    },
    "stdout-garbage": {("base.stdio.stdout-only-messages", "FAIL")},
    "stdout-binary": {("base.stdio.stdout-only-messages", "FAIL")},
    "no-parse-error": {("base.rpc.parse-error", "FAIL")},
    # Arguments built from the schema reach the strict tool; one that refuses every call is no fault.
    "strict-args": set(),
    "strict-args-violation": {("base.call.structured-matches-schema", "FAIL")},
}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) | {"get-200", "slow-tool", "unknown-method-text"} == set(DEFECTS)


def test_a_slow_tool_is_left_unjudged_and_the_others_are_judged() -> None:
    """A read-only tool that outlasts the timeout breaks no rule: its sibling tools are still judged,
    no case is an ERROR, and the cases say which tool went unjudged."""
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "slow-tool")], protocol="2025-11-25", timeout=1.5
    )
    assert non_pass(report) == set()
    judged = [c for c in report["cases"] if c["check"] == "base.call.structured-matches-schema"]
    assert len(judged) == 1 and "'slow' (no answer within 1.5 s)" in judged[0]["message"]
    assert "2 of 3 callable tool(s) succeeded in 3 call(s)" in judged[0]["message"]
    calls = judged[0]["evidence"]["tool_calls"]
    assert (calls["tools_called"], calls["calls"], calls["calls_answered"]) == (3, 3, 2)


@pytest.mark.parametrize("defect", sorted(EXPECTED))
def test_stdio_mutant_fails_exactly_its_checks(defect: str) -> None:
    report = run([stdio("tests.servers.raw_server", "--defect", defect)])
    assert report["targets"][0]["revisions_spoken"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert non_pass(report) == EXPECTED[defect]
    if any(verdict == "FAIL" for _, verdict in EXPECTED[defect]):
        assert report["footer"]["exit_code"] == 1
        failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
        assert all(c["evidence"] or c["message"] for c in failed), "a FAIL carries its evidence"
    else:
        assert report["footer"]["exit_code"] == 0


def _http_target(tmp_path: Path, *args: str) -> str:
    """A target file that launches the raw server on HTTP (2026-07-28 only) and reads its URL."""
    path = tmp_path / "raw-http.toml"
    command = [sys.executable, "-m", "tests.servers.raw_server", "--http", *args]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


def test_http_modern_only_raw_server_passes(tmp_path: Path) -> None:
    report = run([_http_target(tmp_path)])
    assert report["targets"][0]["revisions_spoken"] == ["2026-07-28"]
    assert non_pass(report) == set()
    assert any(c["check"] == "base.http.modern-get-405" and c["verdict"] == "PASS" for c in report["cases"])


def test_http_get_200_mutant(tmp_path: Path) -> None:
    report = run([_http_target(tmp_path, "--defect", "get-200")])
    assert non_pass(report) == {("base.http.modern-get-405", "FAIL")}


def _case(report: dict[str, Any], check: str) -> dict[str, Any]:
    (case,) = [c for c in report["cases"] if c["check"] == check]
    return case


def test_arguments_built_from_the_schema_make_the_strict_tool_judged() -> None:
    """forecast needs an enum value, a pattern, a date, bounded numbers, a nested object, an array and a
    zone the server knows: "x" for every string cannot call it. The careful candidates can: the first
    (the description's first zone, which this server does not know) is refused, the second succeeds,
    and its structuredContent is judged. archive refuses every call: no verdict holds that against it."""
    report = run([stdio("tests.servers.raw_server", "--defect", "strict-args")], protocol="2025-11-25")
    assert non_pass(report) == set()
    judged = _case(report, "base.call.structured-matches-schema")
    assert "judged on 3 successful call(s): echo, add, forecast" in judged["message"]
    assert "refused every candidate, not held against the server: archive" in judged["message"]
    calls = judged["evidence"]["tool_calls"]
    assert calls["feeds"][:3] == ["BASE-CALL-001", "BASE-CALL-002", "BASE-CALL-003"]
    per_tool = {t["tool"]: t for t in calls["per_tool"]}
    forecast = per_tool["forecast"]
    assert forecast["calls"] == 2 and forecast["succeeded"] is True
    args = forecast["arguments"]
    assert args["zone"] == "Europe/Paris" and args["at"] == "12:00" and args["unit"] == "fahrenheit"
    assert args["station"].isupper() and len(args["station"]) == 4 and 3 <= args["days"] <= 7
    assert per_tool["archive"] == {
        "tool": "archive",
        "calls": 1,
        "succeeded": False,
        "refusal": "the archive is offline",
    }
    assert (calls["calls"], calls["calls_answered"], calls["calls_succeeded"]) == (5, 5, 3)
    for check in ("base.call.text-mirror-present", "base.call.text-mirror-equal"):
        assert "forecast" in _case(report, check)["message"].split("judged on")[1]


def test_the_strict_tool_mutant_fails_the_check_its_call_fed() -> None:
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "strict-args-violation")], protocol="2025-11-25"
    )
    assert non_pass(report) == {("base.call.structured-matches-schema", "FAIL")}
    failed = _case(report, "base.call.structured-matches-schema")
    assert failed["message"].startswith("tool 'forecast': structuredContent violates outputSchema at high")


#: The cases that need the JSON-RPC answer to an unknown method to judge their own rule.
UNKNOWN_METHOD_CASES = {
    "base.rpc.version-field",
    "base.rpc.result-xor-error",
    "base.rpc.error-shape",
    "base.rpc.method-not-found",
}


def test_http_unknown_method_text_mutant_fails_the_transport_row_once(tmp_path: Path) -> None:
    """400 text/plain for an unknown method (Go SDK servers) breaks one rule, BASE-HTTP-005: one FAIL
    there, and the cases that needed a JSON-RPC answer are SKIP blocked by it, not ERROR or FAIL."""
    report = run([_http_target(tmp_path, "--defect", "unknown-method-text")])
    judge = "base.http.request-answer[http@2026-07-28]"
    assert non_pass(report) == {("base.http.request-answer", "FAIL")} | {
        (check, "SKIP") for check in UNKNOWN_METHOD_CASES
    }
    failed = next(c for c in report["cases"] if c["key"] == judge)
    assert failed["requirement"] == "BASE-HTTP-005" and "text/plain" in failed["message"]
    blocked = [c for c in report["cases"] if c.get("blocked_by")]
    assert {c["check"] for c in blocked} == UNKNOWN_METHOD_CASES
    assert all(c["blocked_by"] == judge and c["message"].startswith(f"blocked by {judge}") for c in blocked)
    # The verdict the check would have given stays in the evidence.
    assert all(c["evidence"]["unblocked"].split(":")[0] in ("FAIL", "ERROR") for c in blocked)
    assert report["footer"]["exit_code"] == 1
    assert report["cases"][-1]["key"] == judge, "the judging case runs last in its revision"


def test_without_the_judging_case_a_blocked_case_is_an_error(tmp_path: Path) -> None:
    """`-k` leaving out the row that judges the transport: the case cannot be judged, and says why."""
    report = run([_http_target(tmp_path, "--defect", "unknown-method-text")], select="method-not-found")
    (case,) = report["cases"]
    assert case["verdict"] == "ERROR" and "BASE-HTTP-005" in case["message"] and "blocked_by" not in case


def test_go_style_text_errors_are_one_fail_per_revision_on_a_dual_era_server(tmp_path: Path) -> None:
    """The SDK reference with one defect (unknown method -> 400 text/plain), in all three revisions
    it speaks: per revision one FAIL on BASE-HTTP-005 and the four rpc cases blocked by it, no ERROR."""
    path = tmp_path / "target.toml"
    command = [sys.executable, "-m", "tests.servers.text_errors_server", "--http", "--port", "0"]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    report = run([str(path)])
    spoken = report["targets"][0]["revisions_spoken"]
    assert spoken == ["2026-07-28", "2025-11-25", "2025-06-18"]
    verdicts = {(c["check"], c["revision"]): c["verdict"] for c in report["cases"] if c["verdict"] != "PASS"}
    expected = {("base.http.request-answer", r): "FAIL" for r in spoken}
    expected |= {(check, r): "SKIP" for check in UNKNOWN_METHOD_CASES for r in spoken}
    expected[("base.http.modern-get-405", "2026-07-28")] = "SKIP"  # a dual-era server's GET stream
    assert verdicts == expected
    for case in report["cases"]:
        if case["check"] in UNKNOWN_METHOD_CASES:
            assert case["blocked_by"] == f"base.http.request-answer[http@{case['revision']}]"

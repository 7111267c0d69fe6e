"""Each planted defect must FAIL (or WARN, for a SHOULD) exactly the checks it breaks, and nothing else.

The mutants are `tests/servers/raw_server.py --defect NAME`: a conformant raw JSON-lines server with one
fault each, including faults the SDK would refuse to produce (wrong id, missing jsonrpc, stdout junk).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.model import vectors
from conformance.protocol.session import UNANSWERED
from tests.conftest import judged_non_pass as non_pass
from tests.conftest import run, server_argv, stdio
from tests.servers.raw_server import DEFECTS

EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "wrong-id": {("base.rpc.id-echo", "FAIL")},
    # The sampled responses break their row, and every message breaks BASE-WIRE-001 too.
    "no-jsonrpc": {("base.rpc.version-field", "FAIL"), ("base.wire.message-shapes", "FAIL")},
    "result-and-error": {("base.rpc.result-xor-error", "FAIL"), ("base.wire.message-shapes", "FAIL")},
    "schema-violation": {("base.call.structured-matches-schema", "FAIL")},
    # The only JSON text block differs: no MCP MUST ties it to structuredContent (BASE-CALL-003 is a
    # SHOULD), and it is no faithful mirror either (BASE-CALL-002).
    "text-differs": {("base.call.text-mirror-equal", "WARN"), ("base.call.text-mirror-present", "WARN")},
    # A success for an unknown tool: implied, no MUST makes it unavoidable (WARN). One behaviour, one
    # verdict: BASE-CALL-005 (how the error is reported) is SKIP, blocked by BASE-CALL-004.
    "unknown-tool-success": {
        ("base.call.unknown-tool-not-success", "WARN"),
        ("base.call.unknown-tool-protocol-error", "SKIP"),
    },
    # The refusal written in a text block with isError false reads as a success on the wire: the same
    # one verdict, never a FAIL.
    "unknown-tool-text": {
        ("base.call.unknown-tool-not-success", "WARN"),
        ("base.call.unknown-tool-protocol-error", "SKIP"),
    },
    # No MCP sentence forbids a stack trace in an error: a SHOULD in the base suite (BASE-HYG-001).
    "stack-trace": {("base.hygiene.no-stack-traces", "WARN")},
    "bad-input-schema": {("base.tools.input-schema-valid", "FAIL")},
    # A pattern must be an ECMA-262 regex only as a SHOULD (JSON Schema validation 6.3.3): WARN, not FAIL.
    "bad-pattern": {("base.tools.input-schema-valid", "WARN")},
    # Valid ECMA-262 that Python's re rejects: judging it in Python's dialect would be a false FAIL.
    "ecma-pattern": set(),
    # No MCP sentence requires a listing to end (BASE-TOOLS-006 is a SHOULD). Uniqueness and order
    # cannot be judged on a listing that never ends: SKIP, not a false WARN.
    "cursor-loop": {
        ("base.tools.pagination-ends", "WARN"),
        ("base.tools.unique-names", "SKIP"),
        ("base.tools.deterministic-order", "SKIP"),
    },
    # An order that changes on every third listing: no MCP MUST fixes the order (BASE-TOOLS-007 is a
    # SHOULD, as the official tools-list-deterministic-order is a WARNING).
    "third-listing-reordered": {("base.tools.deterministic-order", "WARN")},
    "stdout-garbage": {("base.stdio.stdout-only-messages", "FAIL")},
    "stdout-binary": {("base.stdio.stdout-only-messages", "FAIL")},
    # The evidence is the call the line came with (`test_a_stray_line_shows_the_call_it_came_with`).
    "stdout-on-call": {("base.stdio.stdout-only-messages", "FAIL")},
    # Shown with the line that drew it (`test_a_log_message_shows_the_line_that_drew_it`).
    "log-on-malformed": {("base.logging.capability-declared", "FAIL")},
    # Arguments built from the schema reach the strict tool; one that refuses every call is no fault.
    "strict-args": set(),
    "strict-args-violation": {("base.call.structured-matches-schema", "FAIL")},
    # MCP requires no answer to a line that is not a message on stdio, and no official SDK sends one.
    "no-parse-error": {("base.rpc.parse-error", "WARN")},
    "no-invalid-request": {("base.rpc.invalid-request", "WARN")},
    # A wrong answer stays a FAIL: "it MUST be Null" (JSON-RPC 2.0 §5).
    "parse-error-id": {("base.rpc.parse-error", "FAIL")},
    # Dying on a bad line breaks no MUST, but is worth a WARN; the session is restarted and the rest runs.
    "exit-on-malformed": {("base.rpc.parse-error", "WARN")},
    # An answer that comes right after the sentinel's (a server that answers concurrently) is in time.
    "late-parse-error": set(),
    # A reply without an id answers no request: it is a response to the notification (BASE-NOTIF-001),
    # never the answer to the ping after it; the cancellations' replies are that row's, not CANCEL-001's.
    "notif-error": {("base.notif.no-response", "FAIL"), ("base.cancel.invalid-ignored", "SKIP")},
    # An answer with a result speaks the revision (2026-07-28 is judged); its shape FAILs its row, and
    # every discover result the server sends breaks the 2026-07-28 schema (BASE-WIRE-001) too.
    "discover-no-versions": {("base.discover.shape", "FAIL"), ("base.wire.message-shapes", "FAIL")},
    "initialize-no-version": {
        ("base.lifecycle.initialize-shape", "FAIL"),
        ("base.wire.message-shapes", "FAIL"),
    },
    # -32601 for an unknown method is JSON-RPC's code table, in no MUST sentence: WARN over stdio in
    # every revision, 2026-07-28 included (its MUST, 404 with -32601, is over Streamable HTTP only).
    "unknown-method-32602": {("base.rpc.method-not-found", "WARN")},
}
#: Each SHOULD-level miss above, and what `--strict` makes of it: FAIL (a SKIP stays a SKIP).
STRICT = {
    defect: {(check, "FAIL" if verdict == "WARN" else verdict) for check, verdict in EXPECTED[defect]}
    for defect in (
        "no-parse-error",
        "no-invalid-request",
        "exit-on-malformed",
        "text-differs",
        "stack-trace",
        "cursor-loop",
        "third-listing-reordered",
        "unknown-method-32602",
        "unknown-tool-success",
        "unknown-tool-text",
    )
}
#: Defects only the HTTP server has, tested below.
HTTP_ONLY = {
    "get-200",
    "malformed-202",
    "unknown-method-text",
    "get-silent",
    "mismatch-legacy-code",
    "header-name-case-sensitive",
}
#: Defects with a test of their own below (they cost a timeout).
OWN_TEST = {
    "slow-tool",
    "hang-on-malformed",
    "deaf-after-malformed",
    "deaf-after-invalid",
    "ping-unanswered",
}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) | HTTP_ONLY | OWN_TEST == set(DEFECTS)


def test_a_slow_tool_is_left_unjudged_and_the_others_are_judged() -> None:
    """A read-only tool that outlasts the timeout breaks no rule: its sibling tools are still judged,
    no case is an ERROR, and the cases say which tool went unjudged."""
    # The slow tool sleeps a minute; 5 s is its deliberate timeout (waited out once per case that calls
    # it), ample for the raw server's other answers, which take milliseconds.
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "slow-tool")], protocol="2025-11-25", timeout=5.0
    )
    assert non_pass(report) == set()
    judged = [c for c in report["cases"] if c["check"] == "base.call.structured-matches-schema"]
    assert len(judged) == 1 and "'slow' (no answer within 5 s)" in judged[0]["message"]
    assert "2 of 3 callable tool(s) succeeded in 3 call(s)" in judged[0]["message"]
    calls = judged[0]["evidence"]["tool_calls"]
    assert (calls["tools_called"], calls["calls"], calls["calls_answered"]) == (3, 3, 2)


def test_the_order_is_compared_over_three_listings_as_the_official_check_does() -> None:
    """BASE-TOOLS-007 lists three times (official `tools-list-deterministic-order`: three tools/list calls,
    order compared), and says so on its PASS."""
    report = run([stdio("tests.servers.raw_server", "--defect", "none")], protocol="2025-11-25")
    judged = [c for c in report["cases"] if c["check"] == "base.tools.deterministic-order"]
    assert [c["verdict"] for c in judged] == ["PASS"]
    assert "3 listings of" in judged[0]["message"], judged[0]["message"]


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


def test_a_stray_line_shows_the_call_it_came_with() -> None:
    """A line a tools/call drew is shown with that call (the last request sent before it, by the wire
    log's order) and its answer, and the case's transcript holds them, not only the check's own
    tools/list; a line written at start is shown with the first request, which the harness had sent
    before it read anything."""
    report = run([stdio("tests.servers.raw_server", "--defect", "stdout-on-call")], protocol="2025-11-25")
    (case,) = [c for c in report["cases"] if c["check"] == "base.stdio.stdout-only-messages"]
    assert case["verdict"] == "FAIL" and "echo: called" in case["message"], case["message"]
    request = json.loads(case["evidence"]["request"])
    assert request["method"] == "tools/call" and request["params"]["name"] == "echo", request
    assert json.loads(case["evidence"]["response"])["id"] == request["id"]
    texts = [e.get("text", "") for e in case["transcript"]]
    assert texts.index(case["evidence"]["request"]) < texts.index("echo: called")
    report = run([stdio("tests.servers.raw_server", "--defect", "stdout-garbage")], protocol="2025-11-25")
    (case,) = [c for c in report["cases"] if c["check"] == "base.stdio.stdout-only-messages"]
    assert json.loads(case["evidence"]["request"])["method"] in ("initialize", "server/discover")


def test_a_log_message_shows_the_line_that_drew_it() -> None:
    """A log message a line that is not JSON drew (BASE-RPC-005 sends it) is shown with that line, the
    last thing sent before it, and not with the case's own last request."""
    report = run([stdio("tests.servers.raw_server", "--defect", "log-on-malformed")], protocol="2025-11-25")
    (case,) = [c for c in report["cases"] if c["check"] == "base.logging.capability-declared"]
    assert case["verdict"] == "FAIL", case["message"]
    assert "parse error" in case["evidence"]["wire_entry"]["text"]
    sent = case["evidence"]["request"]
    with pytest.raises(ValueError):
        json.loads(sent)  # the malformed line itself
    assert case["evidence"]["response"].startswith("(none expected")
    assert sent in [e.get("text") for e in case["transcript"]]


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


def test_http_header_names_matched_with_case(tmp_path: Path) -> None:
    """BASE-HTTP-025: a server that finds its request headers only under the names the text writes misses
    them under another case: a MUST, FAIL; every other HTTP rule holds."""
    target = _http_target(tmp_path, "--defect", "header-name-case-sensitive")
    assert non_pass(run([target], select="base.http.")) == {("base.http.header-name-case", "FAIL")}


def test_http_get_200_mutant(tmp_path: Path) -> None:
    """2026-07-28 makes the 405 a SHOULD: WARN, and FAIL under --strict."""
    target = _http_target(tmp_path, "--defect", "get-200")
    assert non_pass(run([target])) == {("base.http.modern-get-405", "WARN")}
    assert non_pass(run([target], select="http.", strict=True)) == {("base.http.modern-get-405", "FAIL")}


def test_a_header_mismatch_refused_with_another_code_is_a_warn(tmp_path: Path) -> None:
    """BASE-HTTP-003's MUST is the 400, met; -32020 is the schema's error for a rejection because of the
    mismatch, and a server that refused for another reason (the legacy route's -32600) broke no MUST."""
    target = _http_target(tmp_path, "--defect", "mismatch-legacy-code")
    report = run([target], select="base.http.header-mismatch")
    assert non_pass(report) == {("base.http.header-mismatch", "WARN")}
    case = _case(report, "base.http.header-mismatch")
    assert "refused with HTTP 400 but error -32600, not HeaderMismatchError -32020" in case["message"]


def test_a_get_with_no_status_line_is_judged_not_error(tmp_path: Path) -> None:
    """BASE-HTTP-001 (a SHOULD): a GET that draws no status line within the timeout is no 405, and that
    was observed: WARN saying so (FAIL under --strict), never ERROR. 3 s is the deliberate timeout."""
    target = _http_target(tmp_path, "--defect", "get-silent")
    report = run([target], select="base.http.modern-get-405", timeout=3.0)
    assert non_pass(report) == {("base.http.modern-get-405", "WARN")}
    case = _case(report, "base.http.modern-get-405")
    assert "GET was not answered 405: no HTTP status line to GET within 3 s" in case["message"]
    strict = run([target], select="base.http.modern-get-405", timeout=3.0, strict=True)
    assert non_pass(strict) == {("base.http.modern-get-405", "FAIL")}


def test_an_unanswered_ping_fails_its_row() -> None:
    """BASE-PING-001: "The receiver MUST respond promptly": a ping left unanswered past the timeout is the
    finding (FAIL, in each legacy revision), not an ERROR. 3 s is the deliberate timeout."""
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "ping-unanswered")], select="base.ping.", timeout=3.0
    )
    assert non_pass(report) == {("base.ping.empty-result", "FAIL")}
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert {c["revision"] for c in failed} == {"2025-11-25", "2025-06-18"}
    assert all(c["message"].startswith("ping was not answered: no response to request id") for c in failed)


def test_http_unknown_method_32602_mutant(tmp_path: Path) -> None:
    """Over Streamable HTTP 2026-07-28 puts the code under a MUST ("MUST respond with 404 Not Found and
    a JSON-RPC error with code -32601"): BASE-HTTP-013 FAILs, BASE-RPC-007 stays the code table's WARN."""
    target = _http_target(tmp_path, "--defect", "unknown-method-32602")
    assert non_pass(run([target])) == {
        ("base.rpc.method-not-found", "WARN"),
        ("base.http.unknown-method-404", "FAIL"),
    }
    strict = run([target], select="method-not-found", strict=True)
    assert non_pass(strict) == {("base.rpc.method-not-found", "FAIL")}


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
    "base.rpc.id-echo",
    "base.rpc.result-xor-error",
    "base.rpc.error-shape",
    "base.rpc.method-not-found",
    # prompts/list and completion/complete, not declared, are unknown methods to this server.
    "base.cap.undeclared-not-served",
    "base.cap.undeclared-answers-32601",
}
#: ... and those that exist in 2026-07-28 only: over Streamable HTTP, 404 with -32601; the task methods
#: 2026-07-28 removed (BASE-TASK-014), unknown methods to a server that never had them.
MODERN_UNKNOWN_METHOD_CASES = {"base.http.unknown-method-404", "base.tasks.modern-removed"}


def test_http_unknown_method_text_mutant_fails_the_transport_row_once(tmp_path: Path) -> None:
    """400 text/plain for an unknown method (Go SDK servers) breaks one rule, BASE-HTTP-005: one FAIL
    there, and the cases that needed a JSON-RPC answer are SKIP blocked by it, not ERROR or FAIL."""
    report = run([_http_target(tmp_path, "--defect", "unknown-method-text")])
    judge = "base.http.request-answer[http@2026-07-28]"
    assert non_pass(report) == {("base.http.request-answer", "FAIL")} | {
        (check, "SKIP") for check in UNKNOWN_METHOD_CASES | MODERN_UNKNOWN_METHOD_CASES
    }
    failed = next(c for c in report["cases"] if c["key"] == judge)
    assert failed["requirement"] == "BASE-HTTP-005" and "text/plain" in failed["message"]
    # One way of answering, said in words (status, content type, body) with every method it met, not a
    # count of (method, answer) pairs.
    assert failed["message"].startswith("HTTP 400 answered a JSON-RPC request with Content-Type text/plain")
    assert "(body 'method not found" in failed["message"] and "kind(s)" not in failed["message"]
    blocked = [c for c in report["cases"] if c.get("blocked_by")]
    assert {c["check"] for c in blocked} == UNKNOWN_METHOD_CASES | MODERN_UNKNOWN_METHOD_CASES
    assert all(c["blocked_by"] == judge and c["message"].startswith(f"blocked by {judge}") for c in blocked)
    # The verdict the check would have given stays in the evidence (WARN for BASE-TASK-014, a SHOULD;
    # SKIP for BASE-RPC-004, which finds no error object to judge in a text/plain body).
    unblocked = {c["check"]: c["evidence"]["unblocked"].split(":")[0] for c in blocked}
    assert unblocked.pop("base.rpc.error-shape") == "SKIP"
    assert set(unblocked.values()) <= {"FAIL", "ERROR", "WARN"}, unblocked
    # What came back is said as observed (status, content type, body), never "a result".
    (tasks,) = [c for c in blocked if c["check"] == "base.tasks.modern-removed"]
    said = tasks["evidence"]["unblocked"]
    assert "a result" not in said
    assert "HTTP 400 (text/plain; charset=utf-8) and no JSON-RPC answer, body `method not found" in said
    assert report["footer"]["exit_code"] == 1
    assert report["cases"][-1]["key"] == judge, "the judging case runs last in its revision"


def test_without_the_judging_case_a_blocked_case_is_an_error(tmp_path: Path) -> None:
    """`-k` leaving out the row that judges the transport: the case cannot be judged, and says why."""
    report = run([_http_target(tmp_path, "--defect", "unknown-method-text")], select="method-not-found")
    (case,) = report["cases"]
    assert case["verdict"] == "ERROR" and "BASE-HTTP-005" in case["message"] and "blocked_by" not in case


def test_go_style_text_errors_are_one_fail_per_revision_on_a_dual_era_server(tmp_path: Path) -> None:
    """The SDK reference with one defect (unknown method -> 400 text/plain), in every revision it
    speaks over Streamable HTTP: per revision one FAIL on BASE-HTTP-005 and the four rpc cases
    blocked by it, no ERROR."""
    path = tmp_path / "target.toml"
    command = server_argv("tests.servers.text_errors_server", "--http", "--port", "0")
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    # The defect buffers every POST's answer, so a tool that asks for input mid-call (its request rides
    # the answer's SSE stream) is waited out, unjudged, in each revision: 10 s, not the default 30.
    report = run([str(path)], timeout=10.0)
    spoken = report["targets"][0]["revisions_spoken"]
    assert spoken == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    verdicts = {
        (c["check"], c["revision"]): c["verdict"]
        for c in report["cases"]
        if (c["check"], c["verdict"]) in non_pass(report)
    }
    # This server is the reference: it declares every feature, so the undeclared-feature rows SKIP for
    # that reason (nothing undeclared to probe), not blocked by the transport.
    unknown_method_cases = {c for c in UNKNOWN_METHOD_CASES if not c.startswith("base.cap.")}
    expected = {("base.http.request-answer", r): "FAIL" for r in spoken}
    expected |= {(check, r): "SKIP" for check in unknown_method_cases for r in spoken}
    expected |= {(check, "2026-07-28"): "SKIP" for check in MODERN_UNKNOWN_METHOD_CASES}
    expected[("base.http.modern-get-405", "2026-07-28")] = "SKIP"  # a dual-era server's GET stream
    # The reference's GET stream carries nothing (BASE-HTTP-022); before 2025-11-25 no event ID precedes
    # an answer to resume from (BASE-HTTP-021).
    expected |= {("base.http.get-stream-messages", r): "SKIP" for r in spoken if r != "2026-07-28"}
    expected |= {("base.http.resume-own-stream", r): "SKIP" for r in ("2025-06-18", "2025-03-26")}
    # Buffering every POST's answer, it never opens a listen's stream (the answer that does not end):
    # BASE-SUB-010's one FAIL, the other listen rows blocked by it.
    expected[("base.listen.acknowledged-first", "2026-07-28")] = "FAIL"
    assert verdicts == expected
    for case in report["cases"]:
        if case["check"] in unknown_method_cases | MODERN_UNKNOWN_METHOD_CASES:
            assert case["blocked_by"] == f"base.http.request-answer[http@{case['revision']}]"


def test_http_malformed_body_accepted_is_a_fail_without_strict(tmp_path: Path) -> None:
    """Over Streamable HTTP the rule is a MUST: "If the server cannot accept the input, it MUST return an
    HTTP error status code". A 202 with no body for a body that is not JSON is a FAIL."""
    report = run([_http_target(tmp_path, "--defect", "malformed-202")], select="rpc.")
    assert non_pass(report) == {("base.rpc.parse-error", "FAIL")}
    (case,) = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert "neither a JSON-RPC answer nor an HTTP error status" in case["message"]
    assert "b'" not in case["message"], "bytes are shown as text, not as a Python repr"


@pytest.mark.parametrize("defect", sorted(STRICT))
def test_strict_makes_each_missed_should_a_fail(defect: str) -> None:
    report = run(
        [stdio("tests.servers.raw_server", "--defect", defect)],
        protocol="2025-11-25",
        select="rpc.,tools.,call.,hygiene.",
        strict=True,
    )
    assert non_pass(report) == STRICT[defect]
    assert report["footer"]["exit_code"] == 1


def test_strict_fails_nothing_on_the_reference() -> None:
    """--strict holds every SHOULD as a MUST: the reference meets them all, so nothing new FAILs."""
    report = run(None, strict=True, timeout=30.0)  # a busy machine slows start-up, not verdicts
    # The reference's GET stream carries nothing to judge (BASE-HTTP-022), and before 2025-11-25 no event
    # ID precedes an answer to resume from (BASE-HTTP-021): SKIPs, not misses, under --strict too.
    assert non_pass(report) == {
        ("base.http.modern-get-405", "SKIP"),
        ("base.http.get-stream-messages", "SKIP"),
        ("base.http.resume-own-stream", "SKIP"),
    }
    assert report["footer"]["exit_code"] == 0


def _transcript(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    """The case's messages after the session's opening: with -j 1 a case may open its revision's
    session itself (the probe's process was stopped), and the handshake is not what it judged."""
    (case,) = [c for c in report["cases"] if c["check"] == check]
    wire = [e for e in case["transcript"] if e["dir"] in ("send", "recv")]
    opening = [i for i, e in enumerate(wire) if '"notifications/initialized"' in e.get("text", "")]
    return wire[opening[-1] + 1 :] if opening else wire


def test_an_ignored_line_is_settled_by_the_sentinel_not_by_a_wait() -> None:
    """Right after each probe the harness sends a ping (a request the server must answer); its answer
    settles the silence. The wire shows probe, ping, the ping's answer, and the next probe: no request
    was left to time out, whatever the timeout (here 60 s)."""
    before = UNANSWERED.exchanges
    report = run(
        [stdio("tests.servers.raw_server", "--defect", "no-parse-error")],
        protocol="2025-11-25",
        select="rpc.parse-error",
        timeout=60.0,
    )
    (case,) = report["cases"]
    assert case["verdict"] == "WARN"
    assert "ping after it was answered" in case["message"] and "no official SDK" in case["message"]
    wire = _transcript(report, "base.rpc.parse-error")
    probes = [
        v["send"] for v in vectors.load("base", "envelope-probes.json") if v["requirement"] == "BASE-RPC-005"
    ]
    assert [e["text"] for e in wire if e["dir"] == "send" and "sentinel" not in e["text"]] == probes
    shape = [(e["dir"], json.loads(e["text"])["id"] if "sentinel" in e["text"] else "probe") for e in wire]
    pings = [i for d, i in shape if d == "send" and i != "probe"]
    assert len(pings) == 2 and shape == [
        ("send", "probe"), ("send", pings[0]), ("recv", pings[0]),
        ("send", "probe"), ("send", pings[1]), ("recv", pings[1]),
    ]  # fmt: skip
    assert UNANSWERED.exchanges - before == 2, "each unanswered probe is counted once"


def test_a_server_that_exits_on_a_bad_line_is_judged_and_restarted() -> None:
    report = run([stdio("tests.servers.raw_server", "--defect", "exit-on-malformed")], protocol="2025-11-25")
    assert non_pass(report) == {("base.rpc.parse-error", "WARN")}
    (case,) = [c for c in report["cases"] if c["verdict"] == "WARN"]
    assert "exited" in case["message"] and "exit status 3" in case["message"]
    assert [e["probe"] for e in case["evidence"]["exited"]] == [
        "base.parse.truncated-object",
        "base.parse.bare-word",
    ]
    assert "fatal: cannot parse" in case["evidence"]["exited"][0]["diagnostics"], (
        "the stderr tail is evidence"
    )


#: The cases of `rpc.` left SKIP when the server went deaf after BASE-RPC-005's first line.
DEAF_SKIPPED = {("base.rpc.invalid-request", "SKIP")}


@pytest.mark.parametrize(
    ("defect", "strict"),
    [
        ("deaf-after-malformed", False),
        ("deaf-after-malformed", True),
        ("deaf-after-invalid", False),
        ("hang-on-malformed", False),
    ],
)
def test_a_server_deaf_after_a_bad_line_is_warned_once_per_revision(defect: str, strict: bool) -> None:
    """Neither the malformed line nor the sentinel after it answered, and the server did not exit (a JSON
    decoder reading across lines, a loop that stopped reading): MCP requires no answer there, so WARN
    as for an exit (--strict: FAIL), never ERROR; one bounded wait per revision: BASE-RPC-005's next line
    is not sent and BASE-RPC-006 is SKIP blocked by that case; the cases after it run on a restarted
    session and are judged."""
    before = UNANSWERED.exchanges
    report = run(
        [stdio("tests.servers.raw_server", "--defect", defect)],
        protocol="2025-11-25",
        select="rpc.",
        timeout=5.0,  # waited out once, deliberately: ample for every answer the server does give
        strict=strict,
    )
    miss = "FAIL" if strict else "WARN"
    assert non_pass(report) == {("base.rpc.parse-error", miss), *DEAF_SKIPPED}
    assert report["footer"]["exit_code"] == (1 if strict else 0)
    cases = {c["check"]: c for c in report["cases"]}
    deaf, skipped = cases["base.rpc.parse-error"], cases["base.rpc.invalid-request"]
    assert "the server went deaf after `{" in deaf["message"], deaf["message"]
    assert "neither the probe nor the ping after it was answered within 5 s" in deaf["message"]
    assert "not sent, so as not to wait again: base.parse.bare-word" in deaf["message"]
    assert deaf["evidence"]["deaf"]["probe"] == "base.parse.truncated-object"
    assert (
        skipped["blocked_by"] == deaf["key"]
        and "not sent (base.invalid.numeric-method)" in skipped["message"]
    )
    assert cases["base.rpc.method-not-found"]["verdict"] == "PASS", "judged on a restarted session"
    assert UNANSWERED.exchanges - before == 1, "one bounded wait in the revision"


#: What a Python repr looks like in a message: `=None`, a bytes literal, a dict's or a list's of
#: strings, a bare None. A message states the observation in words and JSON text, never these.
REPR = re.compile(r"=None\b|\bb'|\bb\"|\{'|\['|\bNone\b")


@pytest.mark.parametrize(
    ("module", "defect", "revision"),
    [
        ("tests.servers.raw_server", "notif-error", None),
        ("tests.servers.base_tasks_mutants", "none", "2025-11-25"),
        ("tests.servers.base_tasks_mutants", "no-tasks", "2025-11-25"),
        ("tests.servers.base_prompts_mutants", "no-prompts", "2026-07-28"),
    ],
)
def test_no_python_repr_reaches_a_message(module: str, defect: str, revision: str | None) -> None:
    """Every case message of a run over a few mutants (tasks, logging, input, a reply without an id)
    says what was observed in words and JSON text: no `None`, `b'...'` or `{'...'}` reaches a view."""
    options = {"protocol": revision} if revision else {}
    report = run([stdio(module, "--defect", defect)], **options)
    reprs = {c["key"]: c["message"] for c in report["cases"] if REPR.search(c["message"])}
    assert reprs == {}

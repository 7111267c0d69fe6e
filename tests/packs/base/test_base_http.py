"""The base pack's Streamable HTTP, session and stdio-shutdown checks: each planted defect of
`tests/servers/base_http_mutants.py` (the reference with one fault) FAILs, or WARNs for a SHOULD, exactly
the checks it breaks, in every revision the rule exists in; the reference passes them (its own tests)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import non_pass, run, server_argv, stdio
from tests.servers.base_http_mutants import DEFECTS, HTTP_DEFECTS

#: A dual-era server keeps its legacy GET stream: the 2026-07-28-only GET rule is SKIP on every mutant.
GET_SKIP = ("base.http.modern-get-405", "SKIP")
#: The reference's GET stream carries no message (BASE-HTTP-022) and, before 2025-11-25, no event ID
#: precedes an answer (BASE-HTTP-021): SKIP on every mutant here (tests/packs/base/test_base_get_stream.py).
REFERENCE_SKIPS = {
    GET_SKIP,
    ("base.http.get-stream-messages", "SKIP"),
    ("base.http.resume-own-stream", "SKIP"),
}
#: The transport families a defect can touch; the rest of the base suite is the reference's own tests'.
HTTP_SELECT = "base.origin.,base.http.,base.session.,base.rpc.,base.lifecycle.,base.modern."

EXPECTED: dict[str, set[tuple[str, str]]] = {
    "origin-ignored": {("base.origin.foreign-403", "FAIL"), ("base.origin.foreign-refused", "FAIL")},
    # 2025-03-26 and 2025-06-18 name no status for the refusal: a 400 refuses there.
    "origin-400": {("base.origin.foreign-403", "FAIL")},
    # A 500 with no JSON-RPC body is no 403 (observed, not an ERROR), and it does refuse the request
    # where the text names no status (2025-03-26, 2025-06-18: PASS).
    "origin-500": {("base.origin.foreign-403", "FAIL")},
    "notify-200": {("base.http.notification-202", "FAIL")},
    "response-200": {("base.http.response-202", "FAIL")},
    "session-id-space": {("base.session.id-visible-ascii", "FAIL")},
    "session-optional": {("base.session.missing-id-400", "WARN")},
    # The session never ends, so there is no 404 for the re-initialize check to start from.
    "delete-ignored": {("base.session.ended-404", "FAIL"), ("base.session.reinitialize", "SKIP")},
    "reinit-refused": {("base.session.reinitialize", "WARN")},
    "bad-version-accepted": {("base.http.legacy-bad-protocol-header", "FAIL")},
    "unknown-method-200": {("base.http.unknown-method-404", "FAIL")},
    "method-header-optional": {("base.http.method-header-required", "FAIL")},
    "name-header-unchecked": {("base.http.name-header-matched", "FAIL")},
    # The missing field's error code is BASE-MODERN-003's on every transport; the 400 is BASE-HTTP-016's,
    # SKIP blocked by it when the request was served.
    "meta-optional": {("base.modern.meta-required", "FAIL"), ("base.http.meta-required", "SKIP")},
    "method-value-folded": {("base.http.method-value-case", "FAIL")},
    "sse-request": {("base.http.no-server-requests", "FAIL")},
    "posts-one-at-a-time": {("base.http.concurrent-posts", "FAIL")},
    # Refusing its own origin is no MUST's miss (the text refuses invalid ones): WARN.
    "own-origin-refused": {("base.origin.own-served", "WARN")},
    "error-id-null": {("base.rpc.id-echo", "FAIL")},
    # clientInfo is a field the server SHOULD NOT act on: WARN.
    "client-info-required": {("base.modern.client-info-optional", "WARN")},
    # A SHOULD of 2025-11-25 only: WARN there.
    "priming-dropped": {("base.http.priming-event", "WARN")},
    "stdin-ignored": {
        ("base.stdio.exit-on-stdin-close", "WARN"),
        ("base.stdio.legacy-exit-on-stdin-close", "WARN"),
    },
    "stdout-request": {("base.stdio.no-server-requests", "FAIL")},
    # Its own test below: the GET is waited out (a deliberate 3 s) in each legacy revision.
    "get-silent": {("base.http.legacy-get", "FAIL")},
    # The 2026-07-28 _meta rules over stdio: the error code, with no HTTP status to ask for.
    "stdio-meta-optional": {("base.modern.meta-required", "FAIL")},
    "stdio-version-accepted": {("base.modern.unsupported-revision", "FAIL")},
    # Met on a session of its own after two other requests, whichever cases ran before.
    "stdio-version-checked-early": {("base.modern.unsupported-revision", "FAIL")},
    # Over HTTP+SSE, where BASE-CANCEL-002 is judged like stdio: a SHOULD, so WARN.
    "cancel-ignored": {("base.cancel.no-response", "WARN")},
}
#: HTTP defects with a test of their own (they cost a timeout).
OWN_TEST = {"get-silent"}
#: The revisions each FAIL or WARN above is given in (the rule's own revisions, as spoken over HTTP).
LEGACY_HTTP = {"2025-11-25", "2025-06-18", "2025-03-26"}
REVISIONS = {
    "base.origin.foreign-403": {"2026-07-28", "2025-11-25"},
    "base.origin.foreign-refused": {"2025-06-18", "2025-03-26"},
    "base.http.notification-202": {"2026-07-28", *LEGACY_HTTP},
    "base.http.response-202": LEGACY_HTTP,
    "base.session.id-visible-ascii": LEGACY_HTTP,
    "base.session.missing-id-400": LEGACY_HTTP,
    "base.session.ended-404": LEGACY_HTTP,
    "base.session.reinitialize": LEGACY_HTTP,
    "base.http.legacy-bad-protocol-header": {"2025-11-25", "2025-06-18"},
    "base.http.unknown-method-404": {"2026-07-28"},
    "base.http.method-header-required": {"2026-07-28"},
    "base.http.name-header-matched": {"2026-07-28"},
    "base.http.meta-required": {"2026-07-28"},
    "base.http.method-value-case": {"2026-07-28"},
    "base.http.no-server-requests": {"2026-07-28"},
    "base.http.concurrent-posts": {"2026-07-28", *LEGACY_HTTP},
    "base.origin.own-served": {"2026-07-28", *LEGACY_HTTP},
    "base.rpc.id-echo": {"2026-07-28"},
    "base.modern.client-info-optional": {"2026-07-28"},
    "base.http.priming-event": {"2025-11-25"},
    "base.stdio.exit-on-stdin-close": {"2026-07-28"},
    "base.stdio.legacy-exit-on-stdin-close": {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"},
    "base.stdio.no-server-requests": {"2026-07-28"},
    "base.http.legacy-get": LEGACY_HTTP,
    "base.modern.meta-required": {"2026-07-28"},
    "base.modern.unsupported-revision": {"2026-07-28"},
    "base.cancel.no-response": {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"},
}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)
    assert {check for found in EXPECTED.values() for check, _ in found} <= set(REVISIONS)


def _http_target(tmp_path: Path, defect: str) -> str:
    path = tmp_path / f"{defect}.toml"
    command = server_argv("tests.servers.base_http_mutants", "--defect", defect, "--http")
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


def _judged_in(report: dict[str, Any]) -> dict[str, set[str]]:
    revisions: dict[str, set[str]] = {}
    for case in report["cases"]:
        if case["verdict"] != "PASS" and (case["check"], case["verdict"]) not in REFERENCE_SKIPS:
            revisions.setdefault(case["check"], set()).add(case["revision"])
    return revisions


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(set(HTTP_DEFECTS) - OWN_TEST))
def test_http_mutant_fails_exactly_its_checks(tmp_path: Path, defect: str) -> None:
    report = run([_http_target(tmp_path, defect)], select=HTTP_SELECT)
    assert report["targets"][0]["revisions_spoken"] == [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
    ]
    assert non_pass(report) == EXPECTED[defect] | REFERENCE_SKIPS
    assert _judged_in(report) == {check: REVISIONS[check] for check, _ in EXPECTED[defect]}
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert all(c["evidence"] or c["message"] for c in failed), "a FAIL carries its evidence"


def test_a_get_with_no_status_line_fails_the_get_row(tmp_path: Path) -> None:
    """BASE-HTTP-002's own test: a GET that is neither an event stream nor 405 FAILs, and one that draws no
    status line within the timeout is neither: a FAIL saying so, in each legacy revision, not an ERROR."""
    report = run([_http_target(tmp_path, "get-silent")], select="base.http.legacy-get", timeout=3.0)
    # One defect, one verdict: the GET is sent once for the target (the newest legacy revision judges
    # it); the row in the other revisions is SKIP blocked by that case and sends no GET of its own.
    assert non_pass(report) == EXPECTED["get-silent"] | {("base.http.legacy-get", "SKIP")}
    (failed,) = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    expected = "neither with an event stream nor with 405: no HTTP status line to GET within 3 s"
    assert expected in failed["message"] and failed["revision"] == "2025-11-25"
    skipped = [c for c in report["cases"] if c["verdict"] == "SKIP"]
    assert {c["revision"] for c in skipped} == REVISIONS["base.http.legacy-get"] - {"2025-11-25"}
    assert all(c["blocked_by"] == failed["key"] for c in skipped)


def test_a_foreign_origin_served_shows_the_answer(tmp_path: Path) -> None:
    """The Origin FAIL carries what the server did: its status and the result it gave the foreign page."""
    report = run(
        [_http_target(tmp_path, "origin-ignored")], select="base.origin.foreign-", protocol="2025-11-25"
    )
    (case,) = report["cases"]
    assert case["verdict"] == "FAIL" and "http://evil.example was served: HTTP 200" in case["message"]
    assert case["evidence"]["http_status"] == 200 and case["evidence"]["origin_sent"] == "http://evil.example"


@pytest.mark.parametrize(
    ("revision", "check"),
    [
        ("2024-11-05", "base.origin.foreign-refused"),
        ("2025-11-25", "base.origin.sse-foreign-refused"),
        ("2026-07-28", "base.origin.sse-foreign-refused"),
    ],
)
def test_a_foreign_origin_served_over_http_sse_fails_in_every_revision(
    tmp_path: Path, revision: str, check: str
) -> None:
    """The HTTP+SSE transport, whatever revision its session negotiates: a whole session opened with the
    foreign Origin is the FAIL of BASE-ORIGIN-002; the reference (run here too) refuses it."""
    path = tmp_path / "sse.toml"
    command = [
        sys.executable,
        "-m",
        "tests.servers.base_http_mutants",
        "--defect",
        "origin-ignored",
        "--http",
        "--sse",
    ]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "sse"\n', encoding="utf-8")
    report = run([str(path)], select="base.origin.", protocol=revision)
    (case,) = report["cases"]
    assert case["check"] == check and case["requirement"] == "BASE-ORIGIN-002"
    assert case["verdict"] == "FAIL" and "was opened, its opening request answered" in case["message"]
    reference = tmp_path / "reference.toml"
    command = [sys.executable, "-m", "conformance_reference.base_server", "--http", "--sse"]
    reference.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "sse"\n', encoding="utf-8")
    (case,) = run([str(reference)], select="base.origin.", protocol=revision)["cases"]
    assert case["check"] == check and case["verdict"] == "PASS", case["message"]


def _sse_target(tmp_path: Path, module: str, *args: str) -> str:
    path = tmp_path / f"{module}{len(args)}.toml"
    command = server_argv(module, *args, "--http", "--port", "0", "--sse")
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "sse"\n', encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_a_cancelled_call_answered_over_http_sse_is_a_warn(tmp_path: Path) -> None:
    """BASE-CANCEL-002 over HTTP+SSE, in every revision a session there speaks: the mutant drops the
    cancellation at the endpoint, so the call is answered after it (WARN, a SHOULD); the reference
    drew no response to it (PASS)."""
    report = run(
        [_sse_target(tmp_path, "tests.servers.base_http_mutants", "--defect", "cancel-ignored")],
        select="cancel.no-response",
    )
    assert non_pass(report) == EXPECTED["cancel-ignored"]
    assert _judged_in(report) == {"base.cancel.no-response": REVISIONS["base.cancel.no-response"]}
    reference = run([_sse_target(tmp_path, "conformance_reference.base_server")], select="cancel.no-response")
    assert non_pass(reference) == set() and len(reference["cases"]) == 5


@pytest.mark.slow
def test_a_server_that_outlives_its_stdin_is_a_warn() -> None:
    """The wait is bounded by the request timeout (here 3 s, waited out once per revision on purpose)."""
    report = run(
        [stdio("tests.servers.base_http_mutants", "--defect", "stdin-ignored")],
        select="base.stdio.",
        timeout=3.0,
    )
    assert non_pass(report) == EXPECTED["stdin-ignored"]
    assert _judged_in(report) == {check: REVISIONS[check] for check, _ in EXPECTED["stdin-ignored"]}
    warned = [c for c in report["cases"] if c["verdict"] == "WARN"]
    assert all("still running 3 s after its stdin was closed" in c["message"] for c in warned)


def test_a_request_on_stdout_is_a_fail_in_2026_07_28_only() -> None:
    report = run(
        [stdio("tests.servers.base_http_mutants", "--defect", "stdout-request")],
        select="base.stdio.,base.rpc.",
    )
    assert non_pass(report) == EXPECTED["stdout-request"]
    (case,) = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert case["revision"] == "2026-07-28" and "mutant-ping" in case["message"]


@pytest.mark.parametrize(
    "defect", ["stdio-meta-optional", "stdio-version-accepted", "stdio-version-checked-early"]
)
def test_a_2026_07_28_meta_rule_broken_over_stdio_fails_its_row(defect: str) -> None:
    """BASE-MODERN-003 and -002 hold over stdio too (the error code; the 400 is BASE-HTTP-016's and
    -004's): each mutant
    FAILs exactly its row, in 2026-07-28 only, and the reference passes both (the revision's own run)."""
    report = run([stdio("tests.servers.base_http_mutants", "--defect", defect)], select="base.modern.")
    assert non_pass(report) == EXPECTED[defect]
    assert _judged_in(report) == {check: REVISIONS[check] for check, _ in EXPECTED[defect]}
    reference = run(
        [stdio("conformance_reference.base_server")], select="base.modern.", protocol="2026-07-28"
    )
    assert non_pass(reference) == set()
    assert {c["check"] for c in reference["cases"]} >= {
        "base.modern.meta-required",
        "base.modern.unsupported-revision",
    }


def test_the_reference_exits_on_stdin_close_and_writes_no_request() -> None:
    report = run([stdio("conformance_reference.base_server")], select="base.stdio.")
    assert non_pass(report) == set()
    exits = [c for c in report["cases"] if "exit-on-stdin-close" in c["check"]]
    assert len(exits) == 5 and all("after its stdin was closed" in c["message"] for c in exits)

"""The surface rows (BASE-WIRE, -CAP, -PING, -NOTIF, -PAGE, BASE-LIFE-010): each planted defect FAILs (or
WARNs, for a SHOULD) exactly the checks it breaks, the conformant mutant passes everything, and the
wire-log reader and the `list` column say what they should.

One run judges every mutant (a target each, `-j 2`), shared by the module: one report, many assertions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.protocol.versions import LEGACY_REVISIONS
from conformance_packs.base import wire
from conformance_packs.base.wirelog import server_messages
from tests.conftest import cli, other_areas_left_out, run, stdio
from tests.servers.base_surface_mutants import DEFECTS

MODERN = "2026-07-28"

EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "wire-error-shape": {("base.wire.message-shapes", "FAIL")},
    # Logging is declared, so the notification breaks its shape; the logging rows see the rest of the
    # defect: logging declared but logging/setLevel refused (legacy: an error answer, which no sentence
    # forbids, WARN), log messages sent for requests that asked for none and an unknown logLevel not
    # refused (2026-07-28).
    "wire-notification-shape": {
        ("base.wire.message-shapes", "FAIL"),
        ("base.logging.set-level", "WARN"),
        ("base.logging.invalid-level", "WARN"),
        ("base.logging.modern-opt-in", "FAIL"),
        ("base.logging.modern-invalid-level", "WARN"),
    },
    # Served undeclared is the MUST; answered with a result rather than -32601 is the SHOULD.
    "undeclared-served": {
        ("base.cap.undeclared-not-served", "FAIL"),
        ("base.cap.undeclared-answers-32601", "WARN"),
    },
    "undeclared-code": {("base.cap.undeclared-answers-32601", "WARN")},
    # The log messages break two rules: logging undeclared (BASE-LOG-004, the logging page's MUST, not
    # BASE-CAP-003 too) and, in 2026-07-28, sent for requests that asked for none.
    "undeclared-notification": {
        ("base.logging.capability-declared", "FAIL"),
        ("base.logging.modern-opt-in", "FAIL"),
    },
    # One defect, one verdict: the ping after the handshake is not empty either, so the early ping's
    # row is SKIP blocked by BASE-PING-001.
    "ping-not-empty": {
        ("base.ping.empty-result", "FAIL"),
        ("base.lifecycle.ping-during-initialize", "SKIP"),
    },
    "ping-before-initialized": {("base.lifecycle.ping-during-initialize", "FAIL")},
    # No ping at all: BASE-PING-001's one FAIL; the early ping's row and the cancellations' row (whose
    # sentinel is a ping) are SKIP blocked by it.
    "no-ping": {
        ("base.ping.empty-result", "FAIL"),
        ("base.lifecycle.ping-during-initialize", "SKIP"),
        ("base.cancel.invalid-ignored", "SKIP"),
    },
    # The exit status and stderr are the evidence: the early ping went unanswered (a FAIL, not an ERROR).
    "exit-on-early-ping": {("base.lifecycle.ping-during-initialize", "FAIL")},
    # An invalid notifications/cancelled is a notification too: answering it is BASE-NOTIF-001's fault,
    # which sends both cancellations; BASE-CANCEL-001 is SKIP blocked by it (one defect, one verdict).
    "answers-notifications": {("base.notif.no-response", "FAIL"), ("base.cancel.invalid-ignored", "SKIP")},
    # No MCP sentence requires a listing to end: a SHOULD, as for tools/list (BASE-TOOLS-006).
    "templates-cursor-loop": {("base.page.lists-end", "WARN")},
    "invalid-cursor-ignored": {("base.page.invalid-cursor", "WARN")},
    # -32002 in 2026-07-28 is also not the -32602 its resources page requires (whose data is not judged).
    "retired-code": {
        ("base.wire.error-codes", "FAIL"),
        ("base.resources.unknown-code-modern", "FAIL"),
        ("base.resources.unknown-data-uri", "SKIP"),
    },
    # The prompts/list shape of 2026-07-28 requires the hints too; this server declares prompts and
    # has no prompts/get, so an unknown prompt is not refused with -32602 (a SHOULD).
    "no-cache-hints": {
        ("base.page.caching-hints", "FAIL"),
        ("base.prompts.list-shape", "FAIL"),
        ("base.prompts.unknown-name", "WARN"),
    },
    "mixed-cache-scope": {("base.page.same-cache-scope", "FAIL")},
    "per-connection-list": {("base.cap.lists-per-connection", "FAIL")},
    # 2026-07-28's MUST is BASE-CAP-005's (the shape row SKIPs blocked by it); before it no sentence
    # requires a declared list method to succeed: the refusal is WARN, judged as an error.
    "declared-unanswered": {
        ("base.cap.declared-lists-answered", "FAIL"),
        ("base.prompts.list-shape", "WARN"),
        ("base.prompts.unknown-name", "WARN"),
    },
    "no-server-info": {("base.wire.server-info-meta", "WARN")},
    "asks-roots-when-idle": set(),
    # The early ping's answer comes just after the later ping's, between two waits: kept, and judged.
    "early-ping-answered-late": set(),
    # Never answered while the later pings are: weak evidence (the server may have taken it as late).
    "early-ping-unanswered": {("base.lifecycle.ping-during-initialize", "WARN")},
}
ORDER = sorted(DEFECTS)


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    targets = [stdio("tests.servers.base_surface_mutants", "--defect", defect) for defect in ORDER]
    return run(targets, jobs=2)


@pytest.mark.slow
@pytest.mark.parametrize("defect", ORDER)
def test_surface_mutant_fails_exactly_its_checks(report: dict[str, Any], defect: str) -> None:
    index = ORDER.index(defect)
    assert report["targets"][index]["revisions_spoken"] == [MODERN, "2025-11-25", "2025-06-18"]
    cases = [c for c in report["cases"] if c["target"] == index]
    found = {(c["check"], c["verdict"]) for c in cases if c["verdict"] != "PASS"}
    assert other_areas_left_out(found) == EXPECTED[defect]
    for case in cases:
        if case["verdict"] == "FAIL":
            assert case["message"] and (case["evidence"] or case["transcript"]), case["key"]


@pytest.mark.slow
def test_the_wire_check_names_the_json_pointer(report: dict[str, Any]) -> None:
    index = ORDER.index("wire-notification-shape")
    case = next(
        c for c in report["cases"] if c["target"] == index and c["check"] == "base.wire.message-shapes"
    )
    assert "/params/level: 'loud' is not one of" in case["message"]
    assert "/params: 'data' is a required property" in case["message"]


def _entry(direction: str, message: Any, channel: str = "stdout") -> dict[str, Any]:
    return {
        "dir": direction,
        "channel": "stdin" if direction == "send" else channel,
        "text": json.dumps(message),
    }


def test_responses_are_matched_to_their_request_method() -> None:
    log = [
        _entry("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        _entry("send", {"jsonrpc": "2.0", "id": "a", "method": "ping"}),
        _entry("recv", {"jsonrpc": "2.0", "id": "a", "result": {}}),
        _entry("recv", {"jsonrpc": "2.0", "id": 1, "result": {"tools": "none"}}),
        _entry("recv", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}),
        {"dir": "recv", "channel": "stdout", "text": "not json"},
    ]
    seen = server_messages(log)
    assert [(s.kind, s.method) for s in seen] == [
        ("response", "ping"),
        ("response", "tools/list"),
        ("notification", "notifications/progress"),
    ]
    assert wire.judge(seen[0], "2025-11-25") == []
    assert wire.judge(seen[1], "2025-11-25") == ["/result/tools: 'none' is not of type 'array'"]
    assert wire.judge(seen[2], "2025-11-25") == ["/params: 'progressToken' is a required property"]
    # 2026-07-28: every result has resultType, a list carries its caching hints.
    assert "/result: 'resultType' is a required property" in wire.judge(seen[0], MODERN)


def test_a_response_whose_id_two_sessions_used_for_different_methods_is_judged_by_its_envelope() -> None:
    log = [
        _entry("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        _entry("send", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        _entry("recv", {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ]
    (seen,) = server_messages(log)
    assert seen.method is None and wire.judge(seen, "2025-11-25") == []


def test_list_shows_the_revisions_of_each_check() -> None:
    done = cli("list", "--suite", "base")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "2026-07-28" in lines["base.page.same-cache-scope"]
    assert "2025-11-25" not in lines["base.page.same-cache-scope"]
    legacy = lines["base.ping.empty-result"]
    assert all(r in legacy for r in (LEGACY_REVISIONS[0], LEGACY_REVISIONS[-1])) and MODERN not in legacy
    assert "all" in lines["base.wire.message-shapes"].split()


@pytest.mark.parametrize("row", ["BASE-WIRE-001", "BASE-CAP-004", "BASE-PAGE-004", "BASE-LIFE-010"])
def test_explain_prints_each_new_row(row: str) -> None:
    done = cli("explain", row)
    assert done.returncode == 0 and "Quote:" in done.stdout and "Checks:  base." in done.stdout


def test_official_schema_agrees_where_present() -> None:
    """An optional cross-check: the shapes the wire check uses for notification params name the same
    required members as the official 2026-07-28 schema, when a copy of it is at hand (never committed)."""
    official = (
        Path(__file__).resolve().parents[2].parent.parent / "shared" / "mcp-schema" / f"{MODERN}.schema.json"
    )
    if not official.is_file():
        pytest.skip("no official MCP schema at hand")
    defs = json.loads(official.read_text(encoding="utf-8"))["$defs"]
    from conformance.schemas import SHAPES_ID, schema

    ours = schema(SHAPES_ID)["$defs"]
    pairs = {
        "loggingMessageParams": "LoggingMessageNotificationParams",
        "progressParams": "ProgressNotificationParams",
        "resourceUpdatedParams": "ResourceUpdatedNotificationParams",
    }
    for mine, theirs in pairs.items():
        assert set(ours[mine]["required"]) == set(defs[theirs]["required"]), mine


def _starts(cases: list[dict[str, Any]]) -> dict[str, int]:
    """How many server processes each case's transcript shows starting (the adapter's `started pid`)."""
    return {
        c["check"]: sum("started pid" in str(e.get("note", "")) for e in c["transcript"] or []) for c in cases
    }


@pytest.mark.parametrize("defect", ["none", "exit-on-early-ping", "asks-roots-when-idle"])
def test_the_early_ping_opens_the_input_sweeps_process(defect: str) -> None:
    """BASE-LIFE-010's opening is the input sweep's too (one process, not two); a server the early ping
    ends costs the sweep one start of its own, and its verdict is the same as the conformant server's;
    what the server asked while that session was idle is answered when the sweep takes it up."""
    report = run(
        [stdio("tests.servers.base_surface_mutants", "--defect", defect)],
        select="BASE-LIFE-010,BASE-INPUT-001",
        protocol="2025-11-25",
        keep_transcripts=True,
        jobs=1,
    )
    cases = {c["check"]: c for c in report["cases"]}
    starts = _starts(report["cases"])
    life, declared = cases["base.lifecycle.ping-during-initialize"], cases["base.input.declared-only"]
    assert declared["verdict"] == "PASS", declared["message"]
    assert "declared:" in declared["message"]  # the sweep called tools as the declaring client
    assert starts["base.lifecycle.ping-during-initialize"] == 1
    asks = "1 ask(s) seen" if defect == "asks-roots-when-idle" else "0 ask(s) seen"
    assert declared["message"].endswith(asks), declared["message"]
    if defect != "exit-on-early-ping":
        assert life["verdict"] == "PASS"
        assert starts["base.input.declared-only"] == 0  # it continued on the early ping's process
    else:
        assert life["verdict"] == "FAIL" and "never answered" in life["message"]
        assert starts["base.input.declared-only"] == 1


@pytest.mark.parametrize(
    ("defect", "verdict"), [("early-ping-answered-late", "PASS"), ("early-ping-unanswered", "WARN")]
)
def test_an_early_ping_answered_after_the_later_one_is_kept(defect: str, verdict: str) -> None:
    """The early ping's answer written right after the later ping's, in one write: the wait for the later
    ping ends at its own answer and the early one's is read by the drain before the next send, between
    two waits; it is kept and read by id (BASE-LIFE-010 PASSes, as it WARNed when the drain dropped
    it). A server that never answers the early ping still WARNs."""
    report = run(
        [stdio("tests.servers.base_surface_mutants", "--defect", defect)],
        select="BASE-LIFE-010",
        keep_transcripts=True,
        jobs=1,
    )
    cases = [c for c in report["cases"] if c["check"] == "base.lifecycle.ping-during-initialize"]
    assert cases and {c["revision"] for c in cases} <= set(LEGACY_REVISIONS)
    assert {c["verdict"] for c in cases} == {verdict}, [c["message"] for c in cases]
    if verdict == "WARN":
        assert all("never answered" in c["message"] for c in cases)
        return
    for case in cases:
        answers = [
            s.message["id"]
            for s in server_messages(case["transcript"])
            if s.kind == "response" and s.message.get("result") == {}
        ]
        assert answers[:2] == [answers[0], "conformance-early-ping"], "the later ping was answered first"

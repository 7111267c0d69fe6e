"""The legacy GET stream and resumption checks (BASE-HTTP-019 to -022): each planted defect of
`tests/servers/get_stream_mutants.py` FAILs exactly the row it breaks, in each revision where the check
gets that far; `none` (the reference behind the same middleware) passes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run, server_argv

SELECT = "base.http.legacy-get,base.http.get-stream,base.http.event-ids,base.http.resume"
LEGACY_HTTP = {"2025-11-25", "2025-06-18", "2025-03-26"}
#: What the reference leaves unjudged, with every defect: its GET stream carries nothing, and before
#: 2025-11-25 (no priming event) no event ID precedes a ping's answer, so there is nothing to resume.
REFERENCE_SKIPS = {
    ("base.http.get-stream-messages", "SKIP"): LEGACY_HTTP,
    ("base.http.resume-own-stream", "SKIP"): {"2025-06-18", "2025-03-26"},
}
EXPECTED: dict[str, dict[tuple[str, str], set[str]]] = {
    "none": {},
    "get-response": {("base.http.get-stream-no-response", "FAIL"): LEGACY_HTTP},
    "get-garbage": {("base.http.get-stream-messages", "FAIL"): LEGACY_HTTP},
    "event-id-repeat": {("base.http.event-ids-unique", "FAIL"): LEGACY_HTTP},
    # Judged where a priming event gives a cursor before the answer: 2025-11-25.
    "replay-other-stream": {("base.http.resume-own-stream", "FAIL"): {"2025-11-25"}},
}
#: Reference SKIPs a defect turns into a PASS: the stray response is a JSON-RPC message, which gives
#: BASE-HTTP-022 something to judge (and it passes).
JUDGED_BY_DEFECT = {"get-response": {("base.http.get-stream-messages", "SKIP")}}
#: The defect whose GET never answers (no status line ever comes): judged on its own below.
SILENT = "get-buffered"
#: Seconds a GET waits for its status line in that test (every other answer comes in milliseconds).
SILENT_TIMEOUT = 5.0


def _target(tmp_path: Path, defect: str) -> str:
    path = tmp_path / f"{defect}.toml"
    command = server_argv("tests.servers.get_stream_mutants", "--defect", defect, "--http")
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


def _non_pass(report: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for case in report["cases"]:
        if case["verdict"] != "PASS":
            found.setdefault((case["check"], case["verdict"]), set()).add(case["revision"])
    return found


def test_every_defect_has_an_expectation() -> None:
    from tests.servers.get_stream_mutants import DEFECTS

    assert set(EXPECTED) | {SILENT} == set(DEFECTS)


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(EXPECTED))
def test_get_stream_mutant_fails_exactly_its_row(tmp_path: Path, defect: str) -> None:
    report = run([_target(tmp_path, defect)], select=SELECT)
    expected = {k: v for k, v in REFERENCE_SKIPS.items() if k not in JUDGED_BY_DEFECT.get(defect, set())}
    for key, revisions in EXPECTED[defect].items():
        check = key[0]
        for skipped in [k for k in expected if k[0] == check]:
            left = expected.pop(skipped) - revisions
            if left:
                expected[skipped] = left
        expected[key] = revisions
    assert _non_pass(report) == expected
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert all(c["evidence"] for c in failed), "a FAIL carries its evidence"


@pytest.mark.slow
def test_a_get_that_never_answers_is_met_once_and_blocks_every_get_row(tmp_path: Path) -> None:
    """A server that buffers a GET's whole answer never sends a status line for a stream (fastapi-mcp):
    BASE-HTTP-002 meets that in the first legacy revision and holds the one verdict; every other GET
    row, in every revision (BASE-HTTP-002's too: how a server answers a GET does not depend on the
    revision), is SKIP blocked by it and sends no GET. Counted from the server's own log of the GETs
    it received, not timed."""
    log = tmp_path / "gets.log"
    command = server_argv("tests.servers.get_stream_mutants", "--defect", SILENT, "--http", "--log", str(log))
    path = tmp_path / f"{SILENT}.toml"
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    report = run([str(path)], select=SELECT, timeout=SILENT_TIMEOUT)
    judged = [c for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")]
    assert [(c["check"], c["revision"]) for c in judged] == [("base.http.legacy-get", "2025-11-25")]
    # ERROR, or FAIL once BASE-HTTP-002 judges a GET with no status line as its test text says.
    assert judged[0]["verdict"] in ("ERROR", "FAIL")
    others = [c for c in report["cases"] if c is not judged[0]]
    assert len(others) == 5 * len(LEGACY_HTTP) - 1
    assert all(c["verdict"] == "SKIP" and c["blocked_by"] == judged[0]["key"] for c in others), others
    assert log.read_text(encoding="utf-8").splitlines() == ["GET 2025-11-25"], "one GET in all"


@pytest.mark.slow
def test_revisions_side_by_side_send_a_get_that_never_answers_once(tmp_path: Path) -> None:
    """With `-j 2` the revisions run at once: a revision's GET waits for the outcome of the one already
    in flight (one lock per target), so the server still receives one GET, whichever revision sent it."""
    log = tmp_path / "gets.log"
    command = server_argv("tests.servers.get_stream_mutants", "--defect", SILENT, "--http", "--log", str(log))
    path = tmp_path / f"{SILENT}.toml"
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    report = run([str(path)], select=SELECT, timeout=SILENT_TIMEOUT, jobs=2)
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1, "one GET in all"
    assert {c["check"] for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")} == {
        "base.http.legacy-get"
    }
    holders = {c["key"] for c in report["cases"] if c["verdict"] in ("ERROR", "FAIL")}
    assert all(c.get("blocked_by") in holders for c in report["cases"] if c["verdict"] == "SKIP")


def test_the_reference_resumes_its_own_stream_only() -> None:
    """The reference's per-session event store (conformance_reference/event_store.py): IDs distinct, the
    cut stream replayed, nothing of another stream; judged over the embedded default in 2025-11-25."""
    report = run(None, select=SELECT, protocol="2025-11-25")
    verdicts = {c["check"]: (c["verdict"], c["message"]) for c in report["cases"] if c["transport"] == "http"}
    assert verdicts["base.http.resume-own-stream"][0] == "PASS"
    assert "replayed the first ping's own answer" in verdicts["base.http.resume-own-stream"][1]
    assert verdicts["base.http.event-ids-unique"][0] == "PASS"
    assert verdicts["base.http.get-stream-no-response"][0] == "PASS"

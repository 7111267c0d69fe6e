"""The official-fixture suite (FIXTURE-001 to -019): the reference passes every row over stdio and
Streamable HTTP, each planted defect FAILs (or WARNs, for a row whose miss is a WARN) exactly its row, a
server without the fixture SKIPs every row "not applicable" having sent only its listings, and `coverage`
lists no fixture-only official check.

One run judges every stdio mutant (a target each, `-j 2`), one the HTTP-only mutant and the reference
over both transports: each shared by the module.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.model.targets import Target
from tests.conftest import REPO, cli, run, server_argv, stdio
from tests.servers.official_fixture_mutants import DEFECTS

LEGACY, MODERN = "2025-11-25", "2026-07-28"
P = "official-fixture."
#: Each row's check and the revisions it judges.
ROWS = {
    P + "content.simple-text": (LEGACY, MODERN),
    P + "content.image": (LEGACY, MODERN),
    P + "content.audio": (LEGACY, MODERN),
    P + "content.embedded": (LEGACY, MODERN),
    P + "content.mixed": (LEGACY, MODERN),
    P + "content.error": (LEGACY, MODERN),
    P + "content.logging": (LEGACY,),
    P + "listed.json-schema-2020-12": (LEGACY, MODERN),
    P + "listed.x-mcp-header": (MODERN,),
    P + "input.sep1034-defaults": (LEGACY,),
    P + "input.sep1330-enums": (LEGACY,),
    P + "input.mrtr-complete": (MODERN,),
    P + "input.request-state": (MODERN,),
    P + "input.multi-round": (MODERN,),
    P + "input.missing-capability": (MODERN,),
    P + "changes.tools": (MODERN,),
    P + "changes.prompts": (MODERN,),
}
#: The rows judged over Streamable HTTP only, and their revision.
HTTP_ONLY = {P + "input.missing-capability-http": MODERN, P + "listed.reconnection": LEGACY}
BOTH = (LEGACY, MODERN)


def at(check: str, verdict: str, revisions: tuple[str, ...] = BOTH) -> set[tuple[str, str, str]]:
    return {(P + check, verdict, revision) for revision in revisions}


EXPECTED: dict[str, set[tuple[str, str, str]]] = {
    "none": set(),
    "no-fixture": {(check, "SKIP", r) for check, revisions in ROWS.items() for r in revisions},
    # The fixture's prompt tells the fixture is offered: each row says which tool it lacks (a tool of
    # another name with a string x-mcp-header parameter still meets FIXTURE-009).
    "prompt-only": {
        (check, "WARN", r)
        for check, revisions in ROWS.items()
        for r in revisions
        if check != P + "listed.x-mcp-header"
    },
    "text-no-text": at("content.simple-text", "FAIL"),
    "image-no-mime-type": at("content.image", "FAIL"),
    "audio-no-data": at("content.audio", "FAIL"),
    "audio-mp3": at("content.audio", "WARN"),
    "embedded-no-resource": at("content.embedded", "FAIL"),
    "mixed-no-uri": at("content.mixed", "FAIL"),
    "error-as-protocol-error": at("content.error", "WARN"),
    "logs-twice": at("content.logging", "WARN", (LEGACY,)),
    "schema-stripped": at("listed.json-schema-2020-12", "WARN"),
    "header-integer": at("listed.x-mcp-header", "WARN", (MODERN,)),
    "defaults-missing": at("input.sep1034-defaults", "WARN", (LEGACY,)),
    "enums-no-legacy": at("input.sep1330-enums", "WARN", (LEGACY,)),
    "never-completes": at("input.mrtr-complete", "WARN", (MODERN,)),
    "no-request-state": at("input.request-state", "WARN", (MODERN,)),
    "same-request-state": at("input.multi-round", "WARN", (MODERN,)),
    "capability-ignored": at("input.missing-capability", "FAIL", (MODERN,)),
    "tools-change-unannounced": at("changes.tools", "WARN", (MODERN,)),
    "prompts-change-unannounced": at("changes.prompts", "WARN", (MODERN,)),
}
#: Mutants whose defect only HTTP shows: judged in the HTTP run.
HTTP_DEFECTS = {
    "capability-http-200": at("input.missing-capability-http", "FAIL", (MODERN,)),
    "no-reconnection": at("listed.reconnection", "WARN", (LEGACY,)),
}
ORDER = sorted(EXPECTED)


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) | set(HTTP_DEFECTS) == set(DEFECTS)


def _http(*args: str) -> Target:
    argv = tuple(server_argv("tests.servers.official_fixture_mutants", *args))
    return Target(kind="http", launch=(*argv, "--http", "--port", "0"), cwd=str(REPO))


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    targets = [stdio("tests.servers.official_fixture_mutants", "--defect", defect) for defect in ORDER]
    targets += [_http("--defect", defect) for defect in HTTP_DEFECTS]
    return run(targets, ("official-fixture",), jobs=2)


def cases_of(report: dict[str, Any], index: int) -> list[dict[str, Any]]:
    return [c for c in report["cases"] if c["target"] == index and c["check"].startswith(P + "")]


def judged(cases: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(c["check"], c["verdict"], c["revision"]) for c in cases if c["verdict"] != "PASS"}


@pytest.mark.slow
def test_each_mutant_shows_exactly_its_verdicts(report: dict[str, Any]) -> None:
    for index, defect in enumerate(ORDER):
        cases = [c for c in cases_of(report, index) if not c["check"].endswith(".connect")]
        assert {(c["check"], c["revision"]) for c in cases} == {(k, r) for k, rs in ROWS.items() for r in rs}
        assert judged(cases) == EXPECTED[defect], defect
        for case in cases:
            if case["verdict"] in ("FAIL", "WARN"):
                assert case["message"] and case["evidence"], case["key"]
    for offset, (defect, expected) in enumerate(HTTP_DEFECTS.items()):
        cases = cases_of(report, len(ORDER) + offset)
        assert judged(cases) == expected, defect


@pytest.mark.slow
def test_a_server_without_the_fixture_skips_quietly_sending_only_its_listings(
    report: dict[str, Any],
) -> None:
    cases = [c for c in cases_of(report, ORDER.index("no-fixture")) if not c["check"].endswith(".connect")]
    assert {c["skip"]["kind"] for c in cases} == {"not-applicable"}
    assert {c["message"] for c in cases} == {
        "the server does not offer the official conformance suite's fixture (tools/list names none of its "
        "tools, such as test_simple_text)"
    }
    # The first case of each revision lists the tools, and the prompts the server declares (nobody else
    # did: the run names this suite alone); that is all any case sent.
    sent = [
        json.loads(e["text"]) for c in cases for e in c["transcript"] if e["dir"] == "send" and e.get("text")
    ]
    assert {m.get("method") for m in sent} == {"tools/list", "prompts/list"}, sent


@pytest.mark.slow
def test_the_reference_passes_every_row_over_stdio_and_http() -> None:
    done = run(None, ("official-fixture",))
    cases = [c for c in done["cases"] if c["check"].startswith(P) and not c["check"].endswith(".connect")]
    assert {c["transport"] for c in cases} == {"stdio", "http"}
    rows = sum(len(revisions) for revisions in ROWS.values())
    assert len(cases) == 2 * rows + len(HTTP_ONLY)  # the HTTP-only rows once each
    assert {c["verdict"] for c in cases} == {"PASS"}, [(c["key"], c["message"]) for c in cases]


def test_every_row_names_its_official_checks_and_coverage_lists_no_fixture_only() -> None:
    table = json.loads((REPO / "conformance_packs/official_fixture/requirements.json").read_text())
    assert all(row["official"]["checks"] for row in table["requirements"])
    for revision in (LEGACY, MODERN):
        done = cli("coverage", "--revision", revision)
        assert done.returncode == 0, done.stderr
        assert "fixture-only" not in done.stdout, revision

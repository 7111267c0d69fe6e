"""The authorization-server pack against the test authorization server and its mutants.

Every mutant is `tests/servers/authority_mutants.py`'s reference with one planted defect: it must FAIL
(WARN for a SHOULD or implied row) exactly the row it breaks, in every revision that row exists in, and
the rows that needed what it broke are SKIP, blocked by that row's case; the reference PASSes every row.
The mutants run in-process (one report each, judged by several asserts); the CLI runs twice, as a user
runs it: with no --url (the embedded reference, exit 0) and against a mutant (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.context import RunOptions
from conformance.engine.issuer import IssuerTarget
from conformance.front import api
from conformance.front.cli_cases import replay_argv
from conformance.reporting import model
from tests.conftest import cli
from tests.servers.authority_mutants import DEFECTS, started

ALL = ("2025-06-18", "2025-11-25", "2026-07-28")
LATER = ("2025-11-25", "2026-07-28")
P = "authorization-server."
#: Every check, with the revisions it runs at.
CHECKS = {
    **{f"metadata.{n}": ALL for n in ("found", "content-type", "issuer", "members", "pkce")},
    "metadata.cimd": LATER,
    "registration.dynamic": ALL,
    "registration.cimd": LATER,
    **{f"code.{n}": ALL for n in ("response", "token", "no-store")},
    "errors.shape": ALL,
    "pkce.wrong-verifier": ALL,
    "resource.audience": ALL,
    "refresh.rotation": ALL,
}


def cases(verdict: str, *checks: str) -> set[tuple[str, str, str]]:
    return {(P + c, verdict, r) for c in checks for r in CHECKS[c]}


GRANT_ROWS = ("code.token", "code.no-store", "pkce.wrong-verifier", "resource.audience", "refresh.rotation")
#: defect -> {(check, verdict, revision)} of every case that is not PASS.
EXPECTED: dict[str, set[tuple[str, str, str]]] = {
    "none": set(),
    "no-metadata": cases("FAIL", "metadata.found")
    | cases("SKIP", *(c for c in CHECKS if c != "metadata.found")),
    "text-metadata": cases("FAIL", "metadata.content-type"),
    "wrong-issuer": cases("FAIL", "metadata.issuer"),
    "no-response-types": cases("FAIL", "metadata.members"),
    # MUST from 2025-11-25 on ("MCP clients MUST refuse to proceed"); 2025-06-18 only implies it: WARN.
    "no-s256": {(P + "metadata.pkce", "FAIL", r) for r in LATER}
    | {(P + "metadata.pkce", "WARN", "2025-06-18")},
    # A SHOULD: WARN; the metadata-document row has nothing advertised to judge.
    "no-cimd-flag": cases("WARN", "metadata.cimd") | cases("SKIP", "registration.cimd"),
    # The grant's client is the registered one: every row that needs it is blocked by the registration's.
    "registration-without-id": cases("FAIL", "registration.dynamic")
    | cases("SKIP", "code.response", "errors.shape", *GRANT_ROWS),
    # RFC 7591 states its 201 without a keyword: WARN, and the client is used.
    "registration-200": cases("WARN", "registration.dynamic"),
    "any-document": cases("WARN", "registration.cimd"),
    "state-dropped": cases("FAIL", "code.response") | cases("SKIP", *GRANT_ROWS),
    "no-token-type": cases("FAIL", "code.token")
    | cases("SKIP", "code.no-store", "resource.audience", "refresh.rotation"),
    "cacheable": cases("FAIL", "code.no-store"),
    # The wrong verifier's answer cannot be read either: blocked by the error shape's case.
    "text-errors": cases("FAIL", "errors.shape") | cases("SKIP", "pkce.wrong-verifier"),
    "pkce-ignored": cases("FAIL", "pkce.wrong-verifier"),
    # RFC 8707 states the audience as its purpose, with no keyword: implied, WARN.
    "issuer-audience": cases("WARN", "resource.audience"),
    "no-rotation": cases("FAIL", "refresh.rotation"),
}
#: defect -> {check whose SKIPs are blocked: the check whose case (same revision) blocks them}.
BLOCKED_BY = {
    "no-metadata": {
        P + "metadata.content-type": P + "metadata.found",
        P + "code.token": P + "metadata.found",
    },
    "registration-200": {
        P + "code.response": P + "registration.dynamic",
        P + "errors.shape": P + "registration.dynamic",
    },
    "state-dropped": {P + "code.token": P + "code.response", P + "refresh.rotation": P + "code.response"},
    "no-token-type": {P + "code.no-store": P + "code.token", P + "resource.audience": P + "code.token"},
    "text-errors": {P + "pkce.wrong-verifier": P + "errors.shape"},
}


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    """One report per defect, each against its own server."""
    out = {}
    for defect in DEFECTS:
        with started(defect) as server:
            out[defect] = api.run_issuer_report([IssuerTarget(server.issuer)], options=RunOptions(timeout=10))
    return out


def not_passed(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["check"], c["verdict"], c["revision"]) for c in report["cases"] if c["verdict"] != "PASS"}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_breaks_exactly_its_row(reports: dict[str, dict[str, Any]], defect: str) -> None:
    report = reports[defect]
    assert not_passed(report) == EXPECTED[defect], [
        (c["check"], c["revision"], c["verdict"], c["message"])
        for c in report["cases"]
        if c["verdict"] != "PASS"
    ]
    assert {(c["check"][len(P) :], c["revision"]) for c in report["cases"]} == {
        (check, r) for check, revisions in CHECKS.items() for r in revisions
    }
    for case in report["cases"]:
        blocker = BLOCKED_BY.get(defect, {}).get(case["check"][len(P) :])
        if blocker is not None:
            assert case["blocked_by"] == f"{P}{blocker}[http@{case['revision']}]", case
        if case["verdict"] in ("FAIL", "WARN"):
            assert case["evidence"], case  # what was seen, with the exchange


def test_the_reference_passes_with_evidence_of_what_it_judged(reports: dict[str, dict[str, Any]]) -> None:
    by_check = {c["check"]: c for c in reports["none"]["cases"] if c["revision"] == "2026-07-28"}
    assert "oauth-authorization-server/oauth" in by_check[P + "metadata.found"]["message"]
    assert by_check[P + "code.response"]["message"] == "client: registered (none)"
    assert reports["none"]["footer"]["exit_code"] == 0
    official = {c["check"]: c.get("official") for c in reports["none"]["cases"]}
    assert official[P + "metadata.cimd"] == ["authorization-server-metadata-cimd"]
    assert official[P + "code.token"] == ["authorization-code-grant"]


def test_live_credentials_never_reach_the_report(reports: dict[str, dict[str, Any]]) -> None:
    """A mutant's report keeps the transcripts of its FAIL: the tokens the server issued are masked."""
    text = json.dumps(reports["cacheable"])
    assert '"access_token": "ey' not in text and "refresh_token=" not in text
    assert "access_token" in text  # the member is shown, its value is not


def test_a_confidential_client_given_on_the_command_line(tmp_path: Path) -> None:
    """--client-id with --client-secret-env (client_secret_basic), against a mutant, as a user runs it:
    the mutant's row FAILs and the run exits 1; the secret is in no file written."""
    import httpx

    with started("pkce-ignored") as server:
        registered = httpx.post(
            server.issuer + "/register",
            json={
                "redirect_uris": ["http://127.0.0.1/cb"],
                "token_endpoint_auth_method": "client_secret_basic",
            },
        ).json()
        secret = registered["client_secret"]
        done = cli(
            "authorization", "--url", server.issuer, "--client-id", registered["client_id"],
            "--client-secret-env", "ASRV_TEST_SECRET", "--redirect-uri", "http://127.0.0.1/cb",
            "--report-dir", str(tmp_path), "--quiet", env={"ASRV_TEST_SECRET": secret},
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    failed = {c["check"] for c in report["cases"] if c["verdict"] == "FAIL"}
    assert failed == {P + "pkce.wrong-verifier"}
    code = next(c for c in report["cases"] if c["check"] == P + "code.response")
    assert code["message"] == "client: given (client_secret_basic)"
    assert all(secret not in p.read_text() for p in tmp_path.iterdir() if p.is_file())
    # The case is shown with the requests it sent (no MCP session opened before them) and replayed
    # by `authorization` with the run's own client, its check alone at its revision.
    key = f"{P}pkce.wrong-verifier[http@2025-11-25]"
    shown = cli("show", key, "--report", str(tmp_path)).stdout
    assert "curl" in shown and "initialize" not in shown and secret not in shown
    written = model.load(tmp_path / "report.json")
    argv = replay_argv(written, next(c for c in written.cases if c.key == key), None)
    assert argv[0] == "authorization" and argv[argv.index("--client-id") + 1] == registered["client_id"]
    assert argv[-5:] == ["-k", P + "pkce.wrong-verifier", "--protocol", "2025-11-25", "--quiet"]


def test_the_embedded_default_passes_and_exits_0(tmp_path: Path) -> None:
    done = cli("authorization", "--report-dir", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}
    assert len(report["cases"]) == sum(len(r) for r in CHECKS.values())
    assert "embedded: the test authorization server" in report["targets"][0]["spec"]


def test_an_issuer_nothing_answers_at_is_one_error_and_unreachable() -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = api.run_issuer_report([IssuerTarget(f"http://127.0.0.1:{port}/oauth")])
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [(P + "connect", "ERROR")]
    assert report["footer"]["exit_code"] == 3 and report["targets"][0]["unreachable"]


def test_the_pack_is_not_run_against_an_mcp_server() -> None:
    done = cli("run", "--suite", "authorization-server")
    assert done.returncode == 2
    assert "mcp-conformance authorization" in done.stderr


def test_coverage_shows_the_authorization_server_checks_apart() -> None:
    done = cli("coverage", "--revision", "2025-11-25")
    assert done.returncode == 0, done.stderr
    section = done.stdout[done.stdout.index("authorization-server scenarios") :]
    assert "authorization-server-metadata-cimd" in section and "ASRV-META-006" in section
    assert "authorization-code-grant" in section and "ASRV-CODE-001" in section

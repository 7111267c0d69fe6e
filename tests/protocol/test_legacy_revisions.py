"""Revisions still deployed, 2025-03-26 and 2024-11-05, judged each by its own rules.

A server that speaks only 2025-03-26 (mcp-go, much of the Go ecosystem) answers every initialize with
"2025-03-26", exactly as the lifecycle MUST requires; it must be judged in 2025-03-26 and not failed
for negotiating. `tests/servers/legacy_server.py` is such a server, in either revision, with planted
defects; an old `mcp` SDK from PyPI, in a venv of its own outside the checkout, is an independent one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

from conformance.front.cli import PROTOCOLS
from conformance.protocol.versions import transport_mismatch
from conformance.schemas import shape_errors, shape_name
from tests.conftest import REPO, cli, run, server_argv, stdio
from tests.conftest import judged_non_pass as non_pass

SKIP_UNANNOTATED = ("base.call.invalid-arguments", "SKIP")


def legacy(speaks: str, defect: str = "none") -> str:
    return stdio("tests.servers.legacy_server", "--speaks", speaks, "--defect", defect)


def probes(report: dict[str, Any]) -> dict[str, str]:
    return {p["revision"]: p["message"] for p in report["targets"][0]["probe"]}


def test_protocol_choices_and_transports() -> None:
    assert {"2025-03-26", "2024-11-05"} <= set(PROTOCOLS)
    assert transport_mismatch("2024-11-05", "http") is not None
    assert transport_mismatch("2024-11-05", "sse") is None
    assert transport_mismatch("2024-11-05", "stdio") is None
    assert transport_mismatch("2025-03-26", "http") is None


def test_shapes_follow_the_revision() -> None:
    """A member a later revision added is not judged in an earlier one; the revision's own members are."""
    tool = {"name": "a", "inputSchema": {"type": "object"}, "title": 7, "outputSchema": 5}
    listing = {"tools": [tool]}
    assert shape_errors("listToolsResult", listing, "2025-06-18")
    assert shape_errors("listToolsResult", listing, "2025-03-26") == []
    annotated = {"tools": [{"name": "a", "inputSchema": {"type": "object"}, "annotations": "ro"}]}
    assert shape_errors("listToolsResult", annotated, "2025-03-26")
    assert shape_errors("listToolsResult", annotated, "2024-11-05") == []
    assert shape_errors("listToolsResult", {"tools": [{"name": "a"}]}, "2024-11-05")  # inputSchema required
    assert shape_name("listToolsResult", "2025-11-25") == "listToolsResult"
    assert shape_name("listToolsResult", "2026-07-28") == "modern:listToolsResult"
    init = {"protocolVersion": "2024-11-05", "capabilities": {"completions": 1}, "serverInfo": {"name": "s"}}
    assert shape_errors("initializeResult", init, "2024-11-05") == [
        "/serverInfo: 'version' is a required property"
    ]


def test_a_2025_03_26_only_server_is_judged_in_2025_03_26_and_passes() -> None:
    report = run([legacy("2025-03-26")])
    assert report["targets"][0]["revisions_spoken"] == ["2025-03-26"]
    assert non_pass(report) == set()
    assert report["footer"]["exit_code"] == 0
    seen = probes(report)
    for asked in ("2025-11-25", "2025-06-18", "2024-11-05"):
        assert seen[asked].startswith(
            f"not spoken: asked for {asked}, the server counter-offered '2025-03-26'"
        )
    checks = {c["check"] for c in report["cases"]}
    # 2025-03-26 has no structured output and no tool naming rules: those checks do not judge it.
    assert not checks & {
        "base.call.structured-matches-schema",
        "base.call.text-mirror-present",
        "base.call.text-mirror-equal",
        "base.tools.output-schema-valid",
        "base.tools.name-rules",
    }
    assert {"base.lifecycle.version-negotiation", "base.call.invalid-arguments"} <= checks


def test_the_cli_exits_0_on_a_2025_03_26_only_server(tmp_path: Path) -> None:
    spec = "stdio:" + " ".join(
        [sys.executable, "-m", "tests.servers.legacy_server", "--speaks", "2025-03-26"]
    )
    done = cli("run", "--server", spec, "--suite", "base", "--quiet", "--report-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "revisions=2025-03-26" in done.stdout


def test_a_2024_11_05_only_server_is_judged_in_2024_11_05() -> None:
    """2024-11-05 has no tool annotations, so under `--call-tools safe` no tool is known to be safe."""
    report = run([legacy("2024-11-05")])
    assert report["targets"][0]["revisions_spoken"] == ["2024-11-05"]
    assert non_pass(report) == {SKIP_UNANNOTATED}
    skipped = [c for c in report["cases"] if c["verdict"] == "SKIP"]
    assert "2024-11-05 has no tool annotations" in skipped[0]["message"]
    report = run([legacy("2024-11-05")], call_tools="all")
    assert non_pass(report) == set()


MUTANTS: dict[tuple[str, str], set[tuple[str, str]]] = {
    # Asked for 1999-01-01 it echoes 1999-01-01: not "another protocol version it supports".
    ("2025-03-26", "echo-unknown"): {("base.lifecycle.version-negotiation", "FAIL")},
    ("2024-11-05", "echo-unknown"): {("base.lifecycle.version-negotiation", "FAIL")},
    # A number where the schema has a string: no revision can be opened, and that is its fault.
    ("2025-03-26", "offers-number"): {("base.connect", "FAIL")},
    # outputSchema, structuredContent and title mean nothing in 2025-03-26 (nor annotations in
    # 2024-11-05): a server that sends them, even broken, is not judged by 2025-06-18's rules.
    ("2025-03-26", "later-members"): set(),
    ("2024-11-05", "later-members"): set(),
    # 2025-03-26 defines annotations as an object; 2024-11-05 does not define them at all.
    # The tools/list answer breaks its shape: the listing's row and the every-message row.
    ("2025-03-26", "bad-annotations"): {
        ("base.tools.list-shape", "FAIL"),
        ("base.wire.message-shapes", "FAIL"),
    },
    ("2024-11-05", "bad-annotations"): set(),
    # A batch is an MCP message in 2025-03-26 only.
    ("2025-03-26", "batch-notify"): set(),
    ("2024-11-05", "batch-notify"): {("base.stdio.stdout-only-messages", "FAIL")},
    # Before 2025-11-25 no dialect is the default: a draft-07 schema is a JSON Schema there.
    ("2025-03-26", "draft7-tuple"): set(),
    ("2025-11-25", "draft7-tuple"): {("base.tools.input-schema-valid", "FAIL")},
    ("2025-11-25", "none"): set(),
    ("2025-06-18", "none"): set(),
    # "Both parties SHOULD: ... Only use capabilities that were successfully negotiated" until 2025-06-18
    # wrote MUST (basic/lifecycle, Operation): a list_changed the server never declared, and a sampling
    # request to a client that declared no sampling, are a WARN before and a FAIL from 2025-06-18.
    ("2024-11-05", "list-changed-undeclared"): {("base.cap.notifications-declared", "WARN")},
    ("2025-03-26", "list-changed-undeclared"): {("base.cap.notifications-declared", "WARN")},
    ("2025-06-18", "list-changed-undeclared"): {("base.cap.notifications-declared", "FAIL")},
    ("2025-11-25", "list-changed-undeclared"): {("base.cap.notifications-declared", "FAIL")},
    # A log message without the logging capability is the logging page's MUST in every revision: one
    # FAIL, BASE-LOG-004's, never the lifecycle's SHOULD of BASE-CAP-003 too.
    ("2024-11-05", "log-undeclared"): {("base.logging.capability-declared", "FAIL")},
    ("2025-11-25", "log-undeclared"): {("base.logging.capability-declared", "FAIL")},
    ("2024-11-05", "undeclared-sampling"): {("base.input.declared-only", "WARN")},
    ("2025-03-26", "undeclared-sampling"): {("base.input.declared-only", "WARN")},
    ("2025-06-18", "undeclared-sampling"): {("base.input.declared-only", "FAIL")},
    ("2025-11-25", "undeclared-sampling"): {("base.input.declared-only", "FAIL")},
    # -32601 for an unknown method is JSON-RPC's code table, in no MUST sentence of any revision: WARN.
    ("2024-11-05", "unknown-method-32602"): {("base.rpc.method-not-found", "WARN")},
    ("2025-11-25", "unknown-method-32602"): {("base.rpc.method-not-found", "WARN")},
    # A result for an unknown method is that row's one WARN; the error's shape has nothing to judge.
    ("2025-03-26", "unknown-method-result"): {
        ("base.rpc.method-not-found", "WARN"),
        ("base.rpc.error-shape", "SKIP"),
    },
}
#: The SHOULD-level misses above, and what `--strict` makes of them: FAIL.
STRICT_MUTANTS = [
    ("2024-11-05", "list-changed-undeclared", "base.cap.notifications-declared"),
    ("2025-03-26", "undeclared-sampling", "base.input.declared-only"),
    ("2025-03-26", "unknown-method-32602", "base.rpc.method-not-found"),
]


@pytest.mark.parametrize(("speaks", "defect"), sorted(MUTANTS))
def test_legacy_mutant_fails_exactly_its_checks(speaks: str, defect: str) -> None:
    report = run([legacy(speaks, defect)], call_tools="all")
    assert non_pass(report) == MUTANTS[speaks, defect]
    failed = any(v == "FAIL" for _, v in MUTANTS[speaks, defect])
    assert report["footer"]["exit_code"] == (1 if failed else 0)


@pytest.mark.parametrize(("speaks", "defect", "check"), STRICT_MUTANTS)
def test_strict_makes_a_revision_s_should_miss_a_fail(speaks: str, defect: str, check: str) -> None:
    report = run([legacy(speaks, defect)], call_tools="all", strict=True)
    assert non_pass(report) == {(check, "FAIL")}
    assert report["footer"]["exit_code"] == 1


def test_a_case_carries_the_level_its_revision_gives_the_row() -> None:
    """BASE-CAP-003 quotes "Both parties SHOULD" in 2025-03-26: its case says SHOULD, and the report's
    requirement text is that revision's."""
    report = run([legacy("2025-03-26", "list-changed-undeclared")], select="notifications-declared")
    (case,) = [c for c in report["cases"] if c["check"] == "base.cap.notifications-declared"]
    assert (case["verdict"], case["level"], case["revision"]) == ("WARN", "SHOULD", "2025-03-26")
    assert "tools.listChanged" in case["message"]


def _judged_revisions() -> dict[str, set[str]]:
    """The revisions each requirement row's checks judge, over every installed pack."""
    from conformance.engine.checks import load_pack
    from conformance.model import packs

    judged: dict[str, set[str]] = {}
    for name in packs.names():
        for check in load_pack(name):
            judged.setdefault(check.requirement, set()).update(check.revisions_judged())
    return judged


def test_every_revision_a_row_names_is_one_its_checks_judge() -> None:
    """A `by_revision` entry for a revision no check of the row judges (2024-11-05 on a Streamable HTTP
    row, say) is a data error, and so is one that repeats the row's own values."""
    from conformance.model.requirements import table

    judged = _judged_revisions()
    rows = [row for row in table().values() if row.by_revision]
    assert any(row.id == "BASE-CAP-003" for row in rows)
    for row in rows:
        for revision, own in row.by_revision.items():
            assert revision in judged.get(row.id, set()), f"{row.id}: no check of it judges {revision}"
            assert any(own[key] != getattr(row, key) for key in own), f"{row.id}: {revision} repeats the row"


def test_list_and_explain_show_the_level_each_revision_gives() -> None:
    done = cli("list", "--suite", "base")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    for check in ("base.cap.notifications-declared", "base.input.declared-only"):
        assert lines[check].split()[2] == "varies"
        assert "[SHOULD in 2024-11-05, 2025-03-26; MUST in 2025-06-18, 2025-11-25" in lines[check]
    assert lines["base.rpc.method-not-found"].split()[2] == "SHOULD"
    assert "[extension: fails no run unclaimed]" in lines["base.tasks.modern-removed"]
    assert "[experimental: fails no run unclaimed]" in lines["base.tasks.create-result"]
    # A Streamable HTTP check does not judge 2024-11-05, whose HTTP transport is HTTP+SSE.
    assert "2025-03-26..2025-11-25" in lines["base.http.legacy-get"]
    explained = cli("explain", "BASE-CAP-003")
    assert explained.returncode == 0, explained.stderr
    out = explained.stdout
    assert "Quote:   Both parties MUST:" in out
    for revision in ("2024-11-05", "2025-03-26"):
        section = out.split(f"In {revision}: (SHOULD)", 1)[1]
        assert section.lstrip().startswith("Quote:   Both parties SHOULD:")


def test_a_server_that_speaks_only_an_unknown_revision_is_skipped_not_failed() -> None:
    report = run([legacy("2025-03-26", "offers-unknown")])
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "SKIP")]
    assert "'2031-01-01', a revision this harness cannot judge" in report["cases"][0]["message"]
    # Not a FAIL and not unreachable, but nothing was judged: the run does not pass (exit 1).
    assert report["footer"]["exit_code"] == 1


def test_a_pinned_revision_answered_with_a_counter_offer_is_skipped_with_the_way_out() -> None:
    report = run([legacy("2025-03-26")], protocol="2025-06-18")
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "SKIP")]
    assert "run with --protocol 2025-03-26 or auto" in report["cases"][0]["message"]


def test_a_profile_is_not_judged_on_revisions_older_than_its_binding() -> None:
    """The profiles bind structured tool output (2025-06-18 on): SKIP with the reason, not FAILs."""
    report = run([legacy("2025-03-26")], ("uwmd", "dw-discovery"))
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [
        ("dw-discovery.connect", "SKIP"),
        ("uwmd.connect", "SKIP"),
    ]
    assert (
        "binds MCP 2025-06-18 and later, and the server speaks only 2025-03-26"
        in report["cases"][0]["message"]
    )


def _reference_target(tmp_path: Path, transport: str, *args: str) -> str:
    path = tmp_path / f"{transport}.toml"
    command = server_argv("conformance_reference.base_server", "--http", "--port", "0", *args)
    path.write_text(
        f'[target]\ncommand = {json.dumps(command)}\ntransport = "{transport}"\n', encoding="utf-8"
    )
    return str(path)


def test_2024_11_05_is_not_probed_over_streamable_http(tmp_path: Path) -> None:
    report = run([_reference_target(tmp_path, "http")], protocol="2024-11-05")
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "SKIP")]
    assert "not probed: 2024-11-05 defines no Streamable HTTP transport" in report["cases"][0]["message"]
    assert report["targets"][0]["unreachable"] is False
    assert report["footer"]["exit_code"] == 1, "nothing was judged, and no target was unreachable"


def test_2024_11_05_over_the_legacy_sse_transport(tmp_path: Path) -> None:
    report = run([_reference_target(tmp_path, "sse", "--sse")], protocol="2024-11-05")
    assert report["targets"][0]["revisions_spoken"] == ["2024-11-05"]
    assert non_pass(report) == set()


# --- an old `mcp` SDK from PyPI, in a venv of its own (never the project's dependencies) ---------

OLD_SDK_SERVER = REPO / "tests" / "servers" / "old_sdk_server.py"
#: What the old SDKs get wrong, whatever the revision, each a true verdict read by hand: mcp 1.x
#: answers an unknown method with -32602 (1.9) or not at all (1.1 to 1.5: the request fails the
#: session's validation and is dropped, so the probes that send one time out), ignores a line that
#: is not JSON, and reports an unknown tool as an isError result (a SHOULD). None is a revision rule.
SDK_DEFECTS = {
    "base.rpc.parse-error",
    "base.rpc.invalid-request",
    "base.rpc.method-not-found",
    "base.call.unknown-tool-protocol-error",
    "base.rpc.version-field",
    "base.rpc.result-xor-error",
    "base.rpc.error-shape",
    # 1.1.3 never answers an unknown method: the id of its error is not there to echo (SKIP, blocked by
    # the case that waited for it).
    "base.rpc.id-echo",
    "base.hygiene.no-stack-traces",
    "base.resources.templates-shape",
    # Seen on these SDKs in this run, not yet read by hand: the ping written right after initialize
    # is refused (1.x refused requests before notifications/initialized), an unknown notification is
    # answered (1.1.3), and a cursor never given is not refused with -32602 (a SHOULD).
    "base.lifecycle.ping-during-initialize",
    "base.notif.no-response",
    "base.page.invalid-cursor",
    # Resource-not-found in another code than the -32002 the legacy revisions ask for (a SHOULD).
    "base.resources.unknown-code-legacy",
    # A notifications/cancelled it cannot parse (no requestId) is not simply ignored (a SHOULD).
    "base.cancel.invalid-ignored",
    # mcp 1.9 (FastMCP) answers prompts/get of an unknown prompt with error code 0, not -32602 (read by
    # hand: "drew error code 0"; the Error Handling section's SHOULD, so WARN).
    "base.prompts.unknown-name",
}
#: The checks whose verdicts depend on the revision: each must PASS (or SKIP saying why) on an old SDK.
REVISION_CHECKS = {
    "base.lifecycle.initialize-shape",
    "base.lifecycle.version-negotiation",
    "base.tools.list-shape",
    "base.tools.input-schema-valid",
    "base.resources.list-shape",
    "base.resources.read-shape",
    "base.stdio.stdout-only-messages",
}


def _old_sdk(tmp_path_factory: pytest.TempPathFactory, requirement: str) -> Path:
    """A venv outside the checkout with `requirement` installed; skip, saying why, when it cannot be made."""
    if os.environ.get("MCP_CONFORMANCE_NO_OLD_SDK"):
        pytest.skip("MCP_CONFORMANCE_NO_OLD_SDK is set")
    where = tmp_path_factory.mktemp("old-sdk") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    python = where / "bin" / "python"
    try:
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", requirement, "pydantic<2.12"],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip install {requirement} did not finish within 600 s")
    if done.returncode != 0:
        pytest.skip(f"cannot install {requirement} into a separate venv: {done.stderr.strip()[-300:]}")
    return python


@pytest.mark.slow
@pytest.mark.parametrize(
    ("requirement", "spoken"),
    [("mcp==1.9.4", ["2025-03-26", "2024-11-05"]), ("mcp==1.1.3", ["2024-11-05"])],
)
def test_an_old_sdk_is_judged_in_the_revisions_it_speaks(
    requirement: str, spoken: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    python = _old_sdk(tmp_path_factory, requirement)
    report = run([f"stdio:{python} {OLD_SDK_SERVER}"], timeout=10.0)
    target = report["targets"][0]
    assert target["revisions_spoken"] == spoken
    assert target["server_info"]["name"].startswith("old-sdk")
    cases = {(c["check"], c["revision"]): c for c in report["cases"]}
    for revision in spoken:
        for check in REVISION_CHECKS:
            assert cases[check, revision]["verdict"] == "PASS", cases[check, revision]["message"]
    stray = non_pass(report)
    assert {check for check, _ in stray} <= SDK_DEFECTS | {SKIP_UNANNOTATED[0]}, stray
    if requirement.startswith("mcp==1.9"):
        # Its only MUST-level misses are the SDK's own (listed with reasons): with them as the
        # baseline of expected failures, the gate passes.
        blocking = {check for check, v in stray if v in ("FAIL", "ERROR")}
        assert blocking <= set(SDK_BASELINE), blocking
        baseline = tmp_path_factory.mktemp("baseline") / "baseline.json"
        entries = [{"case": check, "reason": SDK_BASELINE[check]} for check in sorted(blocking)]
        baseline.write_text(
            json.dumps(
                {"format": "mcp-conformance-baseline", "format_version": 1, "expected_failures": entries}
            )
        )
        spec = f"stdio:{python} {OLD_SDK_SERVER}"
        out = tmp_path_factory.mktemp("report")
        done = cli("run", "--server", spec, "--baseline", str(baseline), "--quiet", "--report-dir", str(out))
        assert done.returncode == 0, done.stdout + done.stderr


#: mcp 1.9's MUST-level misses, none of them about a revision (its -32602 for an unknown method is a
#: WARN: JSON-RPC's code table, in no MUST sentence).
SDK_BASELINE = {
    "base.rpc.parse-error": "mcp 1.x ignores a line that is not JSON on stdio",
    "base.rpc.invalid-request": "mcp 1.x ignores a request whose method is not a string on stdio",
    "base.lifecycle.ping-during-initialize": "mcp 1.9 refuses the ping written right after initialize",
}

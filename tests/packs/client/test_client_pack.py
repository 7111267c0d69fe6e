"""The client pack: the reference client passes every row over every transport it is played at; each
mutant (tests/servers/client_mutants.py: the reference with one planted defect) fails exactly its row
(WARN for a SHOULD row, ERROR for the contract row), the rest of its run PASS or SKIP; a client that
never connects is one ERROR with the scenario's other rows SKIP blocked by it.

Every run is judged in process (`conformance.clients.run`), in one event loop shared by the module.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.clients import run
from conformance.engine.checks import load_pack
from conformance.engine.events import CaseFinished, Event, Fanout
from tests.conftest import cli
from tests.packs.client.results_sent import invalid_results, results_sent
from tests.servers.client_mutants import MUTANTS

STATEFUL, STATELESS = "2025-11-25", "2026-07-28"
#: defect -> (scenarios, transports, revisions) its run plays: where its row is judged.
PLAYED: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "exits-one": (("tools_call",), ("http", "stdio"), (STATEFUL,)),
    "hangs": (("tools_call",), ("stdio",), (STATEFUL,)),
    "no-client-version": (("initialize",), ("http", "sse", "stdio"), ("2024-11-05", STATEFUL)),
    "unknown-version": (("initialize",), ("http", "stdio"), ("2024-11-05", STATEFUL)),
    # auth/scope-retry-limit: a non-zero exit is its expected end, not for a client that never ran it
    "legacy-only": (
        (
            "request-metadata",
            "http-standard-headers",
            "sep-2322-client-request-state",
            "auth/scope-retry-limit",
        ),
        ("http", "stdio"),
        (STATELESS,),
    ),
    "no-initialized": (("initialize",), ("http", "sse", "stdio"), ("2024-11-05", STATEFUL)),
    "no-version-header": (("initialize",), ("http",), (STATEFUL,)),
    "keeps-offer": (("initialize",), ("http",), ("2025-06-18",)),
    "latest-only": (("initialize", "tools_call"), ("sse", "stdio"), ("2024-11-05", STATEFUL)),
    # no defect: offers 2025-11-25, goes on with the answered 2025-06-18 (a GET's header judged too)
    "offers-latest": (("initialize", "x-get-resume"), ("http",), ("2025-06-18",)),
    "encodes-empty": (("http-custom-headers",), ("http",), (STATELESS,)),
    "refuses-no-result-type": (("sep-2322-client-request-state",), ("http", "stdio"), (STATELESS,)),
    "no-session-id": (("initialize",), ("http",), (STATEFUL,)),
    "arguments-list": (("tools_call",), ("http", "sse", "stdio"), ("2024-11-05", STATEFUL, STATELESS)),
    "no-defaults": (("elicitation-sep1034-client-defaults",), ("http", "stdio"), (STATEFUL,)),
    "bad-action": (("elicitation-sep1034-client-defaults",), ("http", "stdio"), (STATEFUL,)),
    "elicit-error": (("elicitation-sep1034-client-defaults",), ("http", "stdio"), (STATEFUL,)),
    "no-reconnect": (("sse-retry",), ("http",), (STATEFUL,)),
    "early-retry": (("sse-retry",), ("http",), (STATEFUL,)),
    "no-last-event-id": (("sse-retry",), ("http",), (STATEFUL,)),
    "no-version-header-modern": (("request-metadata",), ("http",), (STATELESS,)),
    "no-capabilities-meta": (("request-metadata",), ("http", "stdio"), (STATELESS,)),
    "no-client-info-meta": (("request-metadata",), ("http", "stdio"), (STATELESS,)),
    "mismatched-header": (("request-metadata",), ("http",), (STATELESS,)),
    "wrong-retry": (("request-metadata",), ("http", "stdio"), (STATELESS,)),
    "no-retry": (("request-metadata",), ("http", "stdio"), (STATELESS,)),
    "no-method-header": (("http-standard-headers",), ("http",), (STATELESS,)),
    "no-name-header": (("http-standard-headers",), ("http",), (STATELESS,)),
    **{
        defect: (("sep-2322-client-request-state",), ("http", "stdio"), (STATELESS,))
        for defect in ("altered-state", "same-id", "invented-state", "leaky-state", "retry-no-result-type")
    },
    **{
        defect: (("http-custom-headers",), ("http",), (STATELESS,))
        for defect in (
            "no-param-headers",
            "mirrors-everything",
            "boolean-as-number",
            "bare-base64",
            "null-as-text",
        )
    },
    "keeps-invalid-tools": (("http-invalid-tool-headers",), ("http",), (STATELESS,)),
    "dereferences": (("json-schema-ref-no-deref",), ("http",), (STATELESS,)),
    "strips-keywords": (("json-schema-2020-12-preservation",), ("http", "stdio"), (STATEFUL, STATELESS)),
}
SHOULD_ROWS = {"CLIENT-LIFE-002", "CLIENT-ELICIT-001", "CLIENT-SSE-001", "CLIENT-SSE-003", "CLIENT-META-003"}
SHOULD_ROWS |= {"CLIENT-META-005", "CLIENT-SCHEMA-002"}
#: Mutants whose defect breaks no MUST of a MUST row: WARN (an error answer to a form is allowed by the text).
SOFT = {"elicit-error"}
REFERENCE = shlex.join([sys.executable, "-m", "conformance_reference.client"])


class Collect:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, CaseFinished):
            self.cases.append(event.result.as_dict())


async def _judge(options: run.ClientOptions) -> list[dict[str, Any]]:
    sink = Collect()
    await run.run_jobs(run.plan(["client"], options), options, Fanout([sink]))
    return sink.cases


async def _all() -> dict[str, list[dict[str, Any]]]:
    gate = asyncio.Semaphore(3)

    async def one(name: str, options: run.ClientOptions) -> tuple[str, list[dict[str, Any]]]:
        async with gate:
            return name, await _judge(options)

    # 2025-03-26 besides the default revisions: the OAuth back-compat scenarios are played there only.
    revisions = (*run.DEFAULT_REVISIONS, "2025-03-26")
    # transcripts kept: every result the scenario servers sent is judged against its revision's shape
    reference = run.ClientOptions(command=REFERENCE, revisions=revisions, jobs=2, keep_transcripts=True)
    jobs = [one("reference", reference)]
    jobs.append(
        one(
            "silent",
            run.ClientOptions(
                command="exit 0", scenarios=("tools_call",), transports=("http",), revisions=(STATEFUL,)
            ),
        )
    )
    for defect, (scenarios, transports, revisions) in PLAYED.items():
        limit = 8 if defect == "hangs" else 15
        command = shlex.join([sys.executable, "-m", "tests.servers.client_mutants", defect])
        jobs.append(
            # "hangs" is killed past its act, short of the test's patience
            one(defect, run.ClientOptions(command, scenarios, transports, revisions, jobs=2, timeout=limit))
        )
    return dict(await asyncio.gather(*jobs))


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict[str, Any]]]:
    load_pack("client")
    return asyncio.run(_all())


def test_reference_passes_every_row(runs: dict[str, list[dict[str, Any]]]) -> None:
    cases = runs["reference"]
    assert cases and all(c["verdict"] == "PASS" for c in cases), [
        (c["key"], c["verdict"], c["message"]) for c in cases if c["verdict"] != "PASS"
    ]
    from conformance.model.requirements import table

    rows = {r for r in table() if r.startswith("CLIENT-")}
    assert rows == {c["requirement"] for c in cases}
    assert {c["transport"] for c in cases} == {"http", "sse", "stdio"}


def test_every_result_the_scenario_servers_send_fits_its_revision(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    """A 2026-07-28 listing without ttlMs/cacheScope made strict SDK clients refuse every scenario."""
    cases = runs["reference"]
    sent = [
        m for c in cases if c["requirement"] == "CLIENT-RUN-001" for m, _ in results_sent(c["transcript"])
    ]
    # (the reference client never sends server/discover: its shape is checked by the unit test below)
    assert {"tools/list", "prompts/list", "resources/list", "resources/read", "initialize"} <= set(sent)
    assert not invalid_results(cases)


def test_server_discover_fits_2026_07_28() -> None:
    """The base scenario's server/discover (no reference client sends it), answered as a client's
    request would be, is a valid DiscoverResult: cacheable, as the schema requires."""
    from conformance.clients.scenario import ScenarioSession
    from conformance.clients.wire import Arrival, Message, Recording
    from conformance.schemas import shape_errors
    from conformance_packs.client.scenarios import ToolsCall

    request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    arrival = Arrival(0.0, "POST", "/mcp", {}, (), json.dumps(request).encode())
    session = ScenarioSession(ToolsCall(STATELESS, "http", Recording()))
    reply, _ = asyncio.run(session.reply_to(Message(request, arrival), None))  # type: ignore[arg-type]
    assert reply is not None and not shape_errors("discoverResult", reply["result"], STATELESS)


@pytest.mark.parametrize(
    ("variant", "judged"),
    [
        # the headers after initialize name the version the server answered (the scenario's), not
        # the client's offer: CLIENT-GET-003 once wanted the offer and failed a right client
        ("offers-latest", {"CLIENT-LIFE-004", "CLIENT-GET-003"}),
        # an empty value sent Base64-encoded decodes to the body's: CLIENT-HDR-003 once failed it
        ("encodes-empty", {"CLIENT-HDR-003"}),
        # refusing a 2026-07-28 result without resultType (and exiting 1) is right: the contract case
        # once was an ERROR for it
        ("refuses-no-result-type", {"CLIENT-RUN-001", "CLIENT-MRTR-005"}),
    ],
)
def test_a_variant_without_defect_passes(
    runs: dict[str, list[dict[str, Any]]], variant: str, judged: set[str]
) -> None:
    cases = runs[variant]
    rows = {c["requirement"] for c in cases if c["verdict"] == "PASS"}
    assert judged <= rows
    assert all(c["verdict"] in ("PASS", "SKIP") for c in cases), [
        (c["key"], c["verdict"], c["message"]) for c in cases if c["verdict"] not in ("PASS", "SKIP")
    ]


@pytest.mark.parametrize("defect", sorted(MUTANTS))
def test_mutant_fails_exactly_its_row(runs: dict[str, list[dict[str, Any]]], defect: str) -> None:
    row = MUTANTS[defect][1]
    wanted = (
        "ERROR" if row == "CLIENT-RUN-001" else "WARN" if row in SHOULD_ROWS or defect in SOFT else "FAIL"
    )
    cases = runs[defect]
    hit = [c for c in cases if c["requirement"] == row and c["verdict"] == wanted]
    assert hit, [(c["key"], c["verdict"], c["message"]) for c in cases]
    others = [c for c in cases if c["requirement"] != row and c["verdict"] not in ("PASS", "SKIP")]
    assert not others, [(c["key"], c["verdict"], c["message"]) for c in others]


def test_a_client_that_does_not_speak_2026_07_28_is_one_error_per_scenario(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    """One defect, one verdict: the contract case's ERROR; the 2026-07-28 rows SKIP blocked by it."""
    cases = runs["legacy-only"]
    errors = {c["key"] for c in cases if c["verdict"] == "ERROR"}
    assert errors and all(c["requirement"] == "CLIENT-RUN-001" for c in cases if c["key"] in errors)
    rest = [c for c in cases if c["key"] not in errors]
    assert rest and all(c["verdict"] in ("PASS", "SKIP") for c in rest), [
        (c["key"], c["verdict"], c["message"]) for c in rest if c["verdict"] not in ("PASS", "SKIP")
    ]
    modern = [c for c in rest if c["requirement"].startswith(("CLIENT-META-", "CLIENT-HDR-", "CLIENT-MRTR-"))]
    assert modern and all(c["verdict"] == "SKIP" and c["blocked_by"] in errors for c in modern)


def test_a_scenario_answers_its_own_revision_and_a_client_that_declines_it_is_one_error(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    """The scenario's server supports only the revision it plays, so it answers an offer of another
    with that one (it once echoed the offer, playing another revision than it judged). A client that
    then disconnects, as it SHOULD when it does not support the answer, is one ERROR per scenario run
    saying so; at 2025-11-25, which it supports, it passes."""
    cases = runs["latest-only"]
    errors = [c for c in cases if c["verdict"] == "ERROR"]
    assert {(c["requirement"], c["revision"]) for c in errors} == {("CLIENT-RUN-001", "2024-11-05")}
    assert len(errors) == 4 and all("SHOULD disconnect" in c["message"] for c in errors)
    assert all(c["verdict"] == "PASS" for c in cases if c["revision"] == STATEFUL)


@pytest.mark.parametrize("offered", ["2025-11-25", "2024-11-05", "draft"])
def test_initialize_is_answered_with_the_scenarios_revision(offered: str) -> None:
    """If the server supports the requested version it MUST respond with the same version, otherwise
    with another it supports: the scenario's server supports only the revision it plays."""
    from conformance.clients.scenario import ScenarioSession
    from conformance.clients.wire import Arrival, Message, Recording
    from conformance_packs.client.scenarios import ToolsCall

    params = {"protocolVersion": offered, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    arrival = Arrival(0.0, "POST", "/mcp", {}, (), json.dumps(request).encode())
    session = ScenarioSession(ToolsCall("2025-03-26", "http", Recording()))
    reply, _ = asyncio.run(session.reply_to(Message(request, arrival), None))  # type: ignore[arg-type]
    assert reply is not None and reply["result"]["protocolVersion"] == "2025-03-26"
    assert session.recording.facts["protocol_version"] == "2025-03-26"


def test_a_client_that_hangs_is_killed_and_one_error(runs: dict[str, list[dict[str, Any]]]) -> None:
    errors = [c for c in runs["hangs"] if c["verdict"] == "ERROR"]
    assert len(errors) == 1 and "did not exit within 8 s and was killed" in errors[0]["message"]


def test_a_client_that_never_connects_is_one_error(runs: dict[str, list[dict[str, Any]]]) -> None:
    cases = runs["silent"]
    errors = [c for c in cases if c["verdict"] == "ERROR"]
    assert [c["requirement"] for c in errors] == ["CLIENT-RUN-001"]
    assert "never reached the scenario server" in errors[0]["message"]
    rest = [c for c in cases if c is not errors[0]]
    assert rest and all(c["verdict"] == "SKIP" and c["blocked_by"] == errors[0]["key"] for c in rest)


def test_the_cli_judges_the_client_a_target_file_names(tmp_path: Path) -> None:
    """`client --target FILE` reads [client-under-test] (the command, what to play, its env), writes
    the report and its views, exits 0; `--help` names the contract."""
    target = tmp_path / "client.toml"
    target.write_text(
        f'[client-under-test]\ncommand = {json.dumps(REFERENCE)}\nscenarios = ["initialize"]\n'
        'transports = ["stdio"]\nrevisions = ["2025-11-25"]\n[client-under-test.env]\nUNUSED = "1"\n'
    )
    done = cli("client", "--target", str(target), "--report-dir", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    load_pack("client")
    played = run.ClientOptions(REFERENCE, ("initialize",), ("stdio",), ("2025-11-25",))
    judged = sum(len(job.checks) for job in run.plan(["client"], played))
    assert {c["verdict"] for c in report["cases"]} == {"PASS"} and len(report["cases"]) == judged
    assert (tmp_path / "out" / "report.html").exists()
    helped = cli("client", "--help").stdout
    assert (
        "MCP_CONFORMANCE_SCENARIO" in helped and "stdio:" in helped and "MCP_CONFORMANCE_TRANSPORT" in helped
    )


def test_coverage_of_the_client_side_maps_every_official_client_check() -> None:
    """`coverage --side client`: each scored official client check mapped to rows, or not judged with
    its reason; the OAuth checks mapped, the extensions' (DPoP, enterprise-managed, workload identity) too:
    nothing is left not yet judged."""
    lines = cli("coverage", "--side", "client", "--revision", "2026-07-28").stdout.splitlines()
    assert "client set of 2026-07-28" in lines[0]
    assert any("sep-2322-client-request-state-echoed" in line and "CLIENT-MRTR-001" in line for line in lines)
    assert any("pkce-code-challenge-sent" in line and "CLIENT-AUTH-008" in line for line in lines)
    assert any("complete-flow-token-exchange" in line and "CLIENT-EMA-001" in line for line in lines)
    assert any("wif-no-retry" in line and "CLIENT-WIF-005" in line for line in lines)
    assert not any("not-yet-judged" in line for line in lines)
    # the DPoP extension: both scenarios listed, each sep-1932 check judged by a CLIENT-DPOP row
    dpop = [line for line in lines if "sep-1932-client-" in line]
    assert len(dpop) == 8 and all("CLIENT-DPOP-00" in line for line in dpop), dpop
    headers = [i for i, line in enumerate(lines) if line.startswith(("auth/dpop  ", "auth/dpop-nonce  "))]
    assert len(headers) == 2 and not any("not listed yet" in lines[i + 1] for i in headers)
    assert lines[-1].startswith("2026-07-28: ") and "official client checks" in lines[-1]


def test_a_scenario_waits_on_the_recording_not_on_a_clock() -> None:
    """`Recording.until` wakes at the arrival that makes its condition hold (recorded after it began
    to wait, by another task of the loop), not at an arrival that does not, and gives up at its bound
    when none does."""
    from conformance.clients.wire import Recording

    async def scene() -> tuple[bool, bool, bool, int]:
        recording = Recording()
        cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        waiting = asyncio.get_running_loop().create_task(
            recording.until(lambda: bool(recording.requests("notifications/cancelled")), timeout=600.0)
        )
        await asyncio.sleep(0)  # one turn of the loop: `until` has tested its condition and waits
        recording.arrived("POST", "/mcp", [], b'{"jsonrpc":"2.0","method":"notifications/progress"}')
        for _ in range(3):
            await asyncio.sleep(0)
        early = waiting.done()
        recording.arrived("POST", "/mcp", [], json.dumps(cancelled).encode())
        # the bound only guards a regression: woken by the arrival, `until` returns at once, long
        # before its own 600 s; not woken, it would outlive the guard's 60 s and fail here
        woke = await asyncio.wait_for(waiting, 60.0)
        gave_up = not await Recording().until(lambda: False, timeout=0.05)
        return early, woke, gave_up, len(recording.arrivals)

    assert asyncio.run(scene()) == (False, True, True, 2)

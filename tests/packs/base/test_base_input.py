"""The input checks (BASE-INPUT-*): the harness as a client that declares input, and the mutants.

Each mutant of `tests/servers/base_input_mutants.py` plants one defect in the reference server's input
tool; the base suite, pinned to the revision the defect shows in, must show exactly the expected
non-PASS verdicts. The client side (what is declared, what each ask is answered with) is tested
directly, without a server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.protocol import jsonrpc
from conformance.protocol.client_input import (
    DEFAULT_FEATURES,
    ClientInput,
    capabilities_for,
    parse_features,
    undeclared,
)
from tests.conftest import non_pass, run, server_argv, stdio
from tests.servers.base_input_mutants import DEFECTS

LEGACY, MODERN = "2025-11-25", "2026-07-28"
#: The reference's explained SKIPs in each revision (no tool-enabled sampling, no URL elicitation).
SKIPS = {
    LEGACY: {("base.input.sampling-tool-results", "SKIP"), ("base.input.url-elicitation-error", "SKIP")},
    MODERN: {("base.input.sampling-tool-results", "SKIP")},
}
#: The one sampling ask was undeclared (refused), so no declared one is left to judge.
NO_SAMPLING_JUDGED = {("base.input.sampling-shape", "SKIP"), ("base.input.sampling-include-context", "SKIP")}
#: defect -> {revision: the non-PASS verdicts beyond the reference's SKIPs}.
EXPECTED: dict[str, dict[str, set[tuple[str, str]]]] = {
    "none": {LEGACY: set(), MODERN: set()},
    "ask-undeclared": {
        LEGACY: {("base.input.declared-only", "FAIL")},
        MODERN: {("base.input.mrtr-declared", "FAIL")},
    },
    # A mode the client did not declare breaks the mode rule; in 2026-07-28 the inputRequests rule too.
    "url-undeclared": {
        LEGACY: {("base.input.elicitation-modes", "FAIL"), ("base.input.elicitation-shape", "SKIP")},
        # The greeting prompt's form elicitation is left to judge in 2026-07-28.
        MODERN: {("base.input.elicitation-modes", "FAIL"), ("base.input.mrtr-declared", "FAIL")},
    },
    "sampling-tools": {
        LEGACY: {("base.input.sampling-tools", "FAIL")} | NO_SAMPLING_JUDGED,
        MODERN: {("base.input.sampling-tools", "FAIL"), ("base.input.mrtr-declared", "FAIL")}
        | NO_SAMPLING_JUDGED,
    },
    # A SHOULD NOT: WARN.
    "include-context": {
        LEGACY: {("base.input.sampling-include-context", "WARN")},
        MODERN: {("base.input.sampling-include-context", "WARN")},
    },
    # The mixed message is judged, so the SKIP of the reference becomes a FAIL.
    "tool-result-mixed": {
        LEGACY: {("base.input.sampling-tool-results", "FAIL"), ("base.input.url-elicitation-error", "SKIP")},
        MODERN: {("base.input.sampling-tool-results", "FAIL")},
    },
    "elicitation-no-schema": {
        LEGACY: {("base.input.elicitation-shape", "FAIL")},
        MODERN: {("base.input.elicitation-shape", "FAIL"), ("base.input.mrtr-request-kinds", "FAIL")},
    },
    "sampling-bad-role": {
        LEGACY: {("base.input.sampling-shape", "FAIL")},
        MODERN: {("base.input.sampling-shape", "FAIL"), ("base.input.mrtr-request-kinds", "FAIL")},
    },
    "mrtr-bad-kind": {MODERN: {("base.input.mrtr-request-kinds", "FAIL")}},
    # The tool's answer has nothing to fulfil or echo, so no retry of it follows; the retry checks judge
    # the greeting prompt's (it asks for a form only: no sampling to judge).
    "mrtr-empty": {MODERN: {("base.input.mrtr-shape", "FAIL")} | NO_SAMPLING_JUDGED},
    # Both retries (input missing, input given with one unasked key) are refused: two SHOULDs, WARN.
    "retry-error": {
        MODERN: {("base.input.mrtr-missing-input", "WARN"), ("base.input.mrtr-extra-responses", "WARN")}
    },
    "url-error-form": {LEGACY: {("base.input.url-elicitation-error", "FAIL")}},
    # Over stdio a request unrelated to the call shares the one stream: the reference's verdicts.
    "asks-unrelated": {LEGACY: set()},
    # The stdio row of the same 2026-07-28 rule sees the request on stdout too (BASE-STDIO-012).
    "modern-request": {
        MODERN: {("base.input.no-server-requests", "FAIL"), ("base.stdio.no-server-requests", "FAIL")}
    },
    # resources/templates/list answered input_required: its own shape check fails too, no template is
    # left to parse, the answer names no server in its _meta (SHOULD), and a cursor it never gave is
    # answered input_required rather than -32602 (SHOULD).
    "mrtr-on-list": {
        MODERN: {
            ("base.input.mrtr-methods", "FAIL"),
            ("base.resources.templates-shape", "FAIL"),
            ("base.resources.template-syntax", "SKIP"),
            ("base.wire.server-info-meta", "WARN"),
            ("base.page.invalid-cursor", "WARN"),
        }
    },
    "task-refused": {LEGACY: {("base.tasks.undeclared-augmentation", "FAIL")}},
    # Two SHOULDs of the error handling (WARN), and a MUST whose condition the harness cannot see (a WARN
    # on weak evidence).
    "invalid-answers-taken": {MODERN: {("base.input.mrtr-invalid-responses", "WARN")}},
    "null-answers-taken": {MODERN: {("base.input.mrtr-null-responses", "WARN")}},
    "state-unchecked": {MODERN: {("base.input.mrtr-tampered-state", "WARN")}},
    # No keyword makes a prompt complete once given its input: WARN.
    "prompt-asks-forever": {MODERN: {("base.input.mrtr-prompt-complete", "WARN")}},
}
CASES = [(defect, revision) for defect, by_revision in EXPECTED.items() for revision in by_revision]


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)


@pytest.mark.slow
@pytest.mark.parametrize(("defect", "revision"), CASES, ids=[f"{d}@{r}" for d, r in CASES])
def test_mutant_shows_exactly_its_verdicts(defect: str, revision: str) -> None:
    report = run([stdio("tests.servers.base_input_mutants", "--defect", defect)], protocol=revision)
    planted = EXPECTED[defect][revision]
    changed = {check for check, _ in planted}
    assert non_pass(report, input_skips=True) == planted | {
        (c, v) for c, v in SKIPS[revision] if c not in changed
    }
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert all(c["message"] for c in failed), "a FAIL says why"


@pytest.mark.slow
def test_a_request_unrelated_to_the_call_is_answered_on_the_get_stream(tmp_path: Path) -> None:
    """Over Streamable HTTP a server's request with no related request goes on the GET stream: the input
    sweep holds one open and answers there, so the call is answered and its asks judged, instead of the
    call waiting out the timeout on an ask nobody could see."""
    path = tmp_path / "target.toml"
    command = server_argv(
        "tests.servers.base_input_mutants", "--defect", "asks-unrelated", "--http", "--port", "0"
    )
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    report = run(
        [str(path)],
        protocol=LEGACY,
        select="input.declared-only,input.sampling-shape,input.elicitation-shape",
    )
    verdicts = {c["check"]: c for c in report["cases"]}
    assert {c: v["verdict"] for c, v in verdicts.items()} == {
        "base.input.declared-only": "PASS",
        "base.input.sampling-shape": "PASS",
        "base.input.elicitation-shape": "PASS",
    }, [v["message"] for v in verdicts.values()]
    assert "3 ask(s) seen" in verdicts["base.input.declared-only"]["message"]


def _target(tmp_path: Path, client: str) -> str:
    path = tmp_path / "target.toml"
    command = server_argv("tests.servers.base_input_mutants", "--defect", "url-undeclared")
    path.write_text(f"[target]\ncommand = {json.dumps(command)}\n\n{client}", encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_declared_capabilities_come_from_the_option_then_the_target_file(tmp_path: Path) -> None:
    """The run decides what the client declares: a client that declares URL mode sees no undeclared
    mode (SKIP, said so), one that declares no elicitation has none to judge."""
    target = _target(
        tmp_path, '[client]\ncapabilities = ["sampling", "elicitation.form", "elicitation.url"]\n'
    )
    report = run([target], protocol=LEGACY, select="base.input.")
    modes = [c for c in report["cases"] if c["check"] == "base.input.elicitation-modes"]
    assert [c["verdict"] for c in modes] == ["SKIP"] and "both elicitation modes" in modes[0]["message"]
    report = run(
        [target], protocol=LEGACY, select="base.input.", pack_options={"client_capabilities": frozenset()}
    )
    modes = [c for c in report["cases"] if c["check"] == "base.input.elicitation-modes"]
    assert [c["verdict"] for c in modes] == ["SKIP"] and "no elicitation" in modes[0]["message"]


def test_a_client_declares_only_what_each_revision_has() -> None:
    everything = parse_features("all")
    assert capabilities_for(everything, "2024-11-05") == {"sampling": {}, "roots": {"listChanged": True}}
    assert capabilities_for(everything, "2025-06-18")["elicitation"] == {}
    assert capabilities_for(everything, "2025-11-25") == {
        "sampling": {"tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }
    assert capabilities_for(DEFAULT_FEATURES, "2025-11-25")["elicitation"] == {"form": {}}
    assert parse_features("none") == frozenset()
    with pytest.raises(ValueError, match="unknown client capability 'smapling'"):
        parse_features("smapling")


def test_undeclared_asks_are_refused_with_the_code_the_spec_names() -> None:
    caps = {"elicitation": {}, "sampling": {}}
    assert undeclared("roots/list", None, caps) == (
        "roots/list, but the client did not declare roots",
        jsonrpc.METHOD_NOT_FOUND,
    )
    # An empty elicitation capability is form mode only; a URL-mode request is invalid params.
    problem = undeclared("elicitation/create", {"mode": "url"}, caps)
    assert problem is not None and problem[1] == jsonrpc.INVALID_PARAMS
    assert undeclared("elicitation/create", {"message": "hi"}, caps) is None
    assert undeclared("sampling/createMessage", {"tools": []}, caps) is not None
    assert undeclared("ping", None, {}) is None


def test_a_declared_ask_gets_its_canned_answer_and_every_ask_is_recorded() -> None:
    client = ClientInput({"roots": {}}, {"roots/list": {"roots": [{"uri": "file:///project"}]}})
    asked = jsonrpc.classify(b'{"jsonrpc":"2.0","id":7,"method":"roots/list"}')
    assert json.loads(client.answer_frame(asked)) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"roots": [{"uri": "file:///project"}]},
    }
    refused = jsonrpc.classify(b'{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}')
    assert json.loads(client.answer_frame(refused))["error"]["code"] == jsonrpc.METHOD_NOT_FOUND
    assert [(a.method, bool(a.problem)) for a in client.asks] == [
        ("roots/list", False),
        ("sampling/createMessage", True),
    ]
    modern = ClientInput({"roots": {}}, modern=True)
    assert json.loads(modern.answer_frame(asked))["error"]["code"] == jsonrpc.METHOD_NOT_FOUND
    responses = modern.fulfil({"r": {"method": "roots/list"}, "e": {"method": "elicitation/create"}})
    assert responses == {"r": {"roots": []}}
    assert [bool(a.problem) for a in modern.asks[1:]] == [False, True]

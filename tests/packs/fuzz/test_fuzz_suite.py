"""The fuzz suite against live servers: the references pass, each planted input-handling defect is found
within the default example budget as exactly the (check, verdict) pairs it breaks, a finding's replay
command reproduces exactly that case, and the options (seed, examples, budget, call policy) hold.

Every run uses the default example budget and a fresh random seed unless a test is about the seed, so
a pass here says the defects are found by any seed, not by a tuned one.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY, REPO, budget, cli, non_pass, run, stdio
from tests.servers.fuzz_mutants import DEFECTS

FUZZ = ("fuzz",)
CHECKS = {
    "fuzz.valid.answered",
    "fuzz.valid.no-internal-error",
    "fuzz.invalid.answered",
    "fuzz.invalid.rejected",
    "fuzz.hygiene.no-stack-traces",
}
#: Raw JSON-lines servers answer in milliseconds: five seconds is ample however busy the machine (no
#: answer is lost to load and taken for a hang), and the one planted hang (large-integer) waits it once.
TIMEOUT = 5.0
#: One revision keeps each run short: input handling does not depend on it, and the checks run once anyway.
REVISION = "2025-11-25"

EXPECTED: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "empty-string": {("fuzz.valid.answered", "FAIL")},
    "deep-object": {("fuzz.valid.no-internal-error", "WARN")},
    "large-integer": {("fuzz.valid.answered", "FAIL")},
    "dies-after-answer": {("fuzz.valid.answered", "FAIL")},
    "wrong-type-trace": {("fuzz.hygiene.no-stack-traces", "WARN")},
    "enum-accepted": {("fuzz.invalid.rejected", "WARN")},
    "extra-property-crash": {("fuzz.invalid.answered", "FAIL")},
    "invalid-as-internal": {("fuzz.invalid.rejected", "WARN")},
    # hypothesis winds down soon after a first failure; later rounds must still find the second.
    "two-faults": {("fuzz.invalid.rejected", "WARN"), ("fuzz.hygiene.no-stack-traces", "WARN")},
}
#: What each finding's message says, so a verdict is pinned to the right cause, not just the right check.
SAYS = {
    "empty-string": '"text": ""',
    "deep-object": "-32603",
    "large-integer": "no answer within",
    "dies-after-answer": "did not answer the next request",
    "wrong-type-trace": "Traceback (most recent call last)",
    "enum-accepted": "enum at /mode",
    "extra-property-crash": "broke the transport",
    "invalid-as-internal": "-32603",
    "two-faults": "",
}
#: Defects that hang a call: the target-cost rule stops sending a method that hung twice in a revision.
HANGS = frozenset({"large-integer"})


def _mutant(defect: str, *extra: str) -> str:
    return stdio("tests.servers.fuzz_mutants", "--defect", defect, *extra)


def _cases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["check"]: c for c in report["cases"]}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) == set(DEFECTS)


def test_base_reference_over_stdio_passes() -> None:
    # The example budget is under test here, not the wall-clock one (60 s by default): a busy machine
    # slows the SDK server, so the time budget is widened to let every default example be sent.
    report = run(
        [stdio("conformance_reference.base_server")],
        FUZZ,
        protocol="2026-07-28",
        pack_options={"fuzz_budget": 900},
    )
    assert non_pass(report) == set()
    cases = _cases(report)
    assert set(cases) == CHECKS
    valid = cases["fuzz.valid.answered"]["evidence"]["fuzz"]["valid"]
    # Per-case evidence: the seed, examples and examples per second, per tool and in all.
    assert valid["seed"] == cases["fuzz.invalid.answered"]["evidence"]["fuzz"]["invalid"]["seed"]
    assert set(valid["tools"]) == {"echo", "add", "reverse", "now", "fail_politely", "ask_for_input", "count"}
    assert valid["examples"] > 300 and valid["per_second"] > 0
    assert valid["tools"]["echo"]["examples"] == 100  # the default budget, all of it sent
    assert valid["tools"]["now"]["examples"] == 1  # `{}` is the only valid input of a tool without arguments
    assert all(c["transcript"] == [] for c in report["cases"])


def test_raw_reference_passes() -> None:
    report = run([stdio("tests.servers.raw_server")], FUZZ, timeout=TIMEOUT)
    assert non_pass(report) == set()
    # Every revision is spoken; the fuzz checks run once, on the newest.
    assert {c["revision"] for c in report["cases"]} == {"2026-07-28"}
    invalid = _cases(report)["fuzz.invalid.rejected"]["evidence"]["fuzz"]["invalid"]
    assert invalid["examples"] > 50
    assert set(invalid["tools"]["echo"]["answers"]) == {"isError"}  # 2026-07-28: tool errors


def test_raw_reference_over_http_passes(tmp_path: Path) -> None:
    target = tmp_path / "raw-http.toml"
    command = [sys.executable, "-m", "tests.servers.raw_server", "--http"]
    target.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    report = run([str(target)], FUZZ, timeout=5.0, pack_options={"fuzz_examples": 5})
    assert non_pass(report) == set()
    assert _cases(report)["fuzz.valid.answered"]["evidence"]["fuzz"]["valid"]["examples"] == 10


@pytest.mark.parametrize("defect", sorted(set(EXPECTED) - {"none"}))
def test_each_defect_is_found_within_the_default_budget(defect: str) -> None:
    started = time.monotonic()
    report = run([_mutant(defect)], FUZZ, timeout=TIMEOUT, protocol=REVISION)
    assert time.monotonic() - started < budget(45), "bounded: no hang or crash is waited out twice"
    found = non_pass(report)
    if defect in HANGS:
        # A hang costs two timeouts per revision at most (the target-cost rule): once tools/call has hung
        # twice, the other mode's inputs are not sent, and its checks judged nothing (SKIP, saying so).
        unsent = {
            (c, v) for c, v in found - EXPECTED[defect] if c.startswith("fuzz.invalid.") and v == "SKIP"
        }
        for check_id, _ in unsent:
            assert "hung twice" in _cases(report)[check_id]["message"], _cases(report)[check_id]["message"]
        found -= unsent
    assert found == EXPECTED[defect]
    for case in [c for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")]:
        _assert_finding(case, SAYS[defect])
    # Every check judged the whole example budget, unless a bound (a hang, a crash) stopped a run early.
    for case in report["cases"]:
        for facts in case["evidence"]["fuzz"].values():
            for tool in facts["tools"].values():
                assert tool["examples"] >= 100 or tool.get("stopped"), (defect, case["check"], tool)


def _assert_finding(case: dict[str, Any], says: str) -> None:
    evidence = case["evidence"]
    assert says in case["message"] + json.dumps(evidence["arguments"])
    assert all(mode["seed"] == evidence["seed"] for mode in evidence["fuzz"].values())
    assert evidence["tool"] == "probe" and isinstance(evidence["arguments"], dict)
    assert "--fuzz-replay" in evidence["replay"] and f"-k {case['check']}" in evidence["replay"]
    assert evidence["replay"] in case["message"]
    # The case's transcript is the failing input's own exchange, not the hundred before it.
    assert 1 <= len(case["transcript"]) <= 12
    assert any('"tools/call"' in e.get("text", "") for e in case["transcript"])


def test_none_mutant_passes_and_never_calls_the_destructive_tool() -> None:
    report = run([_mutant("none")], FUZZ, timeout=TIMEOUT, protocol=REVISION)
    assert non_pass(report) == set()
    tools = _cases(report)["fuzz.valid.answered"]["evidence"]["fuzz"]["valid"]["tools"]
    assert set(tools) == {"probe"}  # `wipe` is not read-only: "safe" never calls it


def test_all_policy_fuzzes_the_destructive_tool_and_says_how_to_replay_it() -> None:
    report = run(
        [_mutant("none")],
        FUZZ,
        timeout=TIMEOUT,
        protocol=REVISION,
        call_tools="all",
        pack_options={"fuzz_examples": 10},
    )
    assert non_pass(report) == {("fuzz.valid.answered", "FAIL"), ("fuzz.invalid.answered", "FAIL")}
    case = _cases(report)["fuzz.valid.answered"]
    assert case["evidence"]["tool"] == "wipe" and "--call-tools all" in case["evidence"]["replay"]


def test_no_callable_tool_skips_every_check() -> None:
    report = run([_mutant("none")], FUZZ, timeout=TIMEOUT, protocol=REVISION, call_tools="none")
    assert {(c["check"], c["verdict"]) for c in report["cases"]} == {(c, "SKIP") for c in CHECKS}
    assert all("--call-tools none" in c["message"] for c in report["cases"])


def test_a_schema_the_converter_cannot_honour_is_skipped_with_the_reason() -> None:
    report = run([_mutant("none", "--tools", "merge")], FUZZ, timeout=TIMEOUT, protocol=REVISION)
    assert {c["verdict"] for c in report["cases"]} == {"SKIP"}
    assert all("merge: keyword 'allOf'" in c["message"] for c in report["cases"])
    report = run(
        [_mutant("none", "--tools", "merge,probe")],
        FUZZ,
        timeout=TIMEOUT,
        protocol=REVISION,
        pack_options={"fuzz_examples": 10},
    )
    assert non_pass(report) == set()
    assert "not fuzzed: merge: keyword 'allOf'" in _cases(report)["fuzz.valid.answered"]["message"]


def test_the_seed_repeats_the_exploration() -> None:
    first = run(
        [_mutant("deep-object")], FUZZ, timeout=TIMEOUT, protocol=REVISION, pack_options={"fuzz_seed": 1234}
    )
    again = run(
        [_mutant("deep-object")], FUZZ, timeout=TIMEOUT, protocol=REVISION, pack_options={"fuzz_seed": 1234}
    )
    a, b = (_cases(r)["fuzz.valid.no-internal-error"]["evidence"] for r in (first, again))
    assert a["seed"] == b["seed"] == 1234
    assert a["arguments"] == b["arguments"] and a["replay"] == b["replay"]
    assert (
        a["fuzz"]["valid"]["tools"]["probe"]["examples"] == b["fuzz"]["valid"]["tools"]["probe"]["examples"]
    )


def test_examples_and_budget_bound_the_run() -> None:
    raw = stdio("tests.servers.raw_server")
    report = run([raw], FUZZ, timeout=TIMEOUT, protocol=REVISION, pack_options={"fuzz_examples": 7})
    tools = _cases(report)["fuzz.valid.answered"]["evidence"]["fuzz"]["valid"]["tools"]
    assert all(t["examples"] <= 7 for t in tools.values())
    started = time.monotonic()
    report = run([raw], FUZZ, timeout=TIMEOUT, protocol=REVISION, pack_options={"fuzz_budget": 0.05})
    assert time.monotonic() - started < budget(15)
    assert non_pass(report) <= {(c, "SKIP") for c in CHECKS}
    assert any("the fuzz time budget ran out" in c["message"] for c in report["cases"])


def _replay(
    case: dict[str, Any], tmp_path: Path, server: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a finding's printed replay command (as `python -m conformance`), optionally at another server."""
    argv = shlex.split(case["evidence"]["replay"])
    assert argv[:2] == ["mcp-conformance", "run"]
    if server is not None:
        argv[argv.index("--server") + 1] = server
    return cli(*argv[1:], "--report-dir", str(tmp_path), "--quiet", timeout=300)


def test_the_replay_command_reproduces_exactly_that_case(tmp_path: Path) -> None:
    report = run([_mutant("empty-string")], FUZZ, timeout=TIMEOUT, protocol=REVISION)
    case = _cases(report)["fuzz.valid.answered"]
    done = _replay(case, tmp_path / "same")
    assert done.returncode == 1, done.stderr
    replayed = json.loads((tmp_path / "same" / "report.json").read_text(encoding="utf-8"))
    assert [(c["check"], c["verdict"]) for c in replayed["cases"]] == [("fuzz.valid.answered", "FAIL")]
    again = replayed["cases"][0]["evidence"]
    assert again["arguments"] == case["evidence"]["arguments"]
    assert again["fuzz"]["valid"]["examples"] == 1 and again["fuzz"]["valid"]["replay"] is True
    assert replayed["header"]["options"]["fuzz_replay"]
    # The same input against the conformant server passes: the replay judged that input, nothing else.
    done = _replay(case, tmp_path / "fixed", _mutant("none"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_malformed_replay_is_a_usage_error() -> None:
    done = cli("run", "--suite", "fuzz", "--fuzz-replay", '{"tool": 1}')
    assert done.returncode == 2 and "--fuzz-replay" in done.stderr
    assert cli("run", "--suite", "fuzz", "--fuzz-examples", "0").returncode == 2


def test_the_harness_writes_only_its_report(tmp_path: Path) -> None:
    """hypothesis keeps caches in `.hypothesis/` under the working folder; the harness must not."""
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    server = shlex.join([PY, "-m", "tests.servers.raw_server"])
    options = f"--suite fuzz --quiet --report-dir out --fuzz-examples 20 --timeout 30 --protocol {REVISION}"
    done = subprocess.run(
        [PY, "-m", "conformance", "run", "--server", f"stdio:{server}", *options.split()],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in work.iterdir()) == ["out"]
    header = json.loads((work / "out" / "report.json").read_text(encoding="utf-8"))["header"]
    assert isinstance(header["options"]["fuzz_seed"], int) and header["options"]["fuzz_examples"] == 20


def test_a_generator_bug_is_an_error_never_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """If hypothesis itself fails (a strategy built wrongly), the case is ERROR, not a quiet PASS or SKIP."""
    from hypothesis import strategies as st

    from conformance.arguments import strategies

    monkeypatch.setattr(strategies.Model, "valid", lambda self: st.integers(5, 1))
    report = run(
        [stdio("tests.servers.raw_server")], FUZZ, timeout=TIMEOUT, protocol=REVISION, select="fuzz.valid"
    )
    assert non_pass(report) == {("fuzz.valid.answered", "ERROR"), ("fuzz.valid.no-internal-error", "ERROR")}
    assert all("InvalidArgument" in c["message"] for c in report["cases"])

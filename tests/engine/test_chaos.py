"""The harness survives every misbehaving server: bounded time, ERROR with evidence where nothing can be
judged, the other cases still run, no process left behind, bounded memory, and the report is written.

Each server is `tests/servers/chaos_server.py MODE`: the conformant raw server with one fault planted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.sessions import HANGS_PER_METHOD
from tests import hostile
from tests.conftest import budget, judged_non_pass, run

#: Misbehaving servers: hangs waited out, restarts, 50 MB messages, floods.
pytestmark = pytest.mark.slow

REVISION = "2025-11-25"  # one revision keeps each run short; the faults do not depend on it
#: Cases whose own request to tools/call must be answered (an unknown tool, invalid arguments).
TOOL_CALL_CHECKS = {
    "base.call.unknown-tool-not-success",
    "base.call.unknown-tool-protocol-error",
}
#: With every call hung, the sweep SKIPs the tools that never answered (a slow tool breaks no rule) and
#: tools/call is not sent again: the first of TOOL_CALL_CHECKS holds that failure (ERROR), the other is
#: blocked by it.
HOLDS_THE_HANG = "base.call.unknown-tool-not-success"
#: Repeats a call that succeeded: with every call hung, none did, so it SKIPs saying so, or is an ERROR
#: where its own sweep call was the one refused for a method that already hung twice (timing decides
#: which case reaches the hang first); never a verdict.
REPEATS_A_CALL = "base.tasks.undeclared-augmentation"
#: Cases that judge what the server's own tools answer: a tool that never answers breaks no rule, so
#: with no answer they judged nothing, SKIP saying so (never PASS). Leaving a required argument out
#: of a call is built on a call the tool answered: none did, so that case judged nothing either.
TOOL_RESULT_CHECKS = {
    "base.call.structured-matches-schema",
    "base.call.text-mirror-present",
    "base.call.text-mirror-equal",
    "base.call.invalid-arguments",
}


def _spec(mode: str, tmp_path: Path) -> str:
    """A target for one chaos mode, tagged with the test's folder so only its own processes are counted."""
    tag = ["--tag", hostile.process_tag(tmp_path)]
    if not mode.startswith("http-"):
        return f"stdio:{sys.executable} -m tests.servers.chaos_server {mode} --tag {tag[1]}"
    path = tmp_path / f"{mode}.toml"
    command = [sys.executable, "-m", "tests.servers.chaos_server", "--http", mode, *tag]
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    return str(path)


#: The per-request timeout of a mode whose server leaves some request unanswered, so each such wait is
#: short; the requests it does answer are answered in milliseconds (the timeout is ample under load).
HANG_TIMEOUT = 2.0
#: Modes where a timeout must fire: their runs use HANG_TIMEOUT (hang-first: the start budget too).
HANGS: dict[str, dict[str, Any]] = {"hang-first": dict(timeout=HANG_TIMEOUT, start_timeout=5.0)} | {
    mode: dict(timeout=HANG_TIMEOUT) for mode in ("hang-call", "http-trickle", "http-sse-forever")
}


def _run(mode: str, tmp_path: Path, bound: float) -> tuple[dict[str, Any], dict[str, str]]:
    """Run one mode. `bound` is the run's wall time on an idle machine with room to spare, stretched
    by the load (`budget`): a misbehaving server must not make the harness wait out its hang. Modes
    that answer every request get the generous default timeouts, so no answer is lost to load."""
    started = time.monotonic()
    report = run([_spec(mode, tmp_path)], protocol=REVISION, **HANGS.get(mode, {}))
    elapsed = time.monotonic() - started
    assert elapsed < budget(bound), f"{mode}: the run took {elapsed:.1f} s (bound {budget(bound):.0f} s)"
    assert report["footer"]["complete"] is True
    # Polled: on an idle machine they are gone at once.
    left = hostile.left_after(hostile.process_tag(tmp_path), within=60)
    assert left == [], f"{mode}: a server process was left behind"
    # The SKIPs of features the raw server does not offer (prompts, logging, input...) are the same for
    # every mode, each area's tests judge them; left out here.
    judged = judged_non_pass(report)
    report["cases"] = [c for c in report["cases"] if c["verdict"] != "SKIP" or (c["check"], "SKIP") in judged]
    return report, {c["check"]: c["verdict"] for c in report["cases"]}


@pytest.mark.parametrize(
    ("mode", "bound"), [("hang-first", 30), ("exit-0", 10), ("http-500", 10), ("http-ctype", 10)]
)
def test_server_that_never_answers_usefully_is_an_error_and_exit_3(
    mode: str, bound: float, tmp_path: Path
) -> None:
    report, verdicts = _run(mode, tmp_path, bound)
    assert verdicts == {"base.connect": "ERROR"}
    assert report["footer"]["exit_code"] == 3
    assert report["cases"][0]["message"]


def test_hang_on_one_call_errors_only_the_cases_that_call_tools(tmp_path: Path) -> None:
    report, verdicts = _run("hang-call", tmp_path, 60)
    assert verdicts.pop(REPEATS_A_CALL) in ("SKIP", "ERROR")
    report["cases"] = [c for c in report["cases"] if c["check"] != REPEATS_A_CALL]
    errors = {check for check, verdict in verdicts.items() if verdict == "ERROR"}
    assert errors == {HOLDS_THE_HANG}
    blocked = [c for c in report["cases"] if c.get("blocked_by")]
    assert {c["check"] for c in blocked} == TOOL_CALL_CHECKS - {HOLDS_THE_HANG}
    assert all(c["verdict"] == "SKIP" and c["blocked_by"].startswith(HOLDS_THE_HANG + "[") for c in blocked)
    skipped = [c for c in report["cases"] if c["verdict"] == "SKIP" and c not in blocked]
    assert {c["check"] for c in skipped} == TOOL_RESULT_CHECKS
    assert all(c["message"].startswith("nothing judged") for c in skipped)
    assert all(v == "PASS" for c, v in verdicts.items() if c not in TOOL_CALL_CHECKS | TOOL_RESULT_CHECKS)
    # Error hygiene judged the probes that were answered, and names the part it could not judge.
    hygiene = next(c for c in report["cases"] if c["check"] == "base.hygiene.no-stack-traces")
    # (Its tools/call probes were not sent at all: tools/call already hung for two tools, and it says so.)
    assert "not sent, as what they call already hung twice" in hygiene["message"]
    assert "tools/call" in hygiene["message"]
    timed_out = [c for c in report["cases"] if c["verdict"] == "ERROR"]
    assert all("timeout" in c["message"] or "already failed" in c["message"] for c in timed_out)


def test_crash_mid_run_restarts_and_the_rest_still_runs(tmp_path: Path) -> None:
    report, verdicts = _run("crash-mid", tmp_path, 40)
    assert "ERROR" in verdicts.values() and "PASS" in verdicts.values()
    assert not {"FAIL", "WARN"} & set(verdicts.values()), "a crash is never a verdict on a requirement"
    crashed = next(c for c in report["cases"] if c["verdict"] == "ERROR")
    assert "exit status 1" in json.dumps(crashed)


@pytest.mark.parametrize("mode", ["garbage", "bad-utf8"])
def test_junk_on_stdout_fails_only_the_stdout_rule(mode: str, tmp_path: Path) -> None:
    _report, verdicts = _run(mode, tmp_path, 20)
    assert {c: v for c, v in verdicts.items() if v != "PASS"} == {"base.stdio.stdout-only-messages": "FAIL"}


@pytest.mark.parametrize("mode", ["dup-id", "flood-notify", "flood-stderr"])
def test_noise_that_breaks_no_rule_leaves_every_case_passing(mode: str, tmp_path: Path) -> None:
    report, verdicts = _run(mode, tmp_path, 40)
    assert set(verdicts.values()) == {"PASS"}, [
        (c["key"], c["verdict"], c["message"][:300]) for c in report["cases"] if c["verdict"] != "PASS"
    ]


def _one_error_the_rest_blocked(cases: list[dict[str, Any]]) -> None:
    """One case met the failure (ERROR: nothing could be read); every other case that met it again is
    SKIP, blocked by that one, and names it."""
    errors = [c for c in cases if c["verdict"] == "ERROR"]
    assert len(errors) == 1, [(c["key"], c["verdict"], c["message"][:100]) for c in cases]
    for case in cases:
        if case is not errors[0]:
            assert case["verdict"] == "SKIP" and case["blocked_by"] == errors[0]["key"], case["message"]


def test_one_50_mb_message_is_an_error_not_a_hang(tmp_path: Path) -> None:
    report, verdicts = _run("huge", tmp_path, 30)
    oversize = [c for c in report["cases"] if "exceeded the" in c["message"]]
    assert oversize
    _one_error_the_rest_blocked(oversize)
    assert not {"FAIL", "WARN"} & set(verdicts.values())


#: Servers hostile after initialize (tests/servers/chaos_server.py `AFTER_INIT`), and what the one case
#: that met the fault says.
HOSTILE_AFTER_INIT = {
    "endless-line": "exceeded the 16777216-byte cap",
    "deep-nest": "nested deeper than the harness's JSON parser reads",
    "orphan-stdout": "while a process it left holds its stdout open",
}


@pytest.mark.parametrize("mode", sorted(HOSTILE_AFTER_INIT))
def test_a_server_hostile_after_initialize_is_one_error_and_its_dependants_blocked(
    mode: str, tmp_path: Path
) -> None:
    """One defect, one verdict: the case whose request met the fault is the one ERROR (nothing could be
    read: a line past the cap, an answer nested past the parser, a server gone while a stray holds its
    stdout), every case that needed that exchange or session is SKIP blocked by it, and the fault is
    met at most once more, by the restart that reproduced it. Counted from the server's own log of the
    requests it received, never timed."""
    log = tmp_path / "requests.log"
    report = run([f"{_spec(mode, tmp_path)} --log {log}"], protocol=REVISION)
    assert hostile.left_after(hostile.process_tag(tmp_path), within=60) == []
    broken = [c for c in report["cases"] if c["verdict"] not in ("PASS", "SKIP")]
    assert [c["verdict"] for c in broken] == ["ERROR"], [(c["key"], c["message"][:120]) for c in broken]
    assert HOSTILE_AFTER_INIT[mode] in broken[0]["message"]
    blocked = [c for c in report["cases"] if c.get("blocked_by")]
    assert len(blocked) >= 20 and {c["blocked_by"] for c in blocked} == {broken[0]["key"]}
    assert {c["verdict"] for c in blocked} == {"SKIP"}
    # What is neither PASS nor blocked is what the raw server leaves unjudged on any run.
    assert judged_non_pass({"cases": [c for c in report["cases"] if c not in blocked]}) == {
        (broken[0]["check"], "ERROR")
    }
    received = log.read_text(encoding="utf-8").split()
    struck = [line.removeprefix("struck:") for line in received if line.startswith("struck:")]
    if mode == "orphan-stdout":
        # Each process strikes at its first request after the handshake and is gone: a method met it
        # and a restart reproduced it, then another method did, and the revision's requests ended.
        assert len(struck) <= HANGS_PER_METHOD + 1, received
    else:  # tools/list met the fault and a restart reproduced it: never sent again
        assert struck == ["tools/list"] * HANGS_PER_METHOD, received
        assert received.count("tools/list") == HANGS_PER_METHOD, received


@pytest.mark.parametrize("mode", ["http-trickle", "http-reset", "http-sse-forever"])
def test_http_faults_on_one_method_error_its_cases_only(mode: str, tmp_path: Path) -> None:
    _report, verdicts = _run(mode, tmp_path, 90)
    assert "PASS" in verdicts.values() and "ERROR" in verdicts.values()
    assert not {"FAIL", "WARN"} & set(verdicts.values())
    assert verdicts["base.resources.read-shape"] == "PASS", "cases that never list tools are untouched"


@pytest.mark.parametrize("mode", ["huge", "near-cap", "http-near-cap", "flood-notify"])
def test_harness_memory_stays_bounded(mode: str, tmp_path: Path) -> None:
    """The harness's own peak RSS stays far below what the server sends: a 50 MB message is dropped as
    it streams, and one just under the 16 MB cap (stdio, and an SSE answer over HTTP) is held in as
    few copies as parsing needs. The peak is VmHWM from /proc (`hostile.harness`), never the child's
    `ru_maxrss`, which Linux carries over from the process that started it (a pytest worker of a few
    hundred MB would be measured instead of the harness)."""
    result, peak_mb = hostile.harness(
        "run", "--server", _spec(mode, tmp_path), "--protocol", REVISION, "--timeout", "30", "--quiet",
        "--report-dir", str(tmp_path / "r"), timeout=600,
    )  # fmt: skip
    print(f"{mode}: peak RSS {peak_mb:.0f} MB (exit {result.returncode})")
    assert peak_mb < hostile.PEAK_LIMIT_MB, f"{mode}: the harness peaked at {peak_mb:.0f} MB"
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert (tmp_path / "r" / "report.json").exists()
    # As `_run` polls: gone at once when idle.
    assert hostile.left_after(hostile.process_tag(tmp_path), within=60) == []


@pytest.mark.parametrize("mode", ["tiny-values", "http-tiny-values"])
def test_a_message_of_millions_of_tiny_values_is_an_error_within_the_memory_bound(
    mode: str, tmp_path: Path
) -> None:
    """15 MB of `[[],[],...]`, under the byte cap, would be five million Python lists (some 400 MB) once
    parsed: the harness counts the values first and refuses it unparsed, an ERROR naming the cap, never
    a FAIL, over stdio and in an HTTP JSON body, and its peak stays under the documented bound."""
    result, peak_mb = hostile.harness(
        "run", "--server", _spec(mode, tmp_path), "--protocol", REVISION, "--quiet",
        "--report-dir", str(tmp_path / "r"), timeout=600,
    )  # fmt: skip
    print(f"{mode}: peak RSS {peak_mb:.0f} MB (exit {result.returncode})")
    assert hostile.left_after(hostile.process_tag(tmp_path), within=60) == []
    assert peak_mb < hostile.PEAK_LIMIT_MB, f"{mode}: the harness peaked at {peak_mb:.0f} MB"
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    refused = [c for c in report["cases"] if "JSON values" in c["message"]]
    assert refused
    _one_error_the_rest_blocked(refused)
    assert "exceeded the harness's cap" in refused[0]["message"]
    assert not {"FAIL", "WARN"} & {c["verdict"] for c in report["cases"]}


CANARY = "canary-7f3a9c-DO-NOT-LEAK"
CHAOS = [sys.executable, "-m", "tests.servers.chaos_server"]


def test_secrets_never_reach_any_output(tmp_path: Path) -> None:
    """A server that echoes secrets back everywhere: no output file, view or log line may carry them."""
    stdio_target = tmp_path / "stdio.toml"
    stdio_target.write_text(
        "[target]\n"
        f"command = {json.dumps([*CHAOS, 'leak-secret'])}\n"
        '[target.env_from]\nCANARY = "CANARY_SOURCE"\n',
        encoding="utf-8",
    )
    http_target = tmp_path / "http.toml"
    http_target.write_text(
        "[target]\n"
        f"command = {json.dumps([*CHAOS, '--http', 'http-leak-secret'])}\n"
        'transport = "http"\n'
        '[target.headers_from_env]\nAuthorization = "AUTH_SOURCE"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "CANARY_SOURCE": CANARY, "AUTH_SOURCE": f"Bearer {CANARY}"}
    outputs = []
    for target in (stdio_target, http_target):
        out_dir = tmp_path / target.stem
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "conformance",
                "run",
                "--server",
                str(target),
                "--protocol",
                REVISION,
                "--report-dir",
                str(out_dir),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        assert result.returncode in (0, 1), result.stderr
        outputs += [result.stdout, result.stderr]
        files = [p for p in out_dir.rglob("*") if p.is_file()]
        assert {"report.json", "report.md", "junit.xml"} <= {p.name for p in files}
        for path in files:
            assert CANARY not in path.read_text(encoding="utf-8", errors="replace"), (
                f"leaked into {path.name}"
            )
        report = json.loads((out_dir / "report.json").read_text())
        assert "[redacted]" in json.dumps(report), "the echoed secret was seen and masked, not absent"
    for text in outputs:
        assert CANARY not in text


def test_never_follows_a_redirect_to_another_origin(tmp_path: Path) -> None:
    report, verdicts = _run("http-redirect", tmp_path, 20)
    assert verdicts == {"base.connect": "ERROR"}
    assert "307" in report["cases"][0]["message"]
    assert "127.0.0.2" not in json.dumps(report["targets"][0].get("url"))


def test_legacy_sse_endpoint_on_another_origin_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sse.toml"
    path.write_text(
        f'[target]\ncommand = {json.dumps([*CHAOS, "--http", "sse-offsite-endpoint"])}\ntransport = "sse"\n',
        encoding="utf-8",
    )
    started = time.monotonic()
    report = run([str(path)], protocol=REVISION, timeout=1.0)
    assert time.monotonic() - started < budget(20), "refused at once, not after the stream's 30 s"
    assert [(c["check"], c["verdict"]) for c in report["cases"]] == [("base.connect", "ERROR")]
    assert "outside the target's origin" in report["cases"][0]["message"]

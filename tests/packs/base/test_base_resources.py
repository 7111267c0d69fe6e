"""Resources, subscriptions, progress and cancellation: the reference passes every check of the area in
every revision, and each planted defect (`tests/servers/base_resources_mutants.py`) FAILs, or WARNs for a
SHOULD, exactly the checks it breaks, in the revision whose rule it breaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance_packs.base.uritemplate import expand, template_problem
from tests.conftest import non_pass, run, server_argv, stdio
from tests.servers.base_resources_mutants import DEFECTS

#: The checks of this area (and the older resources checks beside them).
AREA = "resources.,subscribe.,listen.,progress.,cancel."
LEGACY, MODERN = "2025-11-25", "2026-07-28"

NO_PROGRESS = {(f"base.progress.{name}", "SKIP") for name in ("token-match", "increases", "stops", "shape")}

EXPECTED: dict[str, tuple[str, set[tuple[str, str]]]] = {
    "bad-blob": (LEGACY, {("base.resources.blob-base64", "FAIL")}),
    # With no blob left to decode, the base64 rule has nothing to judge.
    "no-text-no-blob": (
        LEGACY,
        {("base.resources.contents-valid", "FAIL"), ("base.resources.blob-base64", "SKIP")},
    ),
    "bad-template": (LEGACY, {("base.resources.template-syntax", "FAIL")}),
    # -32002 is right through 2025-11-25 and wrong from 2026-07-28 (SEP-2164).
    # The data beside a wrong code is not judged: that one defect is BASE-RES-014's.
    "unknown-legacy-code": (
        MODERN,
        {("base.resources.unknown-code-modern", "FAIL"), ("base.resources.unknown-data-uri", "SKIP")},
    ),
    # The URI in the error's data is 2026-07-28's example, not a rule: WARN.
    "unknown-no-data": (MODERN, {("base.resources.unknown-data-uri", "WARN")}),
    # Before 2026-07-28 the code is a SHOULD.
    "unknown-invalid-params": (LEGACY, {("base.resources.unknown-code-legacy", "WARN")}),
    "unknown-empty": (
        MODERN,
        {
            ("base.resources.unknown-not-empty", "FAIL"),
            ("base.resources.unknown-code-modern", "SKIP"),
            ("base.resources.unknown-data-uri", "SKIP"),
            ("base.resources.unknown-uri", "WARN"),
        },
    ),
    # A declared subscribe refused with an error: no sentence forbids it (WARN, saying which error); no
    # subscription, so no update to judge.
    "refuse-subscribe": (
        LEGACY,
        {
            ("base.subscribe.answered", "WARN"),
            ("base.subscribe.updated-shape", "SKIP"),
            ("base.subscribe.only-subscribed", "SKIP"),
        },
    ),
    # A listed resource that cannot be read now is read past: an error answer is never validated as a
    # result, and no sentence requires every listed resource to be readable at every moment.
    "read-error-first": (LEGACY, set()),
    # No revision requires resources/templates/list: its refusal is SKIP, saying so, and the template
    # rows have nothing to judge.
    "no-templates": (
        LEGACY,
        {("base.resources.templates-shape", "SKIP"), ("base.resources.template-syntax", "SKIP")},
    ),
    # The schema's "should only be sent if the client previously sent a resources/subscribe": WARN.
    "update-unsubscribed": (LEGACY, {("base.subscribe.only-subscribed", "WARN")}),
    "update-without-uri": (LEGACY, {("base.subscribe.updated-shape", "FAIL")}),
    "listen-no-ack": (MODERN, {("base.listen.acknowledged-first", "FAIL")}),
    "listen-untagged": (MODERN, {("base.listen.tagged", "FAIL")}),
    "listen-extra-kind": (MODERN, {("base.listen.only-requested", "FAIL")}),
    "progress-wrong-token": (LEGACY, {("base.progress.token-match", "FAIL")}),
    "progress-decreasing": (LEGACY, {("base.progress.increases", "FAIL")}),
    "progress-not-number": (LEGACY, {("base.progress.shape", "FAIL"), ("base.progress.increases", "FAIL")}),
    "progress-unasked": (LEGACY, {("base.progress.token-match", "FAIL")}),
    "progress-after-response": (LEGACY, {("base.progress.stops", "FAIL")}),
    "server-cancels": (MODERN, {("base.cancel.server-sends-none", "FAIL")}),
    # Not answering a cancelled request is a SHOULD.
    "ignore-cancel": (LEGACY, {("base.cancel.no-response", "WARN")}),
    # An error about the cancellation is a message sent for it: 2026-07-28's stdio MUST NOT (the SHOULD
    # before, `test_an_error_about_the_cancellation_is_judged_by_revision`).
    "error-on-cancel": (MODERN, {("base.cancel.no-response", "FAIL")}),
    # A result that arrives before the answer to the request after the cancellation may have crossed it.
    "crossing-result": (MODERN, {("base.cancel.no-response", "SKIP")}),
    # A count that takes its steps and delay: the simplest arguments (steps 1, delay 0) show one value
    # and nothing to cancel, so the harness sizes them (3 steps, 0.5 s) and judges both rows.
    "count-arguments": (LEGACY, set()),
    "count-arguments-decreasing": (LEGACY, {("base.progress.increases", "FAIL")}),
    "count-arguments-ignore-cancel": (LEGACY, {("base.cancel.no-response", "WARN")}),
    # One value per call shows no increase: nothing judged, never PASS.
    "count-arguments-one-step": (LEGACY, {("base.progress.increases", "SKIP")}),
    # A tool that sleeps without progress: the progress rows have nothing, the cancellation row does.
    "sleeper": (LEGACY, NO_PROGRESS),
    "sleeper-ignore-cancel": (LEGACY, NO_PROGRESS | {("base.cancel.no-response", "WARN")}),
    # The sleeper whose default wait (a minute) outlasts the timeout: sized, it is judged as the sleeper.
    "sleeper-slow-default": (LEGACY, NO_PROGRESS),
}


def test_every_defect_has_an_expectation() -> None:
    assert set(EXPECTED) | {"none"} == set(DEFECTS)


def _verdicts(report: dict[str, Any], check: str) -> dict[str, str]:
    return {c["revision"]: c["verdict"] for c in report["cases"] if c["check"] == check}


@pytest.mark.slow
def test_the_reference_passes_the_area_in_every_revision() -> None:
    report = run([stdio("tests.servers.base_resources_mutants", "--defect", "none")], select=AREA)
    assert report["targets"][0]["revisions_spoken"] == [
        MODERN,
        LEGACY,
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]
    assert non_pass(report) == set()
    # Each revision is judged by its own rules: the listen rows only in 2026-07-28, subscribe before it.
    assert set(_verdicts(report, "base.listen.acknowledged-first")) == {MODERN}
    assert set(_verdicts(report, "base.subscribe.answered")) == {
        LEGACY,
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    }
    assert set(_verdicts(report, "base.cancel.no-response")) == set(report["targets"][0]["revisions_spoken"])


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(EXPECTED))
def test_mutant_fails_exactly_its_checks(defect: str) -> None:
    protocol, expected = EXPECTED[defect]
    report = run(
        [stdio("tests.servers.base_resources_mutants", "--defect", defect)], protocol=protocol, select=AREA
    )
    assert non_pass(report) == expected
    failed = [c for c in report["cases"] if c["verdict"] in ("FAIL", "WARN")]
    assert all(c["message"] for c in failed), "a miss says what was missed"


#: The listen rows over Streamable HTTP (the listen answer a stream held open while the resources are
#: read): each listen defect FAILs exactly its row there too. A listen never acknowledged draws no HTTP
#: answer at all from the SDK (its stream starts with the first event), so the other rows are blocked by
#: the acknowledgment row's FAIL, not judged on nothing.
HTTP_LISTEN: dict[str, set[tuple[str, str]]] = {
    "none": set(),
    "listen-no-ack": {
        ("base.listen.acknowledged-first", "FAIL"),
        ("base.listen.updated-shape", "SKIP"),
        ("base.listen.only-requested", "SKIP"),
        ("base.listen.tagged", "SKIP"),
    },
    "listen-untagged": {("base.listen.tagged", "FAIL")},
    "listen-extra-kind": {("base.listen.only-requested", "FAIL")},
}


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(HTTP_LISTEN))
def test_listen_over_streamable_http(tmp_path: Path, defect: str) -> None:
    path = tmp_path / "target.toml"
    command = server_argv("tests.servers.base_resources_mutants", "--defect", defect, "--http", "--port", "0")
    path.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    # A short request timeout: the unacknowledged listen waits it out once.
    report = run([str(path)], protocol=MODERN, select="listen.", timeout=5.0)
    assert {c["check"] for c in report["cases"]} == {
        "base.listen.acknowledged-first",
        "base.listen.updated-shape",
        "base.listen.only-requested",
        "base.listen.tagged",
    }
    assert non_pass(report) == HTTP_LISTEN[defect]
    blocked = [c for c in report["cases"] if c["verdict"] == "SKIP"]
    assert all(c.get("blocked_by") for c in blocked), blocked


@pytest.mark.slow
@pytest.mark.parametrize(
    ("defect", "judged"),
    [
        ("count-arguments", "cancelled once a progress below its total showed it running"),
        ("count-arguments-one-step", "cancelled while it ran"),
        ("sleeper", "cancelled while it ran"),
    ],
)
def test_a_cancellation_is_sent_to_a_call_in_flight(defect: str, judged: str) -> None:
    """The cancellation row judges a tool whose simplest arguments answer at once, and one that sleeps
    without progress: it PASSes saying the call was cancelled while it ran, not SKIP."""
    report = run(
        [stdio("tests.servers.base_resources_mutants", "--defect", defect)],
        protocol=LEGACY,
        select="cancel.no-response",
    )
    (case,) = report["cases"]
    assert case["verdict"] == "PASS" and judged in case["message"], case["message"]


@pytest.mark.slow
def test_an_error_about_the_cancellation_is_judged_by_revision() -> None:
    """A call answered with -32800 as soon as its cancellation is read: FAIL where the revision's text
    is a MUST NOT (2026-07-28 over stdio), WARN where it is the SHOULD; each case shows the level it was
    judged at. A late result stays the SHOULD in 2026-07-28 too (a cancellation the server could not
    honour may be ignored), and a result that crossed the cancellation is SKIP in every revision."""
    cases = {
        defect: {
            c["revision"]: c
            for c in run(
                [stdio("tests.servers.base_resources_mutants", "--defect", defect)],
                select="cancel.no-response",
            )["cases"]
        }
        for defect in ("error-on-cancel", "ignore-cancel", "crossing-result")
    }
    errors = cases["error-on-cancel"]
    assert (errors[MODERN]["verdict"], errors[MODERN]["level"]) == ("FAIL", "MUST NOT")
    assert (errors[LEGACY]["verdict"], errors[LEGACY]["level"]) == ("WARN", "SHOULD")
    assert all("error about the cancellation" in c["message"] for c in errors.values())
    assert {c["verdict"] for c in cases["ignore-cancel"].values()} == {"WARN"}
    crossing = cases["crossing-result"].values()
    assert all(c["verdict"] == "SKIP" and "crossed the cancellation" in c["message"] for c in crossing)


@pytest.mark.slow
def test_the_sweep_sizes_a_wait_that_outlasts_the_timeout() -> None:
    """A tool whose default wait outlasts the request timeout is called by the tool sweep with its wait
    sized (`common.sized_first`): it answers, nothing runs out the timeout, and the cancellation row
    still judges it (called again with the progress rows' own sizing, long enough to cancel)."""
    report = run(
        [stdio("tests.servers.base_resources_mutants", "--defect", "sleeper-slow-default")],
        protocol=LEGACY,
        select="call.structured-matches-schema,cancel.no-response",
    )
    verdicts = {c["check"]: c for c in report["cases"]}
    cancel = verdicts["base.cancel.no-response"]
    assert cancel["verdict"] == "PASS" and "cancelled while it ran" in cancel["message"], cancel["message"]
    sweep = verdicts["base.call.structured-matches-schema"]["evidence"]["tool_calls"]
    (entry,) = [t for t in sweep["per_tool"] if t["tool"] == "sleep"]
    assert entry["succeeded"] and entry["sized"] == "seconds=0.1", entry
    assert entry["arguments"] == {"seconds": 0.1} and entry["calls"] == 1, entry


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("ref://items/{item_id}", ""),
        ("file:///{+path}{?q,lang}", ""),
        ("x{/p*}{.e:3}{#f}{;g}{&h}", ""),
        ("ref://broken/{item id}", "invalid variable"),
        ("open{", "never closed"),
        ("close}", "closes no expression"),
        ("x{=a}", "reserved operator"),
        ("a b{x}", "excludes"),
        ("x{}", "invalid variable"),
    ],
)
def test_uri_template_syntax(template: str, problem: str) -> None:
    found = template_problem(template)
    assert (problem in found and found) if problem else found == ""


def test_uri_template_expansion() -> None:
    assert expand("ref://items/{item_id}", "1") == "ref://items/1"
    assert expand("x{?a,b}{&c}", "1") == "x?a=1&b=1&c=1"
    assert expand("q{/p*}{.e:3}{#f}{;g}", "12345") == "q/12345.123#12345;g=12345"


def test_a_cancellation_waits_for_a_progress_below_its_total() -> None:
    from conformance.protocol.jsonrpc import classify
    from conformance_packs.base.progress import still_running

    def progress(params: str) -> bool:
        message = '{"jsonrpc":"2.0","method":"notifications/progress","params":' + params + "}"
        return still_running(classify(message.encode()))

    assert progress('{"progressToken":"t","progress":1,"total":5}')
    assert progress('{"progressToken":"t","progress":3}')  # no total: it may go on
    assert not progress('{"progressToken":"t","progress":5,"total":5}')  # the last step: it is ending
    assert not still_running(classify(b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}'))
    assert not still_running(classify(b'{"jsonrpc":"2.0","id":1,"result":{}}'))

"""The prompt, completion and logging checks: the reference passes each in every revision, and each
planted defect (`tests/servers/base_prompts_mutants.py`) FAILs (or WARNs, for a SHOULD) exactly the
checks it breaks, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import non_pass, run, stdio
from tests.servers.base_prompts_mutants import DEFECTS

#: Only this area's checks run against the mutants: the rest of the base suite judges the reference.
SELECT = "base.prompts.,base.completion.,base.logging."
#: The logging checks that need the logging capability, legacy and 2026-07-28.
LEGACY_LEVEL_CHECKS = {"base.logging.set-level", "base.logging.invalid-level", "base.logging.below-level"}
MODERN_LEVEL_CHECKS = {"base.logging.modern-invalid-level", "base.logging.modern-at-or-above"}

#: Each defect, the revision it is judged in (one revision per mutant keeps the test cheap: the
#: reference itself is judged in all of them below), and the non-PASS verdicts it must draw there.
EXPECTED: dict[str, tuple[str, set[tuple[str, str]]]] = {
    # 2024-11-05's PromptMessage has text, image and embedded resources only.
    "audio-in-2024": ("2024-11-05", {("base.prompts.get-shape", "FAIL")}),
    "image-not-base64": ("2025-06-18", {("base.prompts.binary-content", "FAIL")}),
    # The schema leaves mimeType optional; the prompts page says MUST.
    "embedded-no-mime": ("2025-11-25", {("base.prompts.embedded-resource", "FAIL")}),
    "system-role": ("2026-07-28", {("base.prompts.get-shape", "FAIL")}),
    "prompt-argument-no-name": ("2025-03-26", {("base.prompts.list-shape", "FAIL")}),
    # The error codes are SHOULDs in every revision.
    "unknown-prompt-empty": ("2026-07-28", {("base.prompts.unknown-name", "WARN")}),
    "missing-argument-accepted": ("2024-11-05", {("base.prompts.missing-argument", "WARN")}),
    # Before 2026-07-28 the SDK sends the 101 values; in 2026-07-28 its own maxItems refuses them.
    "completion-101": ("2025-11-25", {("base.completion.max-values", "FAIL")}),
    # total and hasMore are defined, not required: a contradiction is a WARN.
    "completion-total-low": ("2025-06-18", {("base.completion.total-consistent", "WARN")}),
    "completion-unknown-prompt-ok": ("2026-07-28", {("base.completion.unknown-prompt", "WARN")}),
    "template-values-not-strings": ("2024-11-05", {("base.completion.template-variable", "FAIL")}),
    # A declared method refused with an error: no sentence forbids it (WARN, saying which error). With no
    # level set there is no level to hold messages back by.
    "set-level-refused": (
        "2025-11-25",
        {("base.logging.set-level", "WARN"), ("base.logging.below-level", "SKIP")},
    ),
    # "The server should send all logs at this level and higher": lower-case should, a WARN.
    "level-ignored": ("2025-03-26", {("base.logging.below-level", "WARN")}),
    "invalid-level-accepted": ("2024-11-05", {("base.logging.invalid-level", "WARN")}),
    "log-without-opt-in": ("2026-07-28", {("base.logging.modern-opt-in", "FAIL")}),
    # The text permits messages at or above the level (MAY) and forbids none below it: a WARN.
    "below-opt-in-level": ("2026-07-28", {("base.logging.modern-at-or-above", "WARN")}),
    "invalid-log-level-served": ("2026-07-28", {("base.logging.modern-invalid-level", "WARN")}),
    # Logging without declaring it; the checks that need the capability are SKIP, saying so.
    "no-logging-capability": (
        "2025-11-25",
        {("base.logging.capability-declared", "FAIL")} | {(check, "SKIP") for check in LEGACY_LEVEL_CHECKS},
    ),
    "no-logging-capability-modern": (
        "2026-07-28",
        {("base.logging.capability-declared", "FAIL")} | {(check, "SKIP") for check in MODERN_LEVEL_CHECKS},
    ),
}


#: Servers that declare prompts and list none, with tools that log, by (defect, revision): the logging
#: rows are judged on the tool calls (a helper's "prompts/list offers no prompt" is one source's reason,
#: not the case's end).
NO_PROMPTS: dict[tuple[str, str], dict[str, str]] = {
    ("no-prompts", "2025-11-25"): {"base.logging.capability-declared": "PASS"},
    ("no-prompts", "2026-07-28"): {
        "base.logging.capability-declared": "PASS",
        "base.logging.modern-opt-in": "PASS",
    },
    ("no-prompts-log-without-opt-in", "2026-07-28"): {
        "base.logging.capability-declared": "PASS",
        "base.logging.modern-opt-in": "FAIL",
    },
    ("no-prompts-no-logging-capability", "2025-11-25"): {"base.logging.capability-declared": "FAIL"},
    ("no-prompts-no-logging-capability", "2026-07-28"): {"base.logging.capability-declared": "FAIL"},
}


def test_every_defect_has_an_expectation() -> None:
    no_prompts = {defect for defect, _ in NO_PROMPTS}
    assert set(EXPECTED) - {"no-logging-capability-modern"} | no_prompts | {"none"} == set(DEFECTS)


def _run(defect: str, **options: Any) -> dict[str, Any]:
    return run([stdio("tests.servers.base_prompts_mutants", "--defect", defect)], select=SELECT, **options)


@pytest.mark.parametrize(("name", "revision"), sorted(NO_PROMPTS))
def test_logging_rows_are_judged_when_prompts_list_none(name: str, revision: str) -> None:
    """BASE-LOG-004 and -005 read the log messages of tool calls and prompts/get alike: a server that
    lists no prompt is judged on its tool calls, and the source that gave nothing is named."""
    expected = NO_PROMPTS[name, revision]
    report = _run(name, protocol=revision)
    cases = {c["check"]: c for c in report["cases"]}
    assert {check: cases[check]["verdict"] for check in expected} == expected
    for check in expected:
        message = cases[check]["message"]
        if cases[check]["verdict"] == "PASS":
            assert "prompts/get: prompts/list offers no prompt" in message, message
    # The planted fault is the only FAIL: what needs a prompt is SKIP, saying so.
    failed = {check for check, c in cases.items() if c["verdict"] == "FAIL"}
    assert failed == {check for check, verdict in expected.items() if verdict == "FAIL"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    revision, expected = EXPECTED[name]
    report = _run(name.removesuffix("-modern"), protocol=revision)
    assert report["targets"][0]["revisions_spoken"] == [revision]
    assert non_pass(report, unoffered=True) == expected
    failed = [c for c in report["cases"] if c["verdict"] == "FAIL"]
    assert all(c["evidence"] or c["message"] for c in failed), "a FAIL carries its evidence"


def test_reference_judges_every_revision() -> None:
    """Each check of the area runs, and passes, in each revision it exists in (none is left unjudged)."""
    report = _run("none")
    assert non_pass(report, unoffered=True) == set()
    judged = {(c["check"], c["revision"]) for c in report["cases"] if c["verdict"] == "PASS"}
    legacy = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    for revision in (*legacy, "2026-07-28"):
        assert ("base.prompts.get-shape", revision) in judged
        assert ("base.completion.template-variable", revision) in judged
        assert ("base.logging.capability-declared", revision) in judged
    for revision in legacy:
        assert ("base.logging.below-level", revision) in judged
    assert ("base.logging.modern-opt-in", "2026-07-28") in judged
    assert ("base.completion.unknown-prompt", "2024-11-05") not in judged

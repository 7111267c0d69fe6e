"""The one verdict module: the verdicts, how a requirement's level turns a miss into one, which of them
fail a run, what a baseline may excuse, how each shows in pytest and JUnit, and the exit codes.

Every place that turns verdicts into a decision (the runner, baselines, the pytest plugin, badges,
diff, the views, the exit code) reads it from here, so a rule is changed once and every consumer
agrees. Verdicts stay plain strings in a report: `Verdict` is a `StrEnum`, equal to its value.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Literal


class Verdict(StrEnum):
    """The checks' own five verdicts, then the two a baseline of expected failures turns them into
    (never a check's): XFAIL is a listed FAIL or WARN, XPASS a listed case that now passes."""

    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    SKIP = "SKIP"
    ERROR = "ERROR"
    XFAIL = "XFAIL"
    XPASS = "XPASS"


#: Every verdict in report order (totals, views).
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
#: The verdicts a check (or the runner) gives; a report without a baseline holds only these.
CHECK_VERDICTS: tuple[Verdict, ...] = (Verdict.PASS, Verdict.FAIL, Verdict.WARN, Verdict.SKIP, Verdict.ERROR)
#: The verdicts only a baseline gives: views list them only when a baseline was applied or they occur.
BASELINE_VERDICTS = frozenset({Verdict.XFAIL, Verdict.XPASS})
#: Verdicts that make a run fail: a broken MUST, something the harness could not judge, or a stale
#: baseline entry (the baseline must be tightened, or it would hide the next regression of that case).
BLOCKING = frozenset({Verdict.FAIL, Verdict.ERROR, Verdict.XPASS})
#: The check's own verdicts a baseline entry turns into XFAIL. An ERROR stays ERROR: the harness could
#: not judge it, and a baseline cannot excuse what nobody saw.
EXCUSABLE = frozenset({Verdict.FAIL, Verdict.WARN})

#: Tracks of a requirement row (`conformance.model.requirements.Track`) whose cases fail a run only when
#: claimed: a feature its revision marks experimental (2025-11-25 tasks) or a protocol extension.
#: SEP-1730's SDK tiers require neither, and the official suite runs them `not_scored`; so such a case
#: shows its true verdict, counted apart, and blocks only when the user claims the feature
#: (`--experimental`, a target's `experimental = true`, or naming a suite whose pack says so).
UNSCORED_TRACKS = frozenset({"experimental", "extension"})

#: Requirement levels, strongest first (the schema's enum and the HTML filter's order).
LEVELS = ("MUST", "MUST NOT", "MUST (schema)", "implied", "SHOULD", "SHOULD NOT", "MAY", "info")
#: What each level means, in a few words: the HTML report's level filter shows it as a tooltip.
LEVEL_MEANING: dict[str, str] = {
    "MUST": "an RFC 2119 MUST: a miss is a FAIL",
    "MUST NOT": "an RFC 2119 MUST NOT: a miss is a FAIL",
    "MUST (schema)": "a constraint of a schema the profile publishes: a miss is a FAIL",
    "implied": "stated as fact without an RFC 2119 keyword: a miss is a WARN (--strict: FAIL)",
    "SHOULD": "an RFC 2119 SHOULD: a miss is a WARN (--strict: FAIL)",
    "SHOULD NOT": "an RFC 2119 SHOULD NOT: a miss is a WARN (--strict: FAIL)",
    "MAY": "an RFC 2119 MAY: a miss is a WARN",
    "info": "guidance, not judged against a server",
}
#: Levels whose miss is a FAIL: an RFC 2119 MUST or MUST NOT, or a constraint of a schema the profile
#: publishes (`MUST (schema)`, the row's source names the schema and keyword). Every other level's miss is
#: a WARN.
FAILING_LEVELS = frozenset({"MUST", "MUST NOT", "MUST (schema)"})
#: Levels whose miss is a WARN that `--strict` turns into a FAIL: a strict run holds every SHOULD as a MUST.
#: "implied" (a profile states it as fact, shows it in an example, or puts it in a tool description,
#: without an RFC 2119 keyword) is no keyword a server agreed to, so it blocks no run unless strict; a
#: row whose requirement a MUST or a published schema makes unavoidable is levelled MUST or
#: MUST (schema) instead, naming that sentence or keyword in its source.
STRICT_LEVELS = frozenset({"SHOULD", "SHOULD NOT", "implied"})

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: SIGTERM (what CI sends on a timeout): 128 + 15, as a shell reports a process the signal ended, so a
#: wrapper tells a user's Ctrl-C (130) from a CI's stop; the partial report is written either way.
EXIT_TERMINATED = 143
#: The exit codes of a run stopped by a signal, each with its footer reason.
STOPPED: dict[int, str] = {EXIT_INTERRUPTED: "interrupted", EXIT_TERMINATED: "terminated"}
#: What each exit code means, in one sentence: every view's result line (the HTML banner, the
#: Markdown's first line, the terminal summary's last) reads it here; README.md's table says the same.
EXIT_MEANING: dict[int, str] = {
    EXIT_OK: "every MUST-level check passed (WARN and SKIP do not fail a run), and at least one case "
    "judged something",
    EXIT_FAILED: "a check FAILed or could not be judged (ERROR), a baseline entry is stale (XPASS), the run "
    "did not complete, or no case judged anything",
    EXIT_USAGE: "usage or configuration error: a bad option, suite or target file (no report is written)",
    EXIT_UNREACHABLE: "a target could not be reached at all; the report holds the ERROR with its evidence",
    EXIT_INTERRUPTED: "the run was interrupted; the partial report is written and marked incomplete",
    EXIT_TERMINATED: "the run was terminated (SIGTERM); the partial report is written and marked incomplete",
}

#: Verdicts worst first: views list the cases that did not pass in this order (FAIL, ERROR and XPASS
#: block the run, WARN is a missed SHOULD), and a requirement's matrix cell (report.html, `compare`)
#: shows its worst case. SKIP comes last because it judged nothing: a cell is SKIP only when none of
#: its cases was judged.
WORST_FIRST: tuple[Verdict, ...] = (
    Verdict.FAIL,
    Verdict.ERROR,
    Verdict.XPASS,
    Verdict.WARN,
    Verdict.XFAIL,
    Verdict.PASS,
    Verdict.SKIP,
)

#: Why a case is SKIP, as every view counts SKIPs: a row that does not apply to what the server
#: declares, a case the run's options held back (its `option` says which would judge it), a case blocked
#: by another case's finding (one defect, one verdict), and a case that found nothing to judge.
SkipKind = Literal["not-applicable", "needs-option", "blocked", "nothing-to-judge"]
SKIP_KINDS: dict[str, str] = {
    "needs-option": "not judged under this run's options",
    "not-applicable": "not applicable: a capability or feature the server does not declare",
    "blocked": "blocked by another case's finding",
    "nothing-to-judge": "nothing to judge",
}

#: A run's result in words, one per way it can end (`result`).
Result = Literal["passed", "failed", "not judged", "unreachable", "interrupted", "incomplete"]


def level_fails(level: str) -> bool:
    """Whether a miss of a requirement at this level is a FAIL (MUST, MUST NOT, MUST (schema)) rather
    than a WARN (SHOULD, implied, MAY: a FAIL only under `--strict` for SHOULD and implied)."""
    return level in FAILING_LEVELS


def miss_verdict(level: str, strict: bool = False) -> Verdict:
    """FAIL or WARN for a miss of a requirement at `level`; under `--strict` a missed SHOULD or implied
    requirement is a FAIL."""
    if level_fails(level) or (strict and level in STRICT_LEVELS):
        return Verdict.FAIL
    return Verdict.WARN


def unscored(track: str, claimed: bool) -> str | None:
    """The track that keeps a case on a row of `track` from failing the run (`UNSCORED_TRACKS`), or
    None when the case counts: a stable row, or a track the user claimed."""
    return track if track in UNSCORED_TRACKS and not claimed else None


def gate(verdict: str, unscored: str | None = None) -> Verdict:
    """The verdict a gate reads (the exit code, pytest, JUnit, SARIF levels, badges): the case's own,
    except that an unscored case that would block (an experimental FAIL, say) gates as a WARN, since
    it is shown with its true verdict but fails no run unclaimed."""
    if unscored and verdict in BLOCKING:
        return Verdict.WARN
    return Verdict(verdict)


def should_miss_verdict(strict: bool) -> Verdict:
    """A SHOULD-level aspect of a row missed while the case went on (`ctx.miss_should`): WARN, and a
    FAIL under `--strict`, as a missed SHOULD row is."""
    return Verdict.FAIL if strict else Verdict.WARN


def judged_at(level: str, verdict: str, how: Literal["miss", "weak", "should"]) -> str | None:
    """The level a FAIL or WARN was judged at when it differs from its row's `level` (every view shows
    it beside the row's): "weak evidence or no MUST" for a WARN met on weak evidence, or on an answer no
    MUST of the row covers, under a FAIL-level row, "SHOULD"
    for a SHOULD-level aspect of such a row missed (`ctx.miss_should`), "--strict" appended when the
    strict run made a SHOULD-level miss a FAIL. None when the verdict is the row's own level's."""
    if verdict not in (Verdict.FAIL, Verdict.WARN):
        return None
    if how == "weak":
        return "weak evidence or no MUST" if level_fails(level) else None
    if how == "should":
        if level_fails(level):
            return "SHOULD, --strict" if verdict == Verdict.FAIL else "SHOULD"
        return None
    return f"{level}, --strict" if verdict == Verdict.FAIL and not level_fails(level) else None


def outcome_verdict(said: Verdict | None, level: str, strict: bool = False) -> Verdict:
    """The verdict of a case its check ended with an outcome: the verdict the outcome always is (SKIP,
    WARN for weak evidence, ERROR when nothing could be judged), or for a miss (`said` None) FAIL or
    WARN by the row's `level` (`miss_verdict`)."""
    return miss_verdict(level, strict) if said is None else said


def finished_verdict(*, should_missed: bool, weak: bool, strict: bool = False) -> Verdict:
    """The verdict of a case its check ended by returning: PASS, unless it missed a SHOULD-level
    aspect on the way (`should_miss_verdict`) or judged on weak evidence (WARN)."""
    if should_missed:
        return should_miss_verdict(strict)
    return Verdict.WARN if weak else Verdict.PASS


def baselined(verdict: str) -> Verdict | None:
    """What a matching baseline entry makes of a check's verdict: XFAIL for an excusable one, XPASS
    for a PASS (the entry is stale), None (unchanged) for SKIP and ERROR."""
    if verdict in EXCUSABLE:
        return Verdict.XFAIL
    if verdict == Verdict.PASS:
        return Verdict.XPASS
    return None


def nothing_judged(verdicts: Iterable[str]) -> bool:
    """Every case is a SKIP: the run judged nothing, so it cannot vouch for the server (a fuzz run with
    no tool it may call, a profile the server does not show). No case at all is not this."""
    seen = list(verdicts)
    return bool(seen) and all(v == Verdict.SKIP for v in seen)


def exit_code(*, unreachable: bool, complete: bool, verdicts: Iterable[str]) -> int:
    """0: every MUST-level check passed; 1: a blocking verdict (FAIL, ERROR, XPASS), an incomplete run,
    or a run that judged nothing; 3: a target unreachable. 130 (interrupted) and 143 (terminated) are
    the CLI's to stamp."""
    if unreachable:
        return EXIT_UNREACHABLE
    if not complete:
        return EXIT_FAILED
    seen = list(verdicts)
    if nothing_judged(seen) or any(v in BLOCKING for v in seen):
        return EXIT_FAILED
    return EXIT_OK


def result(
    *,
    unreachable: bool,
    complete: bool,
    interrupted: bool,
    verdicts: Iterable[str],
    terminated: bool = False,
) -> tuple[Result, int]:
    """The run's result in words and its exit code (`exit_code`, or 130 when it was interrupted, 143
    when terminated): interrupted (either signal), unreachable, incomplete and not judged say why a run
    that may hold no FAIL still fails; otherwise it failed (a blocking verdict) or passed."""
    if terminated:
        return "interrupted", EXIT_TERMINATED
    if interrupted:
        return "interrupted", EXIT_INTERRUPTED
    seen = list(verdicts)
    code = exit_code(unreachable=unreachable, complete=complete, verdicts=seen)
    if unreachable:
        return "unreachable", code
    if not complete:
        return "incomplete", code
    if nothing_judged(seen):
        return "not judged", code
    return ("failed" if code != EXIT_OK else "passed"), code


PytestOutcome = Literal["passed", "warned", "skipped", "xfailed", "failed"]
#: How each verdict shows as a pytest item (the pytest plugin): WARN passes with a warning, XFAIL is
#: pytest's own xfail, every blocking verdict fails the item.
PYTEST_OUTCOME: dict[Verdict, PytestOutcome] = {
    Verdict.PASS: "passed",
    Verdict.WARN: "warned",
    Verdict.SKIP: "skipped",
    Verdict.XFAIL: "xfailed",
    Verdict.FAIL: "failed",
    Verdict.ERROR: "failed",
    Verdict.XPASS: "failed",
}

JunitElement = Literal["failure", "error", "skipped", "system-out", ""]
#: How each verdict shows in JUnit XML: FAIL and XPASS are failures, ERROR an error, SKIP and XFAIL
#: skipped (as pytest reports an xfail), WARN passes with its detail on system-out.
JUNIT_ELEMENT: dict[Verdict, JunitElement] = {
    Verdict.PASS: "",
    Verdict.FAIL: "failure",
    Verdict.XPASS: "failure",
    Verdict.ERROR: "error",
    Verdict.SKIP: "skipped",
    Verdict.XFAIL: "skipped",
    Verdict.WARN: "system-out",
}

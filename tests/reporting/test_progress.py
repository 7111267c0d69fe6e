"""Live progress is quiet by default: a FAIL or ERROR shows as it happens, the rest waits for the
summary; `-v` shows every case that did not pass; colour and symbols only on a terminal that wants
them (issue 32: the outcome at a glance)."""

from __future__ import annotations

import io

import pytest

from conformance.engine.events import CaseFinished, RunFinished, TargetStarted
from conformance.engine.results import CaseResult
from conformance.model.verdicts import Verdict
from conformance.reporting.progress import Progress


class Terminal(io.StringIO):
    """A stream that says it is a UTF-8 terminal, as a user's is."""

    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def _case(verdict: Verdict, name: str, unscored: str | None = None) -> CaseFinished:
    return CaseFinished(
        CaseResult(
            key=f"base.{name}[stdio@2025-11-25]", check=f"base.{name}", suite="base",
            requirement="BASE-X-001", level="MUST", title="t", target=0, transport="stdio",
            revision="2025-11-25", verdict=verdict,
            message=f"{name} said so", duration=0.0, unscored=unscored,
        )
    )  # fmt: skip


def _feed(progress: Progress) -> None:
    progress.handle(TargetStarted(0, {"spec": "stdio:server"}))
    for event in (
        _case(Verdict.PASS, "a"),
        _case(Verdict.WARN, "b"),
        _case(Verdict.SKIP, "c"),
        _case(Verdict.FAIL, "d"),
        _case(Verdict.FAIL, "e", unscored="extension"),
        _case(Verdict.ERROR, "f"),
    ):
        progress.handle(event)
    progress.handle(RunFinished(True))


def test_by_default_only_what_fails_the_run_shows_as_it_happens() -> None:
    out = io.StringIO()
    _feed(Progress(out))
    lines = out.getvalue().splitlines()
    assert lines[0] == "» target 0: stdio:server"
    assert [line.split()[0] for line in lines[1:]] == ["FAIL", "ERROR"]
    assert "\033" not in out.getvalue(), "no colour and no status line off a terminal"


def test_verbose_shows_every_case_that_did_not_pass_and_quiet_nothing() -> None:
    out = io.StringIO()
    _feed(Progress(out, mode="verbose"))
    assert [line.split()[0] for line in out.getvalue().splitlines()[1:]] == [
        "WARN",
        "SKIP",
        "FAIL",
        "FAIL",
        "ERROR",
    ]
    assert "[extension, not scored]" in out.getvalue()
    quiet = io.StringIO()
    _feed(Progress(quiet, quiet=True))
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("no_color", [False, True])
def test_a_terminal_gets_a_status_line_colour_and_symbols_unless_no_color(
    monkeypatch: pytest.MonkeyPatch, no_color: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    out = Terminal()
    _feed(Progress(out))
    text = out.getvalue()
    assert "6 cases" in text and "✓1" in text and "stdio@2025-11-25" in text
    assert ("\033[31;1mFAIL" in text) is not no_color
    assert text.endswith("\r\033[K"), "the status line is cleared before the summary"

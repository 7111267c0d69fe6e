"""Live progress on stderr: quiet by default, so the outcome is what a run leaves on the screen.

A terminal gets one status line updated in place (the cases done, counted by verdict, and the target,
transport and revision at work), and each FAIL or ERROR as it happens; everything else waits for the
summary, which groups cases into findings. `-v` prints every case that did not pass as it finishes;
`--quiet` prints nothing. Colour and symbols only on a terminal that wants them: `NO_COLOR` (any value)
or `TERM=dumb` turns colour off, and a stream that is not a terminal (CI logs, a pipe) gets plain
lines and no status line.
"""

from __future__ import annotations

import os
import sys
from typing import Literal, TextIO

from conformance.engine.events import CaseFinished, Event, RunFinished, TargetFinished, TargetStarted
from conformance.engine.results import CaseResult
from conformance.model.verdicts import BLOCKING, Verdict, gate
from conformance.text import by_cause, visible

Mode = Literal["quiet", "default", "verbose"]

#: ANSI colours of each verdict's word (SGR codes), and its symbol where the terminal can show it.
COLOURS = {
    "PASS": "32",
    "FAIL": "31;1",
    "ERROR": "35;1",
    "WARN": "33",
    "SKIP": "2",
    "XFAIL": "2",
    "XPASS": "31",
}
SYMBOLS = {"PASS": "✓", "FAIL": "✗", "ERROR": "‼", "WARN": "!", "SKIP": "·", "XFAIL": "x", "XPASS": "✗"}
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _t(text: str) -> str:
    """A server's control characters (ANSI escapes included) must not drive the user's terminal, nor
    its bidi controls reorder a line: each is shown as its escape (`text.visible`)."""
    return visible(text)


class Style:
    """How verdicts look on one stream: coloured and with symbols on a terminal that wants them."""

    def __init__(self, stream: TextIO) -> None:
        self.tty = stream.isatty()
        self.colour = self.tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        encoding = (getattr(stream, "encoding", "") or "").lower().replace("-", "")
        self.symbols = self.tty and encoding in ("utf8", "utf_8")

    def verdict(self, verdict: str, width: int = 5) -> str:
        word = f"{verdict:{width}}"
        return f"\033[{COLOURS[verdict]}m{word}\033[0m" if self.colour and verdict in COLOURS else word

    def tally(self, counts: dict[str, int]) -> str:
        shown = [v for v in ("PASS", "FAIL", "WARN", "SKIP", "ERROR") if counts.get(v)]
        if self.symbols:
            return " ".join(self._paint(v, f"{SYMBOLS[v]}{counts[v]}") for v in shown)
        return " ".join(f"{v} {counts[v]}" for v in shown)

    def _paint(self, verdict: str, text: str) -> str:
        return f"\033[{COLOURS[verdict]}m{text}\033[0m" if self.colour else text


class Progress:
    """The run's live output (a `Sink` of the engine's events)."""

    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, mode: Mode | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.style = Style(self.stream)
        self.tty = self.style.tty
        self.mode: Mode = mode or ("quiet" if quiet else "default")
        self.done = 0
        self.counts: dict[str, int] = {}
        self._status = False

    def _line(self, text: str) -> None:
        self._clear()
        self.stream.write(text + "\n")
        self.stream.flush()

    def _clear(self) -> None:
        if self._status:
            self.stream.write("\r\033[K")
            self._status = False

    def handle(self, event: Event) -> None:
        if self.mode == "quiet":
            return
        if isinstance(event, TargetStarted):
            self._line(_t(f"» target {event.index}: {event.info['spec']}"))
        elif isinstance(event, TargetFinished):
            spoken = ", ".join(event.info.get("revisions_spoken") or []) or "none"
            self._line(_t(f"  revisions spoken: {spoken}"))
            if event.info.get("unreachable"):
                return  # its connect ERROR said why, one line per cause
            unspoken = [
                (str(probe.get("revision")), (probe.get("message") or "not spoken").splitlines()[0])
                for probe in event.info.get("probe") or []
                if not probe.get("spoken")
            ]
            for line in by_cause((revision, why.removeprefix("not spoken: ")) for revision, why in unspoken):
                self._line(_t(f"  not spoken: {line}"))
        elif isinstance(event, CaseFinished):
            self._case(event)
        elif isinstance(event, RunFinished):
            self._clear()
            self.stream.flush()

    def _case(self, event: CaseFinished) -> None:
        result = event.result
        self.done += 1
        self.counts[result.verdict] = self.counts.get(result.verdict, 0) + 1
        shown = result.verdict != Verdict.PASS if self.mode == "verbose" else self._blocks(result)
        if shown:
            first = result.message.splitlines()[0][:140] if result.message else ""
            apart = f"  [{result.unscored}, not scored]" if result.unscored else ""
            self._line(f"  {self.style.verdict(result.verdict)} {_t(result.key)}  {_t(first)}{apart}")
            if result.verdict == Verdict.ERROR and result.revision == "any":  # a target not reached
                for more in result.message.splitlines()[1:6]:
                    self._line(_t(f"        {more[:140]}"))
        if self.tty:
            spin = SPINNER[self.done % len(SPINNER)] if self.style.symbols else "-"
            where = f"target {result.target} {result.transport}@{result.revision}  {result.check}"
            status = f"{spin} {self.done} cases  {self.style.tally(self.counts)}  {_t(where[:70])}"
            self.stream.write("\r\033[K" + status)
            self.stream.flush()
            self._status = True

    @staticmethod
    def _blocks(result: CaseResult) -> bool:
        """A case that fails the run (FAIL, ERROR) shows as it happens; the rest waits for the summary."""
        return gate(result.verdict, result.unscored) in BLOCKING

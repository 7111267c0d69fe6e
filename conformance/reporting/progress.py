"""Live progress on stderr: a line updated in place on a terminal, non-PASS cases as they happen."""

from __future__ import annotations

import sys
from typing import TextIO

from conformance.engine.events import CaseFinished, Event, TargetFinished, TargetStarted
from conformance.model.verdicts import Verdict
from conformance.text import by_cause, visible


def _t(text: str) -> str:
    """A server's control characters (ANSI escapes included) must not drive the user's terminal, nor
    its bidi controls reorder a line: each is shown as its escape (`text.visible`)."""
    return visible(text)


class Progress:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.done = 0
        self.counts: dict[str, int] = {}

    def _line(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def handle(self, event: Event) -> None:
        if self.quiet:
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
            result = event.result
            self.done += 1
            self.counts[result.verdict] = self.counts.get(result.verdict, 0) + 1
            if result.verdict != Verdict.PASS:
                said = result.message.splitlines() or [""]
                self._line(_t(f"  {result.verdict:5} {result.key}  {said[0][:140]}"))
                if result.verdict == Verdict.ERROR and result.revision == "any":  # a target not reached
                    for more in said[1:6]:
                        self._line(_t(f"        {more[:140]}"))
            if self.tty:
                tally = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
                self.stream.write(f"\r\033[K  [{self.done}] {tally}  {_t(result.key[:60])}")
                self.stream.flush()

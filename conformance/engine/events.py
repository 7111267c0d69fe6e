"""Events of a run, fed to independent sinks (the report builder, the progress display).

A sink that raises is reported once and detached; it never stops the run or the other sinks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.engine.results import CaseResult


@dataclass
class RunStarted:
    header: dict[str, Any]


@dataclass
class TargetStarted:
    index: int
    info: dict[str, Any]


@dataclass
class TargetFinished:
    index: int
    info: dict[str, Any]


@dataclass
class CaseFinished:
    result: CaseResult


@dataclass
class RunFinished:
    complete: bool
    reason: str = ""


Event = RunStarted | TargetStarted | TargetFinished | CaseFinished | RunFinished


class Sink(Protocol):
    def handle(self, event: Event) -> None: ...


class Fanout:
    def __init__(self, sinks: list[Sink]) -> None:
        self.sinks = list(sinks)

    def emit(self, event: Event) -> None:
        for sink in list(self.sinks):
            try:
                sink.handle(event)
            except Exception as exc:  # a broken view must not lose the run
                print(
                    f"mcp-conformance: {type(sink).__name__} failed and was detached: {exc}", file=sys.stderr
                )
                self.sinks.remove(sink)

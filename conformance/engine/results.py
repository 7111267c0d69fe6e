"""Verdicts and case results: the atoms of the canonical report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

VERDICTS = ("PASS", "FAIL", "WARN", "SKIP", "ERROR")
#: Verdicts that make a run fail: a broken MUST, or something the harness could not judge.
BLOCKING = frozenset({"FAIL", "ERROR"})


@dataclass
class CaseResult:
    key: str
    check: str
    suite: str
    requirement: str
    level: str
    title: str
    target: int
    transport: str
    revision: str
    verdict: str
    message: str
    duration: float
    evidence: dict[str, Any] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration"] = round(self.duration, 6)
        return data


def case_key(check_id: str, transport: str, revision: str, target: int) -> str:
    """A stable ID across runs: suite check, transport, revision (and the target's index when > 0)."""
    suffix = f"#{target}" if target else ""
    return f"{check_id}[{transport}@{revision}]{suffix}"

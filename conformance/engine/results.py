"""Verdicts and case results: the atoms of the canonical report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The checks' own verdicts, then the two a baseline of expected failures turns them into (never a check's):
#: XFAIL is a listed FAIL or WARN, XPASS a listed case that now passes (a stale entry).
VERDICTS = ("PASS", "FAIL", "WARN", "SKIP", "ERROR", "XFAIL", "XPASS")
#: Verdicts that make a run fail: a broken MUST, something the harness could not judge, or a stale
#: baseline entry (the baseline must be tightened, or it would hide the next regression of that case).
BLOCKING = frozenset({"FAIL", "ERROR", "XPASS"})


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
    #: The key of the case whose verdict left this one nothing to judge (a SKIP): the server broke a
    #: transport rule in the very answer this case needed, or does not serve what the case reads.
    #: Absent from the report when None.
    blocked_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration"] = round(self.duration, 6)
        if data["blocked_by"] is None:
            del data["blocked_by"]
        return data


def case_key(check_id: str, transport: str, revision: str, target: int) -> str:
    """A stable ID across runs: suite check, transport, revision (and the target's index when > 0)."""
    suffix = f"#{target}" if target else ""
    return f"{check_id}[{transport}@{revision}]{suffix}"

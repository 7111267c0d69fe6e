"""The canonical report: one JSON document per run, built from events; every view derives from it.

It is written first and atomically, so a failing view writer can never lose it, and it is written
on Ctrl-C too, marked incomplete.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from conformance import __version__, verdicts
from conformance.engine.events import (
    CaseFinished,
    Event,
    RunFinished,
    RunStarted,
    TargetFinished,
    TargetStarted,
)
from conformance.text import readable
from conformance.verdicts import EXIT_INTERRUPTED, VERDICTS

FORMAT = "mcp-conformance-report"
FORMAT_VERSION = 1


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ReportBuilder:
    """A sink that accumulates the canonical report."""

    def __init__(self, run_id: str, header: dict[str, Any]) -> None:
        self.report: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "header": {
                "run_id": run_id,
                "harness": {"name": "mcp-conformance", "version": __version__},
                "started": now_iso(),
                **header,
            },
            "targets": [],
            "cases": [],
            "footer": {"complete": False, "reason": "running"},
        }

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.report["header"].update(event.header)
        elif isinstance(event, TargetStarted):
            self.report["targets"].append(dict(event.info))
        elif isinstance(event, TargetFinished):
            self.report["targets"][event.index] = dict(event.info)
        elif isinstance(event, CaseFinished):
            self.report["cases"].append(event.result.as_dict())
        elif isinstance(event, RunFinished):
            self.finish(event.complete, event.reason)

    def finish(self, complete: bool, reason: str = "") -> None:
        self.report["footer"] = {
            "finished": now_iso(),
            "complete": complete,
            "reason": reason or ("complete" if complete else "interrupted"),
            "totals": totals(self.report["cases"]),
        }


def totals(cases: list[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(case["verdict"] for case in cases)
    return {str(verdict): counts.get(verdict, 0) for verdict in VERDICTS} | {"cases": len(cases)}


def nothing_judged(report: dict[str, Any]) -> bool:
    """Every case is a SKIP: the run judged nothing, so it cannot vouch for the server (a fuzz run
    with no tool it may call, a profile the server does not show)."""
    return verdicts.nothing_judged(case["verdict"] for case in report["cases"])


def exit_code(report: dict[str, Any]) -> int:
    """The report's exit code by the verdict module's rule (`verdicts.exit_code`): 0 passed, 1 a
    blocking verdict, an incomplete run or nothing judged, 3 a target unreachable."""
    return verdicts.exit_code(
        unreachable=any(target.get("unreachable") for target in report["targets"]),
        complete=bool(report["footer"].get("complete")),
        verdicts=(case["verdict"] for case in report["cases"]),
    )


def refresh(report: dict[str, Any]) -> dict[str, Any]:
    """Recompute totals and the exit code after cases changed (a baseline applied, reports merged),
    so the footer can never disagree with the cases it summarises. An interrupted run keeps 130."""
    footer = report["footer"]
    footer["totals"] = totals(report["cases"])
    if footer.get("exit_code") != EXIT_INTERRUPTED:
        footer["exit_code"] = exit_code(report)
    return report


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=1, default=readable)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

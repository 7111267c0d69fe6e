"""The canonical report: one JSON document per run, built from events; every view derives from it.

It is written first and atomically, so a failing view writer can never lose it, and it is written
on Ctrl-C too, marked incomplete.
"""

from __future__ import annotations

import base64
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
from conformance.text import Masker, masker, readable
from conformance.verdicts import EXIT_INTERRUPTED, VERDICTS

FORMAT = "mcp-conformance-report"
FORMAT_VERSION = 1


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ReportBuilder:
    """A sink that accumulates the canonical report.

    Given the run's `secrets`, it masks them once more in everything a server's text can reach (the
    targets' details, each case's message, evidence and transcript) as it takes them in, and again
    over the whole report when it is finished (`mask_report`): the engine masks at the source, this
    is the last line of defence for anything a check wrote where the source masking could not see."""

    def __init__(self, run_id: str, header: dict[str, Any], secrets: tuple[str, ...] = ()) -> None:
        self.masker = masker(tuple(secrets))
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
            self.report["targets"].append(self.masker.value(dict(event.info)))
        elif isinstance(event, TargetFinished):
            self.report["targets"][event.index] = self.masker.value(dict(event.info))
        elif isinstance(event, CaseFinished):
            self.report["cases"].append(mask_case(self.masker, event.result.as_dict()))
        elif isinstance(event, RunFinished):
            self.finish(event.complete, event.reason)

    def finish(self, complete: bool, reason: str = "") -> None:
        mask_report(self.masker, self.report)
        self.report["footer"] = {
            "finished": now_iso(),
            "complete": complete,
            "reason": reason or ("complete" if complete else "interrupted"),
            "totals": totals(self.report["cases"]),
        }


def mask_case(masker: Masker, case: dict[str, Any]) -> dict[str, Any]:
    """`case` (as the report holds it) with secrets masked in what a server's text can reach: its
    message, its evidence (as the report will write it: bytes and other values as their text) and its
    transcript (a non-UTF-8 entry's bytes masked under their base64)."""
    if not masker:
        return case
    case["message"] = masker.text(case["message"])
    evidence = json.loads(json.dumps(case.get("evidence") or {}, ensure_ascii=False, default=readable))
    case["evidence"] = masker.value(evidence)
    entries = []
    for entry in case.get("transcript") or []:
        entry = {k: (v if k == "base64" else masker.value(v)) for k, v in entry.items()}
        if "base64" in entry:
            entry["base64"] = base64.b64encode(masker.data(base64.b64decode(entry["base64"]))).decode()
        entries.append(entry)
    case["transcript"] = entries
    return case


def mask_report(masker: Masker, report: dict[str, Any]) -> None:
    """Mask secrets once more in every target's details and every case's message and evidence (the
    transcripts were masked as they were recorded, and by the builder as each case came in)."""
    if not masker:
        return
    report["targets"] = [masker.value(target) for target in report["targets"]]
    for case in report["cases"]:
        case["message"] = masker.text(case["message"])
        case["evidence"] = masker.value(case.get("evidence") or {})


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

"""The canonical report: one JSON document per run, built from events; every view derives from it.

It is written first and atomically, so a failing view writer can never lose it, and it is written
on Ctrl-C and SIGTERM too, marked incomplete.

It is bounded, whatever a server sends: each case's transcript, evidence and message are cut to a
per-case budget (`CaseBudget`) drawn from a per-run budget (`RUN_BUDGET`), so a notification flood
cannot grow the report past the figure README.md states. A cut transcript keeps its first and last
entries around one marker entry saying what was left out, the form the wire log's own cut leaves
(`adapters.transcript.omitted_marker`); a cut evidence value keeps its head and tail, with the same
count in words.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import os
import secrets
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from conformance import __version__
from conformance.adapters.transcript import omitted_marker, omitted_of
from conformance.engine.events import (
    CaseFinished,
    Event,
    RunFinished,
    RunStarted,
    TargetFinished,
    TargetStarted,
)
from conformance.model import verdicts
from conformance.model.verdicts import VERDICTS
from conformance.text import Masker, masker, readable

#: The report's format and its version: what this module writes and `model.Report` reads.
FORMAT = "mcp-conformance-report"
FORMAT_VERSION = 1


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: Bytes (as written) of transcripts, evidence and messages all cases of one run may keep together.
RUN_BUDGET = 10 * 1024 * 1024
#: What README.md promises of report.json at these defaults, whatever a server sends: the run budget,
#: plus each case's fixed fields and floor (a few KB each) for a run of up to 1,000 cases.
REPORT_BOUND = 20 * 1000 * 1000
#: Bytes one case may keep of its transcript, and of its evidence and message, while the run budget lasts.
CASE_TRANSCRIPT_BYTES = 512 * 1024
CASE_EVIDENCE_BYTES = 256 * 1024
#: Entries one case's transcript keeps at most (half from its start, half from its end).
CASE_TRANSCRIPT_ENTRIES = 200
#: What every case keeps even once the run budget is spent: its first and last entries and a short
#: message and evidence, so the report still shows where each case went wrong.
CASE_FLOOR_BYTES = 4 * 1024
#: Bytes of a case's message at most, as written (the views show its first line); 1 KiB once the run
#: budget is spent.
MESSAGE_BYTES = 16 * 1024
#: Items of one list (members of one object) an evidence value keeps at most, from its start and end.
VALUE_ITEMS = 100
#: Characters a target's server-given strings (serverInfo, probe messages) keep.
TARGET_TEXT_CHARS = 4 * 1024


@dataclass
class CaseBudget:
    """What one case may keep (bytes as written, ensure_ascii=False, before indentation)."""

    transcript_bytes: int = CASE_TRANSCRIPT_BYTES
    transcript_entries: int = CASE_TRANSCRIPT_ENTRIES
    evidence_bytes: int = CASE_EVIDENCE_BYTES


def _size(value: Any, limit: int | None = None) -> int:
    """Bytes of `value` as the report writes it, plus a little for the indentation of its lines. With
    `limit`, counting stops early: any result above `limit` means only "too large" (so a flood's
    megabytes are never serialised just to learn that they do not fit)."""
    if limit is not None:
        if isinstance(value, str) and len(value) > limit:
            return limit + 1  # every character is a byte at least
        if isinstance(value, dict | list | tuple):
            total = 2
            items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
            for key, item in items:
                total += (len(str(key)) + 8 if key is not None else 4) + _size(item, limit - total)
                if total > limit:
                    return limit + 1
            return total
    text = json.dumps(value, ensure_ascii=False, default=readable)
    return len(text.encode("utf-8", "surrogatepass")) + 4 * text.count(", ")


def _cut_text(text: str, limit: int) -> str:
    """`text` within `limit` characters: its head and tail around a count of what was left out."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - 60)
    head, tail = text[: keep - keep // 4], text[len(text) - keep // 4 :] if keep // 4 else ""
    left = len(text) - len(head) - len(tail)
    return f"{head}… [{left} characters left out of {len(text)}] …{tail}"


def bound_value(value: Any, limit: int) -> Any:
    """A JSON value that serialises within about `limit` bytes, of the same shape where it can: a long
    string keeps its head and tail, a long list its first and last items around a string counting the
    rest, an object its first members and a `…` member counting the rest."""
    if limit < 64:
        limit = 64
    if isinstance(value, str | bytes | bytearray | memoryview):
        text = value if isinstance(value, str) else readable(value)
        if len(text) * 6 + 2 <= limit:  # a character is 6 bytes at most as written (\u0000)
            return text
        if len(text) > limit:  # too long however it is written: measure only what may stay
            text = _cut_text(text, limit)
        size = _size(text)
        if size <= limit:
            return text
        # Escapes and multi-byte characters make the written size larger than the length.
        return _cut_text(text, max(16, int(len(text) * limit / size) - 8))
    if isinstance(value, dict):
        if _size(value, limit) <= limit:
            return value
        out: dict[str, Any] = {}
        spent = 2
        items = list(value.items())
        for n, (key, item) in enumerate(items):
            share = max(64, (limit - spent - 120) // max(1, min(4, len(items) - n)))
            cut = bound_value(item, share)
            size = _size(str(key)) + _size(cut) + 4
            if spent + size > limit - 80 or n >= VALUE_ITEMS:
                out["…"] = f"{len(items) - n} more members left out of {len(items)}"
                break
            out[str(key)] = cut
            spent += size
        return out
    if isinstance(value, list | tuple):
        items = list(value)
        if _size(items, limit) <= limit:
            return items
        head: list[Any] = []
        tail: list[Any] = []
        spent = 2 + 80
        share = max(64, limit // 8)
        i, j = 0, len(items) - 1
        while i <= j and len(head) + len(tail) < VALUE_ITEMS:
            cut = bound_value(items[i], share)
            size = _size(cut) + 2
            if spent + size > limit:
                break
            head.append(cut)
            spent += size
            i += 1
            if i > j:
                break
            cut = bound_value(items[j], share)
            size = _size(cut) + 2
            if spent + size > limit:
                break
            tail.append(cut)
            spent += size
            j -= 1
        left = j - i + 1
        if left <= 0:
            return head + tail[::-1]
        return [*head, f"… {left} items left out of {len(items)} …", *tail[::-1]]
    return value


def _entry_bytes(entry: dict[str, Any]) -> int:
    """Roughly the wire bytes an entry records (for the marker's count of what was left out)."""
    return int(entry.get("truncated_from") or 0) or len(entry.get("text") or "") + len(
        entry.get("base64") or ""
    )


def bound_transcript(entries: list[dict[str, Any]], budget: CaseBudget) -> list[dict[str, Any]]:
    """The entries within `budget`: the first and the last ones, each half of the budget, around one
    marker entry counting the entries (and their bytes) left out. An entry that is too large by itself
    keeps the head and tail of its text."""
    if not entries:
        return entries
    limit = max(CASE_FLOOR_BYTES // 2, budget.transcript_bytes)
    per_entry = max(512, limit // 4)
    markers = sum(1 for e in entries if omitted_of(e))  # an earlier cut's: not counted again
    if len(entries) - markers <= budget.transcript_entries and _size(entries, limit) <= limit:
        return entries

    def fit(entry: dict[str, Any]) -> dict[str, Any]:
        if _size(entry, per_entry) <= per_entry:
            return entry
        cut: dict[str, Any] = bound_value(entry, per_entry)
        return cut

    cap = max(2, budget.transcript_entries)
    head: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = []
    spent = 300  # the marker entry
    i, j = 0, len(entries) - 1
    while i <= j and len(head) + len(tail) < cap:
        took = False
        for side in (head, tail):
            if i > j or len(head) + len(tail) >= cap:
                break
            entry = fit(entries[i] if side is head else entries[j])
            size = _size(entry) + 8
            if spent + size > limit and (head or tail):
                continue
            side.append(entry)
            spent += size
            took = True
            if side is head:
                i += 1
            else:
                j -= 1
        if not took:
            break
    left = entries[i : j + 1]
    if not left:
        return head + tail[::-1]
    count = size = 0
    for entry in left:  # one pass: a flood leaves hundreds of thousands here
        counts = omitted_of(entry)  # an earlier cut's marker: the entries it stands for
        count += counts[0] if counts else 1
        size += counts[1] if counts else _entry_bytes(entry)
    marker = omitted_marker(left[0].get("t", 0), count, size, kept="last", why="report budget")
    return [*head, marker, *tail[::-1]]


def bound_case(case: dict[str, Any], budget: CaseBudget) -> dict[str, Any]:
    """A case's dict within `budget` (its transcript, evidence and message cut as needed)."""
    message = case.get("message")
    if isinstance(message, str):
        case["message"] = bound_value(message, min(MESSAGE_BYTES, max(1024, budget.evidence_bytes // 4)))
    evidence = case.get("evidence")
    if evidence:
        case["evidence"] = bound_value(evidence, max(CASE_FLOOR_BYTES // 2, budget.evidence_bytes))
    if case.get("transcript"):
        case["transcript"] = bound_transcript(list(case["transcript"]), budget)
    return case


class Budget:
    """The run's evidence budget: each case draws its `CaseBudget` from what is left, down to a floor."""

    def __init__(self, total: int = RUN_BUDGET) -> None:
        self.left = total

    def next_case(self) -> CaseBudget:
        share = max(CASE_FLOOR_BYTES, min(self.left, CASE_TRANSCRIPT_BYTES + CASE_EVIDENCE_BYTES))
        whole = CASE_TRANSCRIPT_BYTES + CASE_EVIDENCE_BYTES
        entries = (
            CASE_TRANSCRIPT_ENTRIES
            if self.left >= whole
            else max(4, CASE_TRANSCRIPT_ENTRIES * share // whole)
        )
        return CaseBudget(
            transcript_bytes=share * CASE_TRANSCRIPT_BYTES // whole,
            transcript_entries=entries,
            evidence_bytes=share * CASE_EVIDENCE_BYTES // whole,
        )

    def bound(self, case: dict[str, Any]) -> dict[str, Any]:
        case = bound_case(case, self.next_case())
        self.left -= sum(_size(case.get(k)) for k in ("transcript", "evidence", "message"))
        return case


def bound_cases(cases: list[dict[str, Any]], total: int = RUN_BUDGET) -> list[dict[str, Any]]:
    """Cases joined from several reports (the workers of `-j`) within one run budget."""
    budget = Budget(total)
    return [budget.bound(case) for case in cases]


def bound_target(info: dict[str, Any]) -> dict[str, Any]:
    """A target's entry with the strings a server gave (serverInfo, probe messages) cut."""
    out = dict(info)
    if isinstance(out.get("server_info"), dict):
        out["server_info"] = bound_value(out["server_info"], 4 * TARGET_TEXT_CHARS)
    if isinstance(out.get("probe"), list):
        out["probe"] = [
            {**p, "message": _cut_text(p["message"], TARGET_TEXT_CHARS)}
            if isinstance(p, dict) and isinstance(p.get("message"), str)
            else p
            for p in out["probe"]
        ]
    if isinstance(out.get("unreachable"), str):
        out["unreachable"] = _cut_text(out["unreachable"], TARGET_TEXT_CHARS)
    return out


class ReportBuilder:
    """A sink that accumulates the canonical report, each case and target within the run's budget.

    Given the run's `secrets`, it masks them once more in everything a server's text can reach (the
    targets' details, each case's message, evidence and transcript) as it takes them in, before it cuts
    anything to the budget (a cut must never leave half a secret), and again over the whole report when
    it is finished (`mask_report`): the engine masks at the source, this is the last line of defence for
    anything a check wrote where the source masking could not see."""

    def __init__(self, run_id: str, header: dict[str, Any], secrets: tuple[str, ...] = ()) -> None:
        self.masker = masker(tuple(secrets))
        self.budget = Budget()
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
            self.report["targets"].append(bound_target(self.masker.value(dict(event.info))))
        elif isinstance(event, TargetFinished):
            self.report["targets"][event.index] = bound_target(self.masker.value(dict(event.info)))
        elif isinstance(event, CaseFinished):
            result = event.result
            if len(result.transcript) > CASE_TRANSCRIPT_ENTRIES:
                # Cut before `as_dict`, which copies every entry: a flood's thousands need no copy.
                entries = cast(list[dict[str, Any]], list(result.transcript))  # the engine's own dicts
                cut = bound_transcript(entries, self.budget.next_case())
                result = dataclasses.replace(result, transcript=cut)
            self.report["cases"].append(self.budget.bound(mask_case(self.masker, result.as_dict())))
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
        apart = unscored_totals(self.report["cases"])
        if apart:
            self.report["footer"]["unscored"] = apart


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


def unscored_totals(cases: list[dict[str, Any]]) -> dict[str, int]:
    """Counts by verdict (and `cases`) of the cases that fail no run unclaimed (`case["unscored"]`:
    an experimental feature or an extension), which `totals` counts too; empty when there are none."""
    apart = [case for case in cases if case.get("unscored")]
    return totals(apart) if apart else {}


def nothing_judged(report: Mapping[str, Any]) -> bool:
    """Every case is a SKIP: the run judged nothing, so it cannot vouch for the server (a fuzz run
    with no tool it may call, a profile the server does not show). The report being written and the
    model read back (`model.Report.nothing_judged`) both ask here."""
    return verdicts.nothing_judged(case["verdict"] for case in report["cases"])


def exit_code(report: Mapping[str, Any]) -> int:
    """The report's exit code by the verdict module's rule (`verdicts.exit_code`): 0 passed, 1 a
    blocking verdict, an incomplete run or nothing judged, 3 a target unreachable. The report being
    written and the model read back (`model.Report.exit_code`) both ask here."""
    return verdicts.exit_code(
        unreachable=any(target.get("unreachable") for target in report["targets"]),
        complete=bool(report["footer"].get("complete")),
        verdicts=(verdicts.gate(case["verdict"], case.get("unscored")) for case in report["cases"]),
    )


def refresh(report: dict[str, Any]) -> dict[str, Any]:
    """Recompute totals and the exit code after cases changed (a baseline applied, reports merged),
    so the footer can never disagree with the cases it summarises. A run stopped by a signal keeps 130
    (SIGINT) or 143 (SIGTERM)."""
    footer = report["footer"]
    footer["totals"] = totals(report["cases"])
    footer.pop("unscored", None)
    apart = unscored_totals(report["cases"])
    if apart:
        footer["unscored"] = apart
    if footer.get("exit_code") not in verdicts.STOPPED:
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

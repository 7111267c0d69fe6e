"""A baseline of expected failures: known FAILs that should not block a gate, until they are fixed.

A team adopting the harness on an existing server rarely fixes every FAIL at once; without a
baseline their CI stays red and the next regression hides among the known ones. A baseline lists case
IDs with reasons. `apply` turns a listed FAIL (or WARN) into XFAIL, which does not block, and a listed
case that now PASSes into XPASS, which does: the entry is stale and must be removed, or it would
silently excuse that case's next regression. An ERROR stays ERROR even when listed: the harness could
not judge it, and a baseline cannot excuse what nobody saw.

The file is JSON (no new dependency), validated by `baseline.schema.json`:

    {"format": "mcp-conformance-baseline", "format_version": 1,
     "expected_failures": [{"case": "base.rpc.id-echo", "reason": "tracked in #12"},
                           {"case": "base.tools.unique-names[http@2026-07-28]", "reason": "..."}]}

An entry names a check ID (every case of that check), or a case key with `[transport@revision]` (and
`#target` when the report has several targets). A client run's case keys end in `/scenario` (one check
judges every scenario it is played in): an entry names such a case by its key, with or without
`#target`, or `check/scenario` (every case of the check in that scenario).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.engine.results import key_parts
from conformance.model.verdicts import EXCUSABLE, Verdict, baselined
from conformance.reporting import canonical
from conformance.reporting.model import Case, Report, coerce

FORMAT = "mcp-conformance-baseline"
FORMAT_VERSION = 1
SCHEMA_ID = "urn:mcp-conformance:baseline:1"


class BaselineError(ValueError):
    """The baseline file is unreadable or malformed: a usage error (exit 2), never a silent no-op."""


@dataclass(frozen=True)
class Baseline:
    entries: dict[str, str]
    path: str = ""
    sha256: str = ""

    def match(self, case: Case | Mapping[str, Any]) -> str | None:
        """The most specific entry naming this case: its full key, its key without `#target`, (a client
        case) its check in its scenario, its check. `case` is the model's, or a case of the canonical
        JSON that `apply` rewrites."""
        key, check = (case.key, case.check) if isinstance(case, Case) else (case["key"], case["check"])
        for name in names_of(key, check):
            if name in self.entries:
                return name
        return None


def names_of(key: str, check: str) -> list[str]:
    """What a baseline entry may name a case by, most specific first: the key, the key without
    `#target`, `check/scenario` for a client case (its check in one scenario), the check."""
    names = [key]
    parts = key_parts(key)
    if parts:
        where, _, scenario = parts
        names.append(where + scenario)
        if scenario:
            names.append(check + scenario)
    names.append(check)
    return list(dict.fromkeys(names))


def load(path: Path) -> Baseline:
    """Read and validate a baseline file; every problem is a `BaselineError` with a one-line message."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise BaselineError(f"the baseline {path} is not JSON: {exc}") from None
    from conformance import schemas

    problems = schemas.errors(SCHEMA_ID, None, data, limit=3)
    if problems:
        raise BaselineError(f"the baseline {path} is malformed: {'; '.join(problems)}")
    entries: dict[str, str] = {}
    for entry in data["expected_failures"]:
        if entry["case"] in entries:
            raise BaselineError(f"the baseline {path} lists {entry['case']!r} twice")
        entries[entry["case"]] = entry["reason"]
    return Baseline(entries, str(path), hashlib.sha256(raw).hexdigest())


def apply(report: dict[str, Any], baseline: Baseline) -> dict[str, Any]:
    """Rewrite the verdicts of listed cases in place, record the baseline in the footer, refresh totals."""
    used: set[str] = set()
    for case in report["cases"]:
        entry = baseline.match(case)
        if entry is None:
            continue
        used.add(entry)
        reason = baseline.entries[entry]
        original = case["verdict"]
        case["baseline"] = {"entry": entry, "reason": reason, "verdict": original}
        now = baselined(original)
        if now is not None:
            case["verdict"] = str(now)
        if now == Verdict.XPASS:
            note = f" ({case['message']})" if case["message"] else ""
            case["message"] = (
                f"stale baseline entry {entry!r}: the case passes now; remove or narrow the entry "
                f"(its reason: {reason}){note}"
            )
    report["footer"]["baseline"] = {
        "path": baseline.path,
        "sha256": baseline.sha256,
        "entries": len(baseline.entries),
        "unmatched": sorted(set(baseline.entries) - used),
    }
    return canonical.refresh(report)


def update(
    report: Report | Mapping[str, Any], previous: Baseline | None = None, *, include_warn: bool = False
) -> dict[str, Any]:
    """A baseline listing the report's failing cases, keeping the reasons of `previous` entries that
    still match one. A check failing in every case of the report gets one entry by its check ID; a
    client check failing in every case of one scenario, one entry `check/scenario`; a check failing in
    some cases only gets one entry per case key, so the passing ones stay guarded."""
    model = coerce(report)
    wanted = EXCUSABLE if include_warn else frozenset({Verdict.FAIL})

    def failing(case: Case) -> bool:
        return case.verdict in wanted or (case.verdict == Verdict.XFAIL and case.own_verdict in wanted)

    entries: dict[str, str] = {}
    uncovered: list[Case] = []
    for case in model.cases:
        if not failing(case):
            continue
        entry = previous.match(case) if previous else None
        if previous and entry is not None:
            entries[entry] = previous.entries[entry]
        else:
            uncovered.append(case)
    # Each case under its broader names (its check; a client case's check in its scenario too).
    by_name: dict[str, list[Case]] = {}
    for case in model.cases:
        for name in names_of(case.key, case.check)[1:]:
            by_name.setdefault(name, []).append(case)
    run_id = model.header.run_id
    for case in uncovered:
        broader = [n for n in reversed(names_of(case.key, case.check)) if n.startswith(case.check + "/")]
        wide = [case.check, *broader]
        name = next((n for n in wide if all(failing(c) for c in by_name[n])), case.key)
        if name in entries:
            continue
        entries[name] = f"{case.own_verdict} in run {run_id}: {case.first_line(160)}".rstrip(": ")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "expected_failures": [{"case": name, "reason": entries[name]} for name in sorted(entries)],
    }

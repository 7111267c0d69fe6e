"""Diff two canonical reports, and merge reports of one suite run split across machines or CI jobs.

Both work on case keys (`check[transport@revision]`, `#target` past the first target), which are
stable across runs, so a diff reads as "what changed in the server" rather than "what changed in the
order of the run". A regression, for a CI gate, is a case that blocks in the newer report (FAIL,
ERROR, XPASS) and did not block, or did not exist, in the older one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.engine.results import with_target
from conformance.model.verdicts import BLOCKING, Verdict
from conformance.reporting import canonical
from conformance.reporting.model import Report, coerce
from conformance.text import readable, visible

#: Options that change what a verdict means: reports that differ in one of them cannot be merged.
VERDICT_OPTIONS = ("protocol", "call_tools", "strict")


@dataclass
class Change:
    key: str
    before: str | None
    after: str | None
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "before": self.before, "after": self.after, "message": self.message}


#: The sections of a diff, in the order they are shown, with their titles. Every case key that differs
#: between the reports is in exactly one of them (`section_of`).
SECTIONS = {
    "new_failures": "new failures",
    "baselined": "now expected (baselined)",
    "fixed": "fixed",
    "changed": "changed verdicts",
    "added": "added cases",
    "removed": "removed cases",
}


def section_of(before: str | None, after: str | None) -> str | None:
    """The one section a case goes in, given its verdict before and after (None: absent), or None when
    it did not change.

    A case that blocks (FAIL, ERROR, XPASS) after and did not block, or did not exist, before is a new
    failure: the regression a gate fails on. One that became XFAIL is *now expected*: its failure was
    put in the baseline, which excuses it, but nothing was fixed. *Fixed* is a case that blocked and now
    is judged without failing (PASS or WARN), or a miss (WARN, XFAIL) that now passes. Every other
    difference (to SKIP, say, which judged nothing) is a changed verdict; new and gone cases are added
    and removed.
    """
    if before == after:
        return None
    if after is not None and after in BLOCKING:
        return "changed" if before is not None and before in BLOCKING else "new_failures"
    if after is None:
        return "removed"
    if after == Verdict.XFAIL:
        return "baselined"
    if before is None:
        return "added"
    if (before in BLOCKING and after in (Verdict.PASS, Verdict.WARN)) or (
        before in (Verdict.WARN, Verdict.XFAIL) and after == Verdict.PASS
    ):
        return "fixed"
    return "changed"


@dataclass
class Diff:
    new_failures: list[Change] = field(default_factory=list)
    baselined: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        return bool(self.new_failures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "regression": self.regression,
            "notes": self.notes,
            **{name: [c.as_dict() for c in getattr(self, name)] for name in SECTIONS},
        }

    def text(self) -> str:
        """One line per section with its count, then one line per case in it; server text (a case's
        message, a note naming an incomplete run's reason) has its control characters escaped, so a
        server's escape sequences cannot reach the terminal."""
        lines = [_terminal(f"note: {note}") for note in self.notes]
        for name, title in SECTIONS.items():
            changes: list[Change] = getattr(self, name)
            lines.append(f"{title}: {len(changes)}")
            for c in changes:
                first = c.message.splitlines()[0][:160] if c.message else ""
                lines.append(
                    _terminal(f"  {c.before or '-':5} -> {c.after or '-':5} {c.key}  {first}".rstrip())
                )
        lines.append("REGRESSION" if self.regression else "no regression")
        return "\n".join(lines)


def _terminal(text: str) -> str:
    """`text` for one terminal line: C0 and C1 controls (escape sequences, line breaks), format
    characters (bidi controls, zero-width characters) and separators as `\\xNN` or `\\uNNNN`
    (`text.visible`)."""
    return visible(readable(text))


def diff(before: Report | Mapping[str, Any], after: Report | Mapping[str, Any]) -> Diff:
    """What changed from `before` to `after`, keyed by case key: each differing case once, in one
    section (`section_of`)."""
    out = Diff()
    old, new = coerce(before, source="the before report"), coerce(after, source="the after report")
    a = {c.key: c for c in old.cases}
    b = {c.key: c for c in new.cases}
    ha, hb = old.header, new.header
    if ha.harness.version != hb.harness.version:
        out.notes.append(f"harness version {ha.harness.version} -> {hb.harness.version}")
    if ha.suites != hb.suites:
        out.notes.append(f"suites {list(ha.suites)} -> {list(hb.suites)}")
    for name, report in (("before", old), ("after", new)):
        if not report.footer.complete:
            out.notes.append(f"the {name} report is incomplete ({report.footer.reason})")
    for key in sorted(a.keys() | b.keys()):
        ca, cb = a.get(key), b.get(key)
        if ca is not None and cb is not None and ca.requirement != cb.requirement:
            # A row renamed or split: the same case now judges another row ID, whatever its verdict.
            out.notes.append(f"{key}: requirement {ca.requirement} -> {cb.requirement}")
        va = str(ca.verdict) if ca is not None else None
        vb = str(cb.verdict) if cb is not None else None
        section = section_of(va, vb)
        if section is None:
            continue
        if section == "new_failures" and cb is not None and cb.unscored:
            section = "changed"  # an unclaimed experimental FAIL fails no run, so it is no regression
        shown = cb if cb is not None else ca
        getattr(out, section).append(Change(key, va, vb, shown.message if shown is not None else ""))
    return out


class MergeError(ValueError):
    """The inputs cannot be one report; the message names the first inconsistency found."""


def merge(inputs: Sequence[tuple[str, Report | Mapping[str, Any]]]) -> dict[str, Any]:
    """One report from several runs of the same suites by the same harness.

    Each pair of inputs must name either the same targets (the run was split by checks: `-k`) or
    disjoint ones (split by target); a case found twice must have the same verdict, and a target found
    twice must identify itself the same way. Disjoint targets are renumbered in input order, and their
    case keys with them. Each input is read through the model (so validated); the merged report is new
    canonical JSON, built from the inputs' own JSON (`Report.data`), and refreshed by `canonical`.
    """
    if len(inputs) < 2:
        raise MergeError("merge needs at least two reports")
    reports = [(name, copy.deepcopy(dict(coerce(r, source=name).data))) for name, r in inputs]
    first_name, first = reports[0]
    for name, report in reports[1:]:
        _same(first_name, first, name, report)
    merged_targets, merged_cases = _join(reports, by_spec=True)
    header = dict(first["header"])
    header["run_id"] = canonical.new_run_id()
    header["started"] = min(r["header"]["started"] for _, r in reports)
    header["command"] = ["mcp-conformance", "merge", *(name for name, _ in reports)]
    selects = [(r["header"].get("options") or {}).get("select", "") for _, r in reports]
    if "options" in header:
        # `-k a,b` selects the union of `-k a` and `-k b`; one unfiltered input means all checks ran.
        words = dict.fromkeys(w for sel in selects for w in sel.split(",") if w)
        header["options"] = {**header["options"], "select": "" if "" in selects else ",".join(words)}
    header["merged_from"] = [
        {
            "run_id": r["header"]["run_id"],
            "select": (r["header"].get("options") or {}).get("select", ""),
            "source": name,
        }
        for name, r in reports
    ]
    complete = all(r["footer"].get("complete") for _, r in reports)
    incomplete = [name for name, r in reports if not r["footer"].get("complete")]
    finished = [r["footer"]["finished"] for _, r in reports if r["footer"].get("finished")]
    merged = {
        "format": first["format"],
        "format_version": first["format_version"],
        "header": header,
        "targets": merged_targets,
        "cases": merged_cases,
        "footer": {
            "finished": max(finished) if finished else canonical.now_iso(),
            "complete": complete,
            "reason": "complete" if complete else "incomplete inputs: " + ", ".join(incomplete),
        },
    }
    baselines = [r["footer"]["baseline"] for _, r in reports if r["footer"].get("baseline")]
    if baselines:
        # An entry matched in one shard is matched: only entries no shard used stay unmatched.
        unmatched = set.intersection(*(set(b["unmatched"]) for b in baselines))
        merged["footer"]["baseline"] = {**baselines[0], "unmatched": sorted(unmatched)}
    return canonical.refresh(merged)


def join_targets(
    inputs: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The targets and cases of reports that each ran other targets of one run (the worker processes
    of `-j`), in input order: every input's targets are new ones, numbered on from the inputs before
    (a target named twice stays two targets, as in one process), and their case keys and `blocked_by`
    with them, by `merge`'s rules. The inputs are canonical JSON as a worker wrote it (not re-read)."""
    return _join([(name, copy.deepcopy(dict(report))) for name, report in inputs], by_spec=False)


def _join(
    reports: list[tuple[str, dict[str, Any]]], *, by_spec: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Targets and cases of `reports` renumbered into one run. `by_spec`: a target named (by its spec)
    in several inputs is one target, its cases joined (`merge`); else every input's targets are new."""
    merged_targets: list[dict[str, Any]] = []
    index_of: dict[str, int] = {}
    identity: dict[str, tuple[str, Any]] = {}
    cases: dict[str, tuple[str, dict[str, Any]]] = {}
    target_sets: list[tuple[str, list[str]]] = []
    for name, report in reports:
        specs = [_named(t) for t in report["targets"]] if by_spec else []
        if len(set(specs)) != len(specs):
            raise MergeError(f"{name} names one target twice; merge cannot tell its cases apart")
        for other, other_specs in target_sets:
            shared = set(specs) & set(other_specs)
            if shared and specs != other_specs:
                raise MergeError(
                    f"{name} and {other} share some targets but not all (or not in the same order): "
                    f"{sorted(shared)[0]!r}; merge needs identical or disjoint targets"
                )
        target_sets.append((name, specs))
        renumber: dict[int, int] = {}
        for target in report["targets"]:
            spec = _named(target) if by_spec else f"{name}#{target['index']}"
            info = (target["transport"], target.get("server_info"))
            if spec in index_of:
                if identity[spec][1] != info:
                    raise MergeError(
                        f"target {spec!r} identifies as {info!r} in {name} but as {identity[spec][1]!r} in "
                        f"{identity[spec][0]}: these are different servers"
                    )
                merged_target = merged_targets[index_of[spec]]
                spoken = list(
                    dict.fromkeys([*merged_target["revisions_spoken"], *target.get("revisions_spoken", [])])
                )
                merged_target["revisions_spoken"] = spoken
                unreachable = merged_target.get("unreachable") or target.get("unreachable")
                merged_target["unreachable"] = unreachable or False  # a client target has none
            else:
                index_of[spec] = len(merged_targets)
                identity[spec] = (name, info)
                spoken = target.get("revisions_spoken", [])
                merged_targets.append({**target, "index": index_of[spec], "revisions_spoken": spoken})
            renumber[target["index"]] = index_of[spec]
        for case in report["cases"]:
            moved = _moved(name, case, renumber)
            seen = cases.get(moved["key"])
            if seen is not None:
                if seen[1]["verdict"] != moved["verdict"]:
                    raise MergeError(
                        f"case {moved['key']} is {seen[1]['verdict']} in {seen[0]} but {moved['verdict']} in "
                        f"{name}: the runs disagree, so no merged verdict would be true"
                    )
                continue
            cases[moved["key"]] = (name, moved)
    return merged_targets, [case for _, case in cases.values()]


def _moved(name: str, case: dict[str, Any], renumber: Mapping[int, int]) -> dict[str, Any]:
    """`case` of input `name` under its target's new index (its key and `blocked_by` with it)."""
    new_index = renumber.get(case["target"])
    if new_index is None:
        raise MergeError(f"{name}: case {case['key']} names target {case['target']}, not listed")
    moved = {**case, "target": new_index, "key": with_target(case["key"], new_index)}
    if case.get("blocked_by"):  # the blocking case is of the same target: renumbered with it
        old = case["blocked_by"]
        new = with_target(old, new_index)
        moved["blocked_by"] = new
        moved["message"] = case["message"].replace(f"blocked by {old}", f"blocked by {new}", 1)
    return moved


def _named(target: Mapping[str, Any]) -> str:
    """What names a target across reports: its spec; a client run's (one client, a target per
    transport) its spec and transport."""
    if target.get("side") == "client":
        return f"{target['spec']} over {target['transport']}"
    return str(target["spec"])


def _same(name_a: str, a: dict[str, Any], name_b: str, b: dict[str, Any]) -> None:
    def refuse(what: str, va: Any, vb: Any) -> None:
        raise MergeError(f"{name_a} and {name_b} differ in {what}: {va!r} vs {vb!r}; refusing to merge")

    for field_name in ("format", "format_version"):
        if a.get(field_name) != b.get(field_name):
            refuse(field_name, a.get(field_name), b.get(field_name))
    ha, hb = a["header"], b["header"]
    if ha["harness"]["version"] != hb["harness"]["version"]:
        refuse("harness version", ha["harness"]["version"], hb["harness"]["version"])
    if sorted(ha.get("suites", [])) != sorted(hb.get("suites", [])):
        refuse("suites", ha.get("suites"), hb.get("suites"))
    oa, ob = ha.get("options") or {}, hb.get("options") or {}
    for option in VERDICT_OPTIONS:
        if oa.get(option) != ob.get(option):
            refuse(f"option {option}", oa.get(option), ob.get(option))
    ba, bb = a["footer"].get("baseline"), b["footer"].get("baseline")
    if (ba or {}).get("sha256") != (bb or {}).get("sha256"):
        refuse("baseline", (ba or {}).get("path"), (bb or {}).get("path"))
